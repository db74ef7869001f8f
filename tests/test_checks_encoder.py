"""Tests of the checkers of lesson 06: check_layer_norm, check_encoder_block, check_pre_ln_block,
check_encoder_layer_param_count;
and of their references in course_utils.encoder against torch and the encoder's own modules.

Every correct version passes (numpy in several styles, torch, float32 arithmetic, nested lists);
the wrong versions a learner writes are rejected with the hint naming the mistake; the stub prints
one line; odd answers never crash the checker.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from course_utils import checks, encoder_pieces
from course_utils.encoder import EncoderConfig, TransformerBlock
from course_utils.prenorm import PreLNTransformerBlock
from tests.checker_cases import rejects as _rejects
from tests.checker_cases import stub as _stub

# --------------------------------------------------------------------------------------------
# The references


@settings(max_examples=25, deadline=None)
@given(
    shape=st.sampled_from([(5,), (3, 4), (2, 3, 7), (1, 1, 2)]),
    offset=st.floats(-100, 100),
    scale=st.floats(1e-3, 100),
    seed=st.integers(0, 1000),
)
def test_layer_norm_equals_torch_layer_norm(shape, offset, scale, seed):
    rng = np.random.default_rng(seed)
    x = offset + scale * rng.standard_normal(shape)
    gamma, beta = rng.standard_normal(shape[-1]), rng.standard_normal(shape[-1])
    layer = torch.nn.LayerNorm(shape[-1], eps=1e-12, dtype=torch.float64)
    with torch.no_grad():
        layer.weight.copy_(torch.from_numpy(gamma))
        layer.bias.copy_(torch.from_numpy(beta))
        expected = layer(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(encoder_pieces.layer_norm(x, gamma, beta), expected, rtol=1e-9, atol=1e-9)


def test_layer_norm_of_a_constant_vector_is_beta_and_bad_shapes_are_refused():
    beta = np.array([0.5, -1.0, 2.0])
    np.testing.assert_array_equal(encoder_pieces.layer_norm(np.full(3, 7.0), np.ones(3), beta), beta)
    with pytest.raises(ValueError, match=r"expected x of shape \(..., D\) and gamma, beta of shape \(D,\)"):
        encoder_pieces.layer_norm(np.zeros((2, 3)), np.ones(4), np.zeros(4))


def test_encoder_block_is_the_transformer_block():
    torch.manual_seed(0)
    block = TransformerBlock(EncoderConfig(dim=8, n_heads=2, hidden_dim=32, n_layers=1)).eval()
    x = torch.randn(2, 5, 8)
    with torch.no_grad():
        expected, _ = block(x)
        got = encoder_pieces.encoder_block(
            x, lambda h: block.attention(h)[0], block.ffn, block.sa_layer_norm, block.output_layer_norm
        )
    torch.testing.assert_close(got, expected, rtol=0, atol=0)


@pytest.mark.parametrize("d_model, d_ff", [(4, 16), (6, 10), (128, 512), (768, 3072)])
def test_encoder_layer_param_count_counts_the_transformer_block(d_model, d_ff):
    with torch.device("meta"):
        block = TransformerBlock(EncoderConfig(dim=d_model, n_heads=1, hidden_dim=d_ff, n_layers=1))
    assert encoder_pieces.encoder_layer_param_count(d_model, d_ff) == sum(p.numel() for p in block.parameters())


def test_distilbert_base_layer_count():
    assert encoder_pieces.encoder_layer_param_count(768, 3072) == 7_087_872


@pytest.mark.parametrize("bad", [0, -1, 2.0, True, "4"])
def test_encoder_layer_param_count_refuses_bad_sizes(bad):
    with pytest.raises(ValueError, match="expected d_model to be a positive integer"):
        encoder_pieces.encoder_layer_param_count(bad, 16)


# --------------------------------------------------------------------------------------------
# check_layer_norm

LAYER_NORM_PASS = "✓ layer_norm: all 9 cases pass.\n"


def _ln_numpy(x, gamma, beta, eps=1e-12):
    mean = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True)
    return gamma * (x - mean) / np.sqrt(var + eps) + beta


def _ln_by_hand(x, gamma, beta, eps=1e-12):
    d = x.shape[-1]
    mean = x.sum(axis=-1, keepdims=True) / d
    var = ((x - mean) ** 2).sum(axis=-1, keepdims=True) / d
    return gamma * ((x - mean) / (var + eps) ** 0.5) + beta


def _ln_moments(x, gamma, beta, eps=1e-12):
    """The variance as E[x^2] - E[x]^2: correct, if less stable."""
    mean = x.mean(-1, keepdims=True)
    var = (x * x).mean(-1, keepdims=True) - mean**2
    return gamma * (x - mean) / np.sqrt(var + eps) + beta


def _ln_torch(x, gamma, beta, eps=1e-12):
    x = torch.as_tensor(x)
    mean = x.mean(-1, keepdim=True)
    var = x.var(-1, unbiased=False, keepdim=True)
    return torch.as_tensor(gamma) * (x - mean) / torch.sqrt(var + eps) + torch.as_tensor(beta)


def _ln_torch_functional(x, gamma, beta, eps=1e-12):
    x = torch.as_tensor(x)
    return torch.nn.functional.layer_norm(x, x.shape[-1:], torch.as_tensor(gamma), torch.as_tensor(beta), eps)


def _ln_rows(x, gamma, beta, eps=1e-12):
    """Row by row, in plain Python lists."""
    flat = np.asarray(x, dtype=float).reshape(-1, x.shape[-1])
    rows = []
    for row in flat:
        mean = sum(row) / len(row)
        var = sum((v - mean) ** 2 for v in row) / len(row)
        rows.append([g * (v - mean) / math.sqrt(var + eps) + b for v, g, b in zip(row, gamma, beta)])
    return np.array(rows).reshape(x.shape)


def _ln_float32(x, gamma, beta, eps=1e-12):
    x = np.asarray(x, dtype=np.float32)
    return _ln_numpy(x, gamma.astype(np.float32), beta.astype(np.float32), np.float32(eps))


CORRECT_LAYER_NORMS = {
    "numpy mean and var": _ln_numpy,
    "sums divided by D": _ln_by_hand,
    "E[x^2] - E[x]^2": _ln_moments,
    "torch": _ln_torch,
    "torch.nn.functional.layer_norm": _ln_torch_functional,
    "python loops over rows": _ln_rows,
    "float32 arithmetic": _ln_float32,
    "the package's reference": encoder_pieces.layer_norm,
}


@pytest.mark.parametrize("implementation", CORRECT_LAYER_NORMS.values(), ids=CORRECT_LAYER_NORMS.keys())
def test_check_layer_norm_accepts_correct_implementations(implementation, capsys):
    assert checks.check_layer_norm(implementation) is None
    assert capsys.readouterr().out == LAYER_NORM_PASS


def _centred(x):
    return x - x.mean(-1, keepdims=True)


def _ignore_warnings(fn):
    def wrapped(*args):
        with np.errstate(divide="ignore", invalid="ignore"):
            return fn(*args)

    return wrapped


WRONG_LAYER_NORMS = {
    "unbiased variance, numpy ddof=1": (
        lambda x, g, b, eps=1e-12: g * _centred(x) / np.sqrt(x.var(-1, ddof=1, keepdims=True) + eps) + b,
        "the variance is the unbiased one",
    ),
    "unbiased variance, torch's default": (
        lambda x, g, b, eps=1e-12: (
            lambda t: torch.as_tensor(g) * (t - t.mean(-1, keepdim=True)) / torch.sqrt(t.var(-1, keepdim=True) + eps)
            + torch.as_tensor(b)
        )(torch.as_tensor(x)),
        "unbiased=False",
    ),
    "normalised over axis 0": (
        lambda x, g, b, eps=1e-12: g * (x - x.mean(0, keepdims=True)) / np.sqrt(x.var(0, keepdims=True) + eps) + b,
        "each column is normalised",
    ),
    "normalised over the whole array": (
        lambda x, g, b, eps=1e-12: g * (x - x.mean()) / np.sqrt(x.var() + eps) + b,
        "over the whole array",
    ),
    "no keepdims": (
        lambda x, g, b, eps=1e-12: g * (x - x.mean(-1)) / np.sqrt(x.var(-1) + eps) + b,
        "keepdims=True",
    ),
    "eps outside the square root": (
        lambda x, g, b, eps=1e-12: g * _centred(x) / (np.sqrt(x.var(-1, keepdims=True)) + eps) + b,
        "eps is added to the standard deviation, outside the square root",
    ),
    "eps argument ignored": (
        lambda x, g, b, eps=1e-12: _ln_numpy(x, g, b),
        "the eps you were given is not used",
    ),
    "torch's default eps": (
        lambda x, g, b, eps=1e-5: _ln_numpy(x, g, b, eps),
        "the default eps is not BERT's",
    ),
    "no eps": (
        _ignore_warnings(lambda x, g, b, eps=1e-12: g * _centred(x) / np.sqrt(x.var(-1, keepdims=True)) + b),
        "on a constant vector the variance is 0",
    ),
    "standard deviation instead of the variance": (
        lambda x, g, b, eps=1e-12: g * _centred(x) / np.sqrt(x.std(-1, keepdims=True) + eps) + b,
        "the standard deviation is used where the variance belongs",
    ),
    "no square root": (
        lambda x, g, b, eps=1e-12: g * _centred(x) / (x.var(-1, keepdims=True) + eps) + b,
        "take its square root",
    ),
    "no mean subtraction": (
        lambda x, g, b, eps=1e-12: g * x / np.sqrt(x.var(-1, keepdims=True) + eps) + b,
        "the mean is not subtracted",
    ),
    "no gamma, no beta": (
        lambda x, g, b, eps=1e-12: _centred(x) / np.sqrt(x.var(-1, keepdims=True) + eps),
        "gamma and beta are missing",
    ),
    "gamma and beta swapped": (lambda x, g, b, eps=1e-12: _ln_numpy(x, b, g, eps), "gamma and beta are swapped"),
    "no beta": (lambda x, g, b, eps=1e-12: _ln_numpy(x, g, 0 * b, eps), "beta is missing"),
    "no gamma": (lambda x, g, b, eps=1e-12: _ln_numpy(x, 1 + 0 * g, b, eps), "gamma is missing"),
    "reduces the last axis": (
        lambda x, g, b, eps=1e-12: (_ln_numpy(x, g, b, eps)).sum(-1),
        "the result should have the shape of x|expected the result of shape",
    ),
}


@pytest.mark.parametrize("implementation, hint", WRONG_LAYER_NORMS.values(), ids=WRONG_LAYER_NORMS.keys())
def test_check_layer_norm_rejects_wrong_versions_with_their_hint(implementation, hint, capsys):
    _rejects(checks.check_layer_norm, implementation, hint, capsys)


def test_check_layer_norm_stub_and_odd_answers(capsys):
    assert checks.check_layer_norm(_stub) is None
    assert "layer_norm: not attempted yet" in capsys.readouterr().out
    _rejects(checks.check_layer_norm, lambda x, g, b, eps=1e-12: "normalised", "numeric array", capsys)
    _rejects(checks.check_layer_norm, lambda x, g, b, eps=1e-12: None, "forget the `return`", capsys)
    with pytest.raises(AssertionError, match="layer_norm raised TypeError"):
        checks.check_layer_norm(lambda x, g: x)
    with pytest.raises(TypeError, match="expected the function layer_norm itself"):
        checks.check_layer_norm(_ln_numpy(np.ones((2, 2)), np.ones(2), np.zeros(2)))


# --------------------------------------------------------------------------------------------
# check_encoder_block

BLOCK_PASS = "✓ encoder_block: all 4 cases pass.\n"


def _block_steps(x, attention, feed_forward, norm1, norm2):
    attended = attention(x)
    h = norm1(x + attended)
    transformed = feed_forward(h)
    return norm2(h + transformed)


def _block_torch(x, attention, feed_forward, norm1, norm2):
    """Converting to torch and back around numpy sub-layers: correct too."""
    h = torch.as_tensor(norm1(x + attention(x)))
    return torch.as_tensor(norm2(h.numpy() + feed_forward(h.numpy())))


CORRECT_BLOCKS = {
    "one line per step": _block_steps,
    "torch tensors": _block_torch,
    "float32 result": lambda x, a, f, n1, n2: encoder_pieces.encoder_block(x, a, f, n1, n2).astype(np.float32),
    "the package's reference": encoder_pieces.encoder_block,
}


@pytest.mark.parametrize("implementation", CORRECT_BLOCKS.values(), ids=CORRECT_BLOCKS.keys())
def test_check_encoder_block_accepts_correct_implementations(implementation, capsys):
    assert checks.check_encoder_block(implementation) is None
    assert capsys.readouterr().out == BLOCK_PASS


def _then(first, second):
    return lambda x: second(first(x))


WRONG_BLOCKS = {
    "pre-LN": (
        lambda x, a, f, n1, n2: (lambda h: h + f(n2(h)))(x + a(n1(x))),
        "this is a pre-LN block",
    ),
    "no residuals": (lambda x, a, f, n1, n2: n2(f(n1(a(x)))), "there are no residual connections"),
    "no attention residual": (
        lambda x, a, f, n1, n2: (lambda h: n2(h + f(h)))(n1(a(x))),
        "the attention sub-layer has no residual",
    ),
    "no feed-forward residual": (
        lambda x, a, f, n1, n2: n2(f(n1(x + a(x)))),
        "the feed-forward sub-layer has no residual",
    ),
    "second residual adds x": (
        lambda x, a, f, n1, n2: n2(x + f(n1(x + a(x)))),
        "the second residual adds x",
    ),
    "feed-forward reads x": (
        lambda x, a, f, n1, n2: n2(n1(x + a(x)) + f(x)),
        "feed_forward reads x",
    ),
    "residual after the norm": (
        lambda x, a, f, n1, n2: (lambda h: h + n2(f(h)))(x + n1(a(x))),
        "the residual is added after the LayerNorm",
    ),
    "norms swapped": (
        lambda x, a, f, n1, n2: (lambda h: n1(h + f(h)))(n2(x + a(x))),
        "norm1 and norm2 are swapped",
    ),
    "sub-layers swapped": (
        lambda x, a, f, n1, n2: (lambda h: n2(h + a(h)))(n1(x + f(x))),
        "the sub-layers are in the wrong order",
    ),
    "no last norm": (
        lambda x, a, f, n1, n2: (lambda h: h + f(h))(n1(x + a(x))),
        "the last LayerNorm is missing",
    ),
    "no first norm": (
        lambda x, a, f, n1, n2: (lambda h: n2(h + f(h)))(x + a(x)),
        "the first LayerNorm is missing",
    ),
    "stops after attention": (lambda x, a, f, n1, n2: n1(x + a(x)), "that is h, the output of the attention"),
    "one token only": (lambda x, a, f, n1, n2: encoder_pieces.encoder_block(x, a, f, n1, n2)[..., 0, :], "shape"),
    "something else": (
        lambda x, a, f, n1, n2: 2 * encoder_pieces.encoder_block(x, a, f, n1, n2),
        r"h = norm1\(x \+ attention\(x\)\), then return norm2",
    ),
}


@pytest.mark.parametrize("implementation, hint", WRONG_BLOCKS.values(), ids=WRONG_BLOCKS.keys())
def test_check_encoder_block_rejects_wrong_versions_with_their_hint(implementation, hint, capsys):
    _rejects(checks.check_encoder_block, implementation, hint, capsys)


def test_check_encoder_block_stub_and_errors(capsys):
    assert checks.check_encoder_block(_stub) is None
    assert "encoder_block: not attempted yet" in capsys.readouterr().out
    with pytest.raises(AssertionError, match="(?s)encoder_block raised TypeError.*call them on an array"):
        checks.check_encoder_block(lambda x, a, f, n1, n2: n2(x + a))


def test_the_sub_layers_of_the_cases_are_all_different():
    """Every wrong assembly above is told apart because the pieces differ (norm1 != norm2, ...)."""
    from course_utils.checks.encoder import _pieces

    x = np.random.default_rng(0).standard_normal((5, 4))
    attention, feed_forward, norm1, norm2 = _pieces(4, 1)
    outputs = [attention(x), feed_forward(x), norm1(x), norm2(x), x]
    for i in range(len(outputs)):
        for j in range(i):
            assert not np.allclose(outputs[i], outputs[j])
    assert attention(x[None]).shape == (1, 5, 4)  # batches work


# --------------------------------------------------------------------------------------------
# check_pre_ln_block

PRE_LN_PASS = "✓ pre_ln_block: all 5 cases pass.\n"


def test_pre_ln_block_is_the_pre_ln_transformer_block():
    torch.manual_seed(0)
    block = PreLNTransformerBlock(EncoderConfig(dim=8, n_heads=2, hidden_dim=32, n_layers=1)).eval()
    x = torch.randn(2, 5, 8)
    with torch.no_grad():
        expected, _ = block(x)
        got = encoder_pieces.pre_ln_block(
            x, lambda h: block.attention(h)[0], block.ffn, block.sa_layer_norm, block.output_layer_norm
        )
    torch.testing.assert_close(got, expected, rtol=0, atol=0)


def _pre_ln_steps(x, attention, feed_forward, norm1, norm2):
    """The way the lesson's post-LN code is rewritten, one step a line."""
    normalised = norm1(x)
    h = x + attention(normalised)
    normalised = norm2(h)
    out = h + feed_forward(normalised)
    return out


