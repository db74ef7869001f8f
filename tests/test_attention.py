"""Tests of course_utils.attention: parity with torch and Hugging Face, numpy = torch, laws, validation.

The references are code nobody here wrote:

- ``torch.nn.functional.scaled_dot_product_attention`` (its boolean ``attn_mask`` is True = may
  attend, the course's convention);
- ``torch.nn.MultiheadAttention`` (``batch_first=True``), whose ``attn_mask`` and
  ``key_padding_mask`` are True = *blocked*, the opposite, and whose ``in_proj_weight`` stacks
  ``[W_q.T; W_k.T; W_v.T]``;
- Hugging Face's DistilBERT eager attention (``eager_attention_forward`` and
  ``DistilBertSelfAttention``), whose additive float mask holds ``0`` or ``finfo(dtype).min``.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from course_utils import attention
from course_utils.attention import AttentionParams

TOL = dict(rtol=0, atol=1e-6)  # the bar; float64 paths are in fact equal to ~1e-15


def _numpy(tensor: torch.Tensor) -> np.ndarray:
    return tensor.detach().numpy()


def _qkv(batch=(2, 3), t_q=4, t_k=6, d_k=5, d_v=3, seed=0):
    rng = np.random.default_rng(seed)
    return (
        rng.standard_normal((*batch, t_q, d_k)),
        rng.standard_normal((*batch, t_k, d_k)),
        rng.standard_normal((*batch, t_k, d_v)),
    )


def _random_mask(shape, seed=0):
    """A random boolean mask in which every query row has at least one allowed key."""
    rng = np.random.default_rng(seed)
    mask = rng.random(shape) < 0.6
    mask[..., 0] = True
    return mask


def _reference_weights(q, k, mask=None):
    """softmax(Q K^T / sqrt(d_k)) with -inf masking, in torch (float64)."""
    scores = q @ k.transpose(-2, -1) / np.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, dim=-1)


# --------------------------------------------------------------------------------------------
# softmax


@pytest.mark.parametrize("axis", [-1, 0, 1, 2])
def test_softmax_matches_torch(axis):
    x = np.random.default_rng(0).standard_normal((3, 4, 5)) * 10
    expected = torch.softmax(torch.from_numpy(x), dim=axis)
    np.testing.assert_allclose(attention.softmax(x, axis=axis), _numpy(expected), rtol=0, atol=1e-15)
    # one algorithm: numpy in and torch in give the same bits
    np.testing.assert_array_equal(_numpy(attention.softmax(torch.from_numpy(x), axis=axis)), attention.softmax(x, axis=axis))


def test_softmax_is_stable_for_large_values_and_keeps_float32():
    np.testing.assert_array_equal(attention.softmax(np.array([1000.0, 1000.0])), [0.5, 0.5])
    big = attention.softmax(np.array([[1000.0, 999.0, -1000.0]], dtype=np.float32))
    assert big.dtype == np.float32 and np.all(np.isfinite(big))
    np.testing.assert_allclose(big[0, :2], [1 / (1 + np.exp(-1)), np.exp(-1) / (1 + np.exp(-1))], rtol=1e-6)
    assert attention.softmax([1, 2, 3]).dtype == np.float64  # a list of ints


def test_softmax_of_equal_minimums_is_uniform_and_of_minus_inf_is_nan():
    lowest = np.finfo(np.float64).min
    np.testing.assert_array_equal(attention.softmax(np.full(4, lowest)), np.full(4, 0.25))
    with np.errstate(invalid="ignore"):
        assert np.all(np.isnan(attention.softmax(np.full(4, -np.inf))))  # documented, as torch
    assert torch.isnan(attention.softmax(torch.full((4,), float("-inf")))).all()


# --------------------------------------------------------------------------------------------
# scaled dot-product attention: parity with torch


def _padding(batch, t_k):
    """``(B, 1, T_k)``: sentence ``b`` has ``min(b + 2, T_k)`` real tokens (``(1, T_k)`` without a batch)."""
    lengths = np.arange(batch[-1] if batch else 1) + 2
    mask = np.arange(t_k) < lengths[:, None, None]
    return mask if batch else mask[0]


MASKS = {
    "no mask": lambda batch, t_q, t_k: None,
    "causal-like (T_q, T_k)": lambda batch, t_q, t_k: np.tril(np.ones((t_q, t_k), bool)),
    "padding (..., 1, T_k)": lambda batch, t_q, t_k: _padding(batch, t_k),
    "random full shape": lambda batch, t_q, t_k: _random_mask((*batch, t_q, t_k), seed=3),
}


@pytest.mark.parametrize("mask_kind", list(MASKS))
@pytest.mark.parametrize("batch, t_q, t_k, d_k, d_v", [((), 3, 3, 4, 4), ((2,), 4, 6, 5, 3), ((2, 3), 5, 2, 8, 7)])
def test_scaled_dot_product_attention_matches_torch(mask_kind, batch, t_q, t_k, d_k, d_v):
    q, k, v = _qkv(batch, t_q, t_k, d_k, d_v, seed=t_q + t_k)
    mask = MASKS[mask_kind](batch, t_q, t_k)
    tq, tk, tv = (torch.from_numpy(a) for a in (q, k, v))
    tmask = None if mask is None else torch.from_numpy(mask)

    expected = torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, attn_mask=tmask)
    expected_weights = _reference_weights(tq, tk, tmask)

    output, weights = attention.scaled_dot_product_attention(q, k, v, mask)
    assert isinstance(output, np.ndarray) and output.shape == (*batch, t_q, d_v)
    assert weights.shape == (*batch, t_q, t_k)
    np.testing.assert_allclose(output, _numpy(expected), **TOL)
    np.testing.assert_allclose(weights, _numpy(expected_weights), **TOL)

    t_output, t_weights = attention.scaled_dot_product_attention(tq, tk, tv, tmask)
    assert isinstance(t_output, torch.Tensor)
    np.testing.assert_allclose(_numpy(t_output), _numpy(expected), **TOL)
    # one algorithm, converted at the edge: numpy in and torch in give the same bits
    np.testing.assert_array_equal(_numpy(t_output), output)
    np.testing.assert_array_equal(_numpy(t_weights), weights)


def test_scaled_dot_product_attention_matches_hugging_face_eager_attention_in_float32():
    from transformers.models.distilbert.modeling_distilbert import eager_attention_forward

    torch.manual_seed(0)
    q, k, v = (torch.randn(2, 3, 7, 16) for _ in range(3))
    keep = torch.ones(2, 7, dtype=torch.bool)
    keep[1, 4:] = False  # the second sentence has 3 padding tokens
    additive = (~keep[:, None, None, :]).float() * torch.finfo(torch.float32).min  # HF's 4-D float mask
    module = torch.nn.Module().eval()
    expected_output, expected_weights = eager_attention_forward(module, q, k, v, additive, scaling=16**-0.5)

    output, weights = attention.scaled_dot_product_attention(q, k, v, keep[:, None, None, :])
    torch.testing.assert_close(weights, expected_weights, rtol=0, atol=1e-7)
    torch.testing.assert_close(output.transpose(1, 2), expected_output, rtol=0, atol=1e-6)
    assert torch.all(weights[1, :, :, 4:] == 0)


def test_fully_masked_row_gives_uniform_weights_not_nan():
    q, k, v = _qkv((2,), 3, 4, 5, 2)
    mask = np.ones((3, 4), bool)
    mask[1] = False  # query 1 may attend to nothing
    for kind in (np.asarray, torch.from_numpy):
        output, weights = attention.scaled_dot_product_attention(kind(q), kind(k), kind(v), kind(mask))
        weights, output = np.asarray(weights), np.asarray(output)
        np.testing.assert_array_equal(weights[:, 1], np.full((2, 4), 0.25))
        np.testing.assert_allclose(output[:, 1], v.mean(axis=1), rtol=0, atol=1e-15)


def test_float32_in_float32_out_and_gradients_flow():
    q, k, v = (a.astype(np.float32) for a in _qkv())
    output, weights = attention.scaled_dot_product_attention(q, k, v)
    assert output.dtype == np.float32 and weights.dtype == np.float32

    tq, tk, tv = (torch.from_numpy(a).double().requires_grad_() for a in _qkv((2,), 3, 4, 3, 2))
    mask = torch.from_numpy(_random_mask((3, 4)))
    assert torch.autograd.gradcheck(
        lambda q, k, v: attention.scaled_dot_product_attention(q, k, v, mask)[0], (tq, tk, tv)
    )


def test_dropout_is_applied_to_the_weights_and_returned():
    q, k, v = _qkv()
    mask = _random_mask((4, 6))
    plain_output, plain_weights = attention.scaled_dot_product_attention(q, k, v, mask)
    halve = lambda w: w * 0.5  # noqa: E731
    output, weights = attention.scaled_dot_product_attention(q, k, v, mask, dropout=halve)
    np.testing.assert_allclose(weights, plain_weights * 0.5, rtol=0, atol=1e-15)
    np.testing.assert_allclose(output, plain_output * 0.5, rtol=0, atol=1e-15)

    tq, tk, tv = (torch.from_numpy(a) for a in (q, k, v))
    drop = torch.nn.Dropout(p=0.5).train()
    torch.manual_seed(7)
    output, weights = attention.scaled_dot_product_attention(tq, tk, tv, torch.from_numpy(mask), dropout=drop)
    torch.manual_seed(7)
    expected_weights = drop(torch.from_numpy(plain_weights))
    torch.testing.assert_close(weights, expected_weights)
    torch.testing.assert_close(output, expected_weights @ tv)
    assert (weights == 0).sum() > (plain_weights == 0).sum()  # dropout did drop something


# --------------------------------------------------------------------------------------------
# Heads


def test_split_heads_gives_each_head_its_slice_of_every_token():
    x = np.arange(2 * 3 * 8, dtype=np.float64).reshape(2, 3, 8)
    heads = attention.split_heads(x, 4)
    assert heads.shape == (2, 4, 3, 2)
    for b in range(2):
        for h in range(4):
            for t in range(3):
                np.testing.assert_array_equal(heads[b, h, t], x[b, t, 2 * h : 2 * h + 2])
    np.testing.assert_array_equal(attention.merge_heads(heads), x)
    t_heads = attention.split_heads(torch.from_numpy(x), 4)
    np.testing.assert_array_equal(_numpy(t_heads), heads)


def test_split_heads_is_a_view_in_torch():
    x = torch.randn(2, 5, 12)
    heads = attention.split_heads(x, 3)
    assert heads.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
    assert heads.shape == (2, 3, 5, 4)
    torch.testing.assert_close(heads, x.view(2, 5, 3, 4).transpose(1, 2), rtol=0, atol=0)


def test_split_and_merge_heads_accept_any_leading_axes():
    x = np.random.default_rng(0).standard_normal((5, 6))  # (T, D), no batch
    assert attention.split_heads(x, 2).shape == (2, 5, 3)
    np.testing.assert_array_equal(attention.merge_heads(attention.split_heads(x, 2)), x)
    y = np.random.default_rng(0).standard_normal((2, 3, 5, 6))  # (B1, B2, T, D)
    np.testing.assert_array_equal(attention.merge_heads(attention.split_heads(y, 3)), y)


# --------------------------------------------------------------------------------------------
# Multi-head attention: parity with torch.nn.MultiheadAttention and Hugging Face


def _torch_mha(d_model, n_heads, seed):
    torch.manual_seed(seed)
    module = torch.nn.MultiheadAttention(d_model, n_heads, batch_first=True, dtype=torch.float64)
    with torch.no_grad():  # torch initialises the biases to 0: make them count
        module.in_proj_bias.uniform_(-0.5, 0.5)
        module.out_proj.bias.uniform_(-0.5, 0.5)
    return module.eval()


@pytest.mark.parametrize("d_model, n_heads", [(4, 1), (8, 2), (12, 4), (6, 6)])
@pytest.mark.parametrize("mask_kind", ["none", "causal", "padding"])
def test_multi_head_attention_matches_torch_multihead_attention(d_model, n_heads, mask_kind):
    module = _torch_mha(d_model, n_heads, seed=d_model + n_heads)
    params = AttentionParams.from_torch_multihead(module).to_numpy()
    batch, seq_len = 3, 5
    x = np.random.default_rng(d_model).standard_normal((batch, seq_len, d_model))
    tx = torch.from_numpy(x)
    mask = torch_kwargs = None
    if mask_kind == "causal":
        mask = np.tril(np.ones((seq_len, seq_len), bool))
        torch_kwargs = dict(attn_mask=torch.from_numpy(~mask))  # torch: True = blocked
    elif mask_kind == "padding":
        lengths = np.array([5, 3, 1])
        keep = np.arange(seq_len) < lengths[:, None]  # (B, T)
        mask = keep[:, None, None, :]
        torch_kwargs = dict(key_padding_mask=torch.from_numpy(~keep))
    expected, expected_weights = module(
        tx, tx, tx, need_weights=True, average_attn_weights=False, **(torch_kwargs or {})
    )

    output, weights = attention.multi_head_attention(x, params, n_heads, mask)
    assert output.shape == (batch, seq_len, d_model) and weights.shape == (batch, n_heads, seq_len, seq_len)
    np.testing.assert_allclose(output, _numpy(expected), **TOL)
    np.testing.assert_allclose(weights, _numpy(expected_weights), **TOL)

    # The torch path, reading the module's own parameters (views: gradients reach the module).
    tparams = AttentionParams.from_torch_multihead(module)
    t_output, t_weights = attention.multi_head_attention(
        tx, tparams, n_heads, None if mask is None else torch.from_numpy(mask)
    )
    np.testing.assert_allclose(_numpy(t_output), _numpy(expected), **TOL)
    np.testing.assert_allclose(_numpy(t_output), output, rtol=0, atol=1e-13)
    t_output.sum().backward()
    assert module.in_proj_weight.grad is not None and module.out_proj.weight.grad.abs().sum() > 0


def test_to_torch_multihead_round_trips_and_computes_the_same():
    params = AttentionParams.random(8, seed=3)
    module = params.to_torch_multihead(n_heads=2)
    back = AttentionParams.from_torch_multihead(module).to_numpy()
    for name in ("W_q", "b_q", "W_k", "b_k", "W_v", "b_v", "W_o", "b_o"):
        np.testing.assert_array_equal(getattr(back, name), getattr(params, name))
    x = np.random.default_rng(0).standard_normal((2, 4, 8))
    tx = torch.from_numpy(x)
    expected, _ = module(tx, tx, tx)
    np.testing.assert_allclose(attention.multi_head_attention(x, params, 2)[0], _numpy(expected), **TOL)
    np.testing.assert_array_equal(_numpy(params.to_torch().W_q), params.W_q)


@pytest.mark.parametrize("attn_implementation", ["eager", "sdpa"])
def test_multi_head_attention_matches_hugging_face_distilbert_self_attention(attn_implementation):
    from transformers import DistilBertConfig
    from transformers.models.distilbert.modeling_distilbert import DistilBertSelfAttention

    config = DistilBertConfig(dim=16, n_heads=4, attention_dropout=0.0)
    config._attn_implementation = attn_implementation
    torch.manual_seed(0)
    layer = DistilBertSelfAttention(config).eval()
    x = torch.randn(2, 6, 16)
    keep = torch.ones(2, 6, dtype=torch.bool)
    keep[0, 4:] = False
    additive = (~keep[:, None, None, :]).float() * torch.finfo(torch.float32).min
    expected = layer(x, additive if attn_implementation == "eager" else keep[:, None, None, :])[0]

    params = AttentionParams.from_linears(layer.q_lin, layer.k_lin, layer.v_lin, layer.out_lin)
    assert params.W_q.data_ptr() == layer.q_lin.weight.data_ptr()  # a view, no copy
    output, _ = attention.multi_head_attention(x, params, 4, keep[:, None, None, :])
    torch.testing.assert_close(output, expected, rtol=0, atol=1e-6)


def test_attention_param_count_matches_torch():
    for d_model, n_heads in [(4, 1), (8, 2), (768, 12)]:
        module = torch.nn.MultiheadAttention(d_model, n_heads)
        assert attention.attention_param_count(d_model) == sum(p.numel() for p in module.parameters())
        assert attention.attention_param_count(d_model, bias=False) == 4 * d_model * d_model


def test_random_params_are_seeded():
    a, b, c = AttentionParams.random(6, 0), AttentionParams.random(6, 0), AttentionParams.random(6, 1)
    np.testing.assert_array_equal(a.W_v, b.W_v)
    assert not np.array_equal(a.W_v, c.W_v)
    assert np.all(np.abs(a.W_q) <= 1 / np.sqrt(6))
    assert not AttentionParams.random(6, 0, bias=False).b_o.any()
    assert a.d_model == 6


# --------------------------------------------------------------------------------------------
# Laws (hypothesis)

values = st.floats(min_value=-20, max_value=20, allow_nan=False, allow_infinity=False)


@st.composite
def attention_problems(draw):
    t_q, t_k, d_k, d_v = (draw(st.integers(1, 6)) for _ in range(4))
    batch = draw(st.sampled_from([(), (2,), (1, 3)]))
    q = draw(arrays(np.float64, (*batch, t_q, d_k), elements=values))
    k = draw(arrays(np.float64, (*batch, t_k, d_k), elements=values))
    v = draw(arrays(np.float64, (*batch, t_k, d_v), elements=values))
    mask = draw(arrays(np.bool_, (*batch, t_q, t_k)))
    return q, k, v, mask


@settings(max_examples=60, deadline=None)
@given(attention_problems())
def test_weights_are_a_distribution_and_masked_keys_get_exactly_zero(problem):
    q, k, v, mask = problem
    for m in (None, mask):
        output, weights = attention.scaled_dot_product_attention(q, k, v, m)
        assert np.all(weights >= 0) and np.all(np.isfinite(output))
        np.testing.assert_allclose(weights.sum(axis=-1), 1.0, rtol=0, atol=1e-12)
    has_allowed = mask.any(axis=-1, keepdims=True)
    assert np.all(weights[~mask & has_allowed] == 0.0)
    np.testing.assert_allclose(weights[~has_allowed[..., 0]], 1.0 / k.shape[-2], rtol=0, atol=1e-12)
    _, t_weights = attention.scaled_dot_product_attention(*(torch.from_numpy(a) for a in problem))
    assert torch.all(t_weights[torch.from_numpy(~mask & has_allowed)] == 0.0)


@settings(max_examples=40, deadline=None)
@given(
    seq_len=st.integers(1, 7),
    n_heads=st.sampled_from([1, 2, 4]),
    seed=st.integers(0, 2**16),
    permutation_seed=st.integers(0, 2**16),
)
def test_multi_head_attention_is_permutation_equivariant(seq_len, n_heads, seed, permutation_seed):
    """Without positions, attention has no idea of order: permuting the tokens permutes the outputs."""
    d_model = 8
    params = AttentionParams.random(d_model, seed)
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((2, seq_len, d_model))
    keep = _random_mask((2, 1, 1, seq_len), seed=seed)
    perm = np.random.default_rng(permutation_seed).permutation(seq_len)
    output, weights = attention.multi_head_attention(x, params, n_heads, keep)
    p_output, p_weights = attention.multi_head_attention(x[:, perm], params, n_heads, keep[..., perm])
    np.testing.assert_allclose(p_output, output[:, perm], rtol=0, atol=1e-12)
    np.testing.assert_allclose(p_weights, weights[:, :, perm][:, :, :, perm], rtol=0, atol=1e-12)


@settings(max_examples=40, deadline=None)
@given(
    batch=st.integers(1, 3),
    seq_len=st.integers(1, 5),
    n_heads=st.integers(1, 4),
    d_head=st.integers(1, 4),
    seed=st.integers(0, 2**16),
)
def test_split_and_merge_heads_are_inverse(batch, seq_len, n_heads, d_head, seed):
    x = np.random.default_rng(seed).standard_normal((batch, seq_len, n_heads * d_head))
    heads = attention.split_heads(x, n_heads)
    assert heads.shape == (batch, n_heads, seq_len, d_head)
    np.testing.assert_array_equal(attention.merge_heads(heads), x)
    np.testing.assert_array_equal(attention.split_heads(attention.merge_heads(heads), n_heads), heads)
    tx = torch.from_numpy(x)
    torch.testing.assert_close(attention.merge_heads(attention.split_heads(tx, n_heads)), tx, rtol=0, atol=0)


# --------------------------------------------------------------------------------------------
# Validation: messages a learner can act on


def test_scaled_dot_product_attention_rejects_bad_shapes():
    sdpa = attention.scaled_dot_product_attention
    with pytest.raises(ValueError, match=r"expected keys of shape \(\.\.\., T_k, d_k=8\), got \(2, 5, 4\)"):
        sdpa(np.ones((2, 3, 8)), np.ones((2, 5, 4)), np.ones((2, 5, 2)))
    with pytest.raises(ValueError, match=r"expected values of shape \(\.\.\., T_k=5, d_v\), got \(2, 4, 2\)"):
        sdpa(np.ones((2, 3, 8)), np.ones((2, 5, 8)), np.ones((2, 4, 2)))
    with pytest.raises(ValueError, match=r"expected queries of shape \(\.\.\., T_q, d_k\), got \(8,\)"):
        sdpa(np.ones(8), np.ones((5, 8)), np.ones((5, 2)))
    with pytest.raises(ValueError, match="do not broadcast"):
        sdpa(np.ones((2, 3, 8)), np.ones((3, 5, 8)), np.ones((3, 5, 2)))
    with pytest.raises(TypeError, match="expected keys to be a numeric array, got str"):
        sdpa(np.ones((3, 8)), "keys", np.ones((5, 2)))


def test_scaled_dot_product_attention_rejects_bad_masks():
    q, k, v = _qkv((2,), 3, 4, 5, 2)
    with pytest.raises(TypeError, match=r"expected a boolean mask \(True = may attend\), got dtype float64"):
        attention.scaled_dot_product_attention(q, k, v, np.ones((3, 4)))
    with pytest.raises(TypeError, match="got dtype torch.int64"):
        attention.scaled_dot_product_attention(*(torch.from_numpy(a) for a in (q, k, v)), torch.ones(3, 4).long())
    with pytest.raises(
        ValueError,
        match=r"expected mask of shape \(\.\.\., T_q, T_k\) broadcastable to the scores "
        r"\(2, 3, 4\), got \(4, 3\)",
    ):
        attention.scaled_dot_product_attention(q, k, v, np.ones((4, 3), bool))


def test_numpy_and_torch_cannot_be_mixed():
    q, k, v = _qkv((2,), 3, 4, 5, 2)
    with pytest.raises(TypeError, match="do not mix numpy and torch"):
        attention.scaled_dot_product_attention(torch.from_numpy(q), k, v)
    with pytest.raises(TypeError, match="do not mix numpy and torch"):
        attention.scaled_dot_product_attention(q, torch.from_numpy(k), v)
    params = AttentionParams.random(4)
    with pytest.raises(TypeError, match=r"params\.to_torch\(\)"):
        attention.multi_head_attention(torch.ones(1, 2, 4, dtype=torch.float64), params, 2)
    with pytest.raises(TypeError, match="all numpy arrays or all torch tensors"):
        AttentionParams(**{**params.__dict__, "W_q": torch.from_numpy(params.W_q)})


def test_heads_and_params_reject_bad_input():
    with pytest.raises(ValueError, match=r"D=10 \(last axis of x, shape \(2, 3, 10\)\) to be divisible by n_heads=4"):
        attention.split_heads(np.ones((2, 3, 10)), 4)
    with pytest.raises(ValueError, match="expected n_heads to be a positive integer, got 0"):
        attention.split_heads(np.ones((2, 3, 10)), 0)
    with pytest.raises(ValueError, match="expected n_heads to be a positive integer, got 2.0"):
        attention.split_heads(np.ones((2, 3, 10)), 2.0)
    with pytest.raises(ValueError, match=r"expected x of shape \(B, H, T, d_head\), got \(3, 4\)"):
        attention.merge_heads(np.ones((3, 4)))
    params = AttentionParams.random(4)
    with pytest.raises(ValueError, match=r"expected x of shape \(B, T, D=4\), got \(2, 3, 5\)"):
        attention.multi_head_attention(np.ones((2, 3, 5)), params, 2)
    with pytest.raises(ValueError, match=r"expected W_k of shape \(D, D\)=\(4, 4\), got \(4, 3\)"):
        AttentionParams(**{**params.__dict__, "W_k": np.ones((4, 3))})
    with pytest.raises(ValueError, match=r"expected b_o of shape \(D,\)=\(4,\), got \(3,\)"):
        AttentionParams(**{**params.__dict__, "b_o": np.ones(3)})
    with pytest.raises(TypeError, match="expected params to be an AttentionParams, got dict"):
        attention.multi_head_attention(np.ones((2, 3, 4)), params.__dict__, 2)
    with pytest.raises(ValueError, match="expected d_model to be a positive integer"):
        AttentionParams.random(0)


def test_numpy_is_converted_at_the_edge_sharing_memory_where_it_can():
    x = np.arange(2 * 3 * 8, dtype=np.float64).reshape(2, 3, 8)
    heads = attention.split_heads(x, 4)
    assert isinstance(heads, np.ndarray) and np.shares_memory(heads, x)  # a view, as np.swapaxes gives
    assert np.shares_memory(attention.merge_heads(heads), x)
    read_only = x.copy()
    read_only.flags.writeable = False
    reversed_rows = x[:, ::-1]  # negative strides: torch cannot share them, so they are copied
    for value in (read_only, reversed_rows, x.tolist()):
        np.testing.assert_array_equal(attention.split_heads(value, 2), attention.split_heads(np.array(value), 2))
    params = AttentionParams.random(8)
    with pytest.raises(TypeError, match="expected mask to be a numpy array like x, got a torch tensor"):
        attention.multi_head_attention(x, params, 2, torch.ones(3, 3, dtype=torch.bool))
    output, weights = attention.multi_head_attention(x, params, 2, np.tri(3, dtype=bool))
    t_output, t_weights = attention.multi_head_attention(torch.from_numpy(x), params.to_torch(), 2,
                                                         torch.from_numpy(np.tri(3, dtype=bool)))
    np.testing.assert_array_equal(t_output.numpy(), output)  # one algorithm, the same bits either way
    np.testing.assert_array_equal(t_weights.numpy(), weights)