def _pre_ln_loop(x, attention, feed_forward, norm1, norm2):
    """A loop over (norm, sub-layer) pairs, summing into a new variable."""
    h = x
    for norm, sublayer in ((norm1, attention), (norm2, feed_forward)):
        h = h + sublayer(norm(h))
    return h


def _pre_ln_branches(x, attention, feed_forward, norm1, norm2):
    """The residual written last: branch + stream."""
    h = attention(norm1(x)) + x
    return feed_forward(norm2(h)) + h


def _pre_ln_float32(x, attention, feed_forward, norm1, norm2):
    out = encoder_pieces.pre_ln_block(x, attention, feed_forward, norm1, norm2)
    return out.astype(np.float32) if isinstance(out, np.ndarray) else out.float()


CORRECT_PRE_LN_BLOCKS = {
    "one line per step": _pre_ln_steps,
    "a loop over the sub-layers": _pre_ln_loop,
    "residual written after the branch": _pre_ln_branches,
    "float32 result": _pre_ln_float32,
    "the package's reference": encoder_pieces.pre_ln_block,
}


@pytest.mark.parametrize("implementation", CORRECT_PRE_LN_BLOCKS.values(), ids=CORRECT_PRE_LN_BLOCKS.keys())
def test_check_pre_ln_block_accepts_correct_implementations(implementation, capsys):
    assert checks.check_pre_ln_block(implementation) is None
    assert capsys.readouterr().out == PRE_LN_PASS


def _stream_normalised(x, attention, feed_forward, norm1, norm2):
    """The learner who normalises x in place of the sub-layer's input."""
    x = norm1(x)
    h = x + attention(x)
    h = norm2(h)
    return h + feed_forward(h)


def _numpy_only(x, attention, feed_forward, norm1, norm2):
    """Right on numpy arrays, but np.asarray breaks on a tensor that requires grad... or the modules."""
    x = np.asarray(x)
    h = np.add(x, np.asarray(attention(norm1(x))))
    return h + np.asarray(feed_forward(norm2(h)))


def _pre_ln_residual_in_place(x, attention, feed_forward, norm1, norm2):
    """Right values, but h += ... changes the h that norm2 saved for backward."""
    h = x + attention(norm1(x))
    h += feed_forward(norm2(h))
    return h


def _pre_ln_detached(x, attention, feed_forward, norm1, norm2):
    out = encoder_pieces.pre_ln_block(x, attention, feed_forward, norm1, norm2)
    return out.detach() if isinstance(out, torch.Tensor) else out


def _pre_ln_numpy_back(x, attention, feed_forward, norm1, norm2):
    out = encoder_pieces.pre_ln_block(x, attention, feed_forward, norm1, norm2)
    return out.detach().numpy() if isinstance(out, torch.Tensor) else out


def _pre_ln_branch_detached(x, attention, feed_forward, norm1, norm2):
    """Right values, but the first residual sum is cut from the graph on the way to the second."""
    h = x + attention(norm1(x))
    h = h.detach() if isinstance(h, torch.Tensor) else h
    return h + feed_forward(norm2(h))


WRONG_PRE_LN_BLOCKS = {
    "residual added in place (backward fails)": (
        _pre_ln_residual_in_place, r"case 'torch.*backward fails: one of the variables.*inplace.*h = h \+ feed_forward"),
    "a detached result": (_pre_ln_detached, r"case 'torch.*cut from the autograd graph.*\.detach\(\)"),
    "numpy back for torch": (_pre_ln_numpy_back, r"case 'torch.*returned a numpy array; return a torch tensor"),
    "residual detached inside": (_pre_ln_branch_detached, r"case 'torch.*no gradient reaches the input x"),
    "x += in place": (lambda x, a, f, n1, n2: (x.__iadd__(a(n1(x))), x + f(n2(x)))[1],
                      "changed its input `x` in place"),
    "still post-LN": (encoder_pieces.encoder_block, "this is the post-LN block you started from"),
    "the residual stream normalised": (_stream_normalised, "the residual path carries the normalised x"),
    "each norm twice": (
        lambda x, a, f, n1, n2: (lambda h: n2(h + f(n2(h))))(n1(x + a(n1(x)))),
        "each LayerNorm is applied twice",
    ),
    "the output normalised": (
        lambda x, a, f, n1, n2: (lambda h: n2(h + f(n2(h))))(x + a(n1(x))),
        "the block's output is normalised",
    ),
    "norm after the sub-layer": (
        lambda x, a, f, n1, n2: (lambda h: h + n2(f(h)))(x + n1(a(x))),
        "normalises the sub-layer's output",
    ),
    "no residuals": (lambda x, a, f, n1, n2: f(n2(a(n1(x)))), "there are no residual connections"),
    "no attention residual": (
        lambda x, a, f, n1, n2: (lambda h: h + f(n2(h)))(a(n1(x))),
        "the attention sub-layer has no residual",
    ),
    "no feed-forward residual": (
        lambda x, a, f, n1, n2: f(n2(x + a(n1(x)))),
        "the feed-forward sub-layer has no residual",
    ),
    "second residual adds x": (lambda x, a, f, n1, n2: x + f(n2(x + a(n1(x)))), "the second residual adds x"),
    "feed-forward reads x": (lambda x, a, f, n1, n2: x + a(n1(x)) + f(n2(x)), "feed_forward reads x"),
    "norm1 twice": (lambda x, a, f, n1, n2: (lambda h: h + f(n1(h)))(x + a(n1(x))), "norm2 is never used"),
    "norms swapped": (lambda x, a, f, n1, n2: (lambda h: h + f(n1(h)))(x + a(n2(x))), "norm1 and norm2 are swapped"),
    "sub-layers swapped": (
        lambda x, a, f, n1, n2: (lambda h: h + a(n2(h)))(x + f(n1(x))),
        "the sub-layers are in the wrong order",
    ),
    "stops after attention": (lambda x, a, f, n1, n2: x + a(n1(x)), "that is h, the output of the attention"),
    "one token only": (lambda x, a, f, n1, n2: encoder_pieces.pre_ln_block(x, a, f, n1, n2)[..., 0, :], "shape"),
    "something else": (
        lambda x, a, f, n1, n2: 2 * encoder_pieces.pre_ln_block(x, a, f, n1, n2),
        r"h = x \+ attention\(norm1\(x\)\), then return h \+ feed_forward",
    ),
}


@pytest.mark.parametrize("implementation, hint", WRONG_PRE_LN_BLOCKS.values(), ids=WRONG_PRE_LN_BLOCKS.keys())
def test_check_pre_ln_block_rejects_wrong_versions_with_their_hint(implementation, hint, capsys):
    _rejects(checks.check_pre_ln_block, implementation, hint, capsys)


def test_check_pre_ln_block_refuses_a_numpy_only_version_on_the_torch_case(capsys):
    error = _rejects(checks.check_pre_ln_block, _numpy_only, "use \\+ rather than numpy functions", capsys)
    assert "torch: a batch" in str(error.value)


def test_check_pre_ln_block_stub_and_errors(capsys):
    assert checks.check_pre_ln_block(_stub) is None
    assert "pre_ln_block: not attempted yet" in capsys.readouterr().out
    with pytest.raises(AssertionError, match="(?s)pre_ln_block raised TypeError.*call them on x or h"):
        checks.check_pre_ln_block(lambda x, a, f, n1, n2: x + a)


def test_the_wrong_pre_ln_blocks_all_differ_from_the_right_one_on_every_case():
    """Each mistake the checker names gives other numbers than the reference, on every case: the
    checker cannot accept one of them by chance, and the torch case tells them apart as well."""
    from course_utils.checks.encoder import _PRE_LN_BLOCK, _pieces, _torch_pieces

    rng = np.random.default_rng(1)
    all_args = [(rng.standard_normal((3, 6)), *_pieces(6, 2))]
    all_args.append(_torch_pieces(8, 3))
    for args in all_args:
        with torch.no_grad():
            right = np.asarray(encoder_pieces.pre_ln_block(*args), dtype=np.float64)
            for mistake in _PRE_LN_BLOCK.mistakes:
                wrong = np.asarray(mistake.wrong(*args), dtype=np.float64)
                assert wrong.shape != right.shape or not np.allclose(wrong, right, atol=1e-4), mistake.hint


# --------------------------------------------------------------------------------------------
# check_encoder_layer_param_count

COUNT_PASS = "✓ encoder_layer_param_count: all 6 cases pass.\n"

CORRECT_COUNTS = {
    "by components": lambda d, f: (4 * d * d + 4 * d) + (d * f + f + f * d + d) + 2 * (d + d),
    "factored": lambda d, f: 4 * d * (d + 1) + 2 * d * f + f + 5 * d,
    "numpy integer": lambda d, f: np.int64(encoder_pieces.encoder_layer_param_count(d, f)),
    "the package's reference": encoder_pieces.encoder_layer_param_count,
}


@pytest.mark.parametrize("implementation", CORRECT_COUNTS.values(), ids=CORRECT_COUNTS.keys())
def test_check_encoder_layer_param_count_accepts_correct_implementations(implementation, capsys):
    assert checks.check_encoder_layer_param_count(implementation) is None
    assert capsys.readouterr().out == COUNT_PASS


def _right(d, f):
    return encoder_pieces.encoder_layer_param_count(d, f)


WRONG_COUNTS = {
    "d_ff = 4 d_model assumed": (lambda d, f: _right(d, 4 * d), "do not assume d_ff = 4 \\* d_model"),
    "no linear biases": (lambda d, f: 4 * d * d + 2 * d * f + 4 * d, "did you forget the biases\\?"),
    "no feed-forward biases": (lambda d, f: _right(d, f) - f - d, "the biases of the feed-forward network"),
    "no attention biases": (lambda d, f: _right(d, f) - 4 * d, "biases of the four attention projections"),
    "no LayerNorms": (lambda d, f: 4 * d * d + 4 * d + 2 * d * f + f + d, "forget the two LayerNorms"),
    "one LayerNorm": (lambda d, f: _right(d, f) - 2 * d, "2D too few"),
    "LayerNorms without beta": (lambda d, f: _right(d, f) - 2 * d, "each with a gamma AND a beta"),
    "no biases, no betas": (lambda d, f: 4 * d * d + 2 * d * f + 2 * d, "every bias is missing"),
    "no output projection": (lambda d, f: 3 * d * d + 3 * d + 2 * d * f + f + d + 4 * d, "output projection W_O"),
    "one feed-forward matrix": (lambda d, f: _right(d, f) - d * f - d, "two matrices"),
    "Q, K, V per head of full size": (lambda d, f: _right(d, f) + 3 * d * d, "the heads share"),
    "a string": (lambda d, f: str(_right(d, f)), r"returned a str; return an int\.$"),
    "off by one": (lambda d, f: _right(d, f) + 1, "attention: 4 D x D matrices"),
}


@pytest.mark.parametrize("implementation, hint", WRONG_COUNTS.values(), ids=WRONG_COUNTS.keys())
def test_check_encoder_layer_param_count_rejects_wrong_versions_with_their_hint(implementation, hint, capsys):
    _rejects(checks.check_encoder_layer_param_count, implementation, hint, capsys)


def test_check_encoder_layer_param_count_stub(capsys):
    assert checks.check_encoder_layer_param_count(_stub) is None
    assert "encoder_layer_param_count: not attempted yet" in capsys.readouterr().out


def test_the_wrong_counts_differ_on_the_first_case():
    """The first case (6, 10) tells the known mistakes apart (two of them share a value on purpose)."""
    from course_utils.checks.encoder import _ENCODER_LAYER_PARAM_COUNT

    values = [mistake.wrong(6, 10) for mistake in _ENCODER_LAYER_PARAM_COUNT.mistakes]
    assert len(set(values)) == len(values)
    assert _right(6, 10) not in values
