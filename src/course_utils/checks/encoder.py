"""Checkers of lesson 06: layer normalisation, an encoder block (post-LN, and turned into pre-LN), the
parameters of an encoder layer.

The references are :func:`course_utils.encoder_pieces.layer_norm`, :func:`course_utils.encoder_pieces.encoder_block`,
:func:`course_utils.encoder_pieces.pre_ln_block` and :func:`course_utils.encoder_pieces.encoder_layer_param_count`. Results may be numpy arrays or torch
tensors, in float32 or float64: they are compared by value (a list is refused by the engine,
:func:`course_utils.checks.engine.kind_problem`).
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from .. import attention, encoder, encoder_pieces
from .engine import Case, Exercise, Mistake, Symptom, equal_integers, run_checks, torch_for_torch
from .values import as_float_array, close_values, has_non_finite

# --------------------------------------------------------------------------------------------
# LayerNorm


def _f64(x) -> np.ndarray:
    return np.asarray(x, dtype=np.float64)


def _normalised(x, *, ddof: int = 0, axis=-1, eps: float = 1e-12, eps_outside: bool = False, center: bool = True):
    """``(x - mean) / sqrt(var + eps)`` with a chosen mistake; ``axis=None``: over the whole array."""
    x = _f64(x)
    mean = x.mean(axis=axis, keepdims=True)
    variance = x.var(axis=axis, ddof=ddof, keepdims=True)
    centred = x - mean if center else x
    with np.errstate(divide="ignore", invalid="ignore"):
        return centred / (np.sqrt(variance) + eps if eps_outside else np.sqrt(variance + eps))


def _ln(x, gamma, beta, eps=encoder.LAYER_NORM_EPS, **mistake) -> np.ndarray:
    return _f64(gamma) * _normalised(x, eps=eps, **mistake) + _f64(beta)


def _std_for_variance(x, gamma, beta, eps=encoder.LAYER_NORM_EPS):
    """sqrt(std + eps): the standard deviation put where the variance belongs."""
    x = _f64(x)
    centred = x - x.mean(axis=-1, keepdims=True)
    return _f64(gamma) * centred / np.sqrt(x.std(axis=-1, keepdims=True) + eps) + _f64(beta)


def _no_sqrt(x, gamma, beta, eps=encoder.LAYER_NORM_EPS):
    x = _f64(x)
    centred = x - x.mean(axis=-1, keepdims=True)
    return _f64(gamma) * centred / (x.var(axis=-1, keepdims=True) + eps) + _f64(beta)


def _no_keepdims(x, gamma, beta, eps=encoder.LAYER_NORM_EPS):
    """mean and var without keepdims: on a square matrix they broadcast along the wrong axis."""
    x = _f64(x)
    return _f64(gamma) * (x - x.mean(axis=-1)) / np.sqrt(x.var(axis=-1) + eps) + _f64(beta)




_LAYER_NORM = Exercise(
    name="layer_norm",
    call="layer_norm(x, gamma, beta) or layer_norm(x, gamma, beta, eps) with x of shape (..., D) and "
    "gamma, beta of shape (D,), and expects an array of x's shape",
    compare=lambda result, expected: close_values(result, expected, "the result", ("...", "D")),
    mistakes=(
        Mistake(
            "the variance is the unbiased one (divided by D - 1). LayerNorm uses the biased variance, "
            "divided by D: np.var(x, axis=-1) or x.var(-1, unbiased=False) in torch (torch's var is unbiased "
            "by default).",
            lambda x, g, b, eps=1e-12: _ln(x, g, b, eps, ddof=1),
        ),
        Mistake(
            "each column is normalised (mean and variance over axis 0). LayerNorm normalises each vector, "
            "over its D features: axis=-1.",
            lambda x, g, b, eps=1e-12: _ln(x, g, b, eps, axis=0),
        ),
        Mistake(
            "the mean and variance are taken over the whole array. LayerNorm normalises each vector on its "
            "own, over the last axis: axis=-1, keepdims=True.",
            lambda x, g, b, eps=1e-12: _ln(x, g, b, eps, axis=None),
        ),
        Mistake(
            "the mean and variance lost their axis and broadcast the wrong way: keep it, "
            "x.mean(axis=-1, keepdims=True), so that each row is normalised by its own statistics.",
            _no_keepdims,
        ),
        Mistake(
            "eps is added to the standard deviation, outside the square root. It goes inside: "
            "(x - mean) / sqrt(var + eps).",
            lambda x, g, b, eps=1e-12: _ln(x, g, b, eps, eps_outside=True),
        ),
        Mistake(
            "the eps you were given is not used: with eps=1e-3 passed, the result is that of eps=1e-12. "
            "Use the argument eps inside the square root.",
            lambda x, g, b, eps=1e-12: _ln(x, g, b, 1e-12),
        ),
        Mistake(
            "the default eps is not BERT's: the signature should be layer_norm(x, gamma, beta, eps=1e-12) "
            "(torch's own default is 1e-5).",
            lambda x, g, b, eps=1e-5: _ln(x, g, b, eps),
        ),
        Mistake(
            "eps is missing: divide by sqrt(var + eps), not by sqrt(var).",
            lambda x, g, b, eps=1e-12: _ln(x, g, b, 0.0),
        ),
        Mistake(
            "the standard deviation is used where the variance belongs: divide by sqrt(var + eps), "
            "with var the mean of (x - mean)**2.",
            _std_for_variance,
        ),
        Mistake(
            "you divide by var + eps: take its square root, (x - mean) / sqrt(var + eps).",
            _no_sqrt,
        ),
        Mistake(
            "the mean is not subtracted: normalise x - mean, not x.",
            lambda x, g, b, eps=1e-12: _ln(x, g, b, eps, center=False),
        ),
        Mistake(
            "gamma and beta are missing: scale by gamma and shift by beta after normalising, gamma * x_hat + beta.",
            lambda x, g, b, eps=1e-12: _normalised(x, eps=eps),
        ),
        Mistake(
            "gamma and beta are swapped: gamma multiplies, beta is added, gamma * x_hat + beta.",
            lambda x, g, b, eps=1e-12: _ln(x, b, g, eps),
        ),
        Mistake(
            "beta is missing: after scaling by gamma, add beta.",
            lambda x, g, b, eps=1e-12: _ln(x, g, np.zeros_like(_f64(b)), eps),
        ),
        Mistake(
            "gamma is missing: multiply the normalised values by gamma before adding beta.",
            lambda x, g, b, eps=1e-12: _ln(x, np.ones_like(_f64(g)), b, eps),
        ),
    ),
    symptoms=(
        Symptom(
            "nan or inf: on a constant vector the variance is 0. That is what eps is for: "
            "(x - mean) / sqrt(var + eps), eps inside the square root.",
            lambda result, case: has_non_finite(result),
        ),
        Symptom(
            "the result should have the shape of x: normalise each vector along the last axis, with "
            "keepdims=True, and do not reduce it.",
            lambda result, case: as_float_array(result).shape != np.shape(case.args[0]),
        ),
    ),
    fallback="layer_norm(x) = gamma * (x - mean) / sqrt(var + eps) + beta, with the mean and the biased "
    "variance of each vector along the last axis (keepdims=True).",
    on_error="x may have any number of axes (D last); take its mean and variance along axis=-1 with "
    "keepdims=True, so that they broadcast back against x; gamma and beta have shape (D,).",
)


def check_layer_norm(fn: Callable[..., Any]) -> None:
    """Check a learner's ``layer_norm(x, gamma, beta, eps=1e-12)`` against :func:`course_utils.encoder_pieces.layer_norm`.

    Nine cases: a vector with ``gamma = 1, beta = 0``; a matrix ``(T, D)``; a square matrix (a lost
    ``keepdims`` gives wrong values instead of an error); a batch ``(B, T, D)``; constant rows
    (variance 0: only eps avoids a division by zero); ``eps=1e-3`` passed with rows of small variance
    (eps inside or outside the square root, eps ignored); rows of variance about ``1e-12`` (the default
    eps matters); values around 1000 (the mean must be subtracted); float32 input.
    """
    rng = np.random.default_rng(606)

    def params(d: int, identity: bool = False):
        if identity:
            return np.ones(d), np.zeros(d)
        return 1 + 0.5 * rng.standard_normal(d), 0.5 * rng.standard_normal(d)

    constant = np.array([[2.0] * 6, [-1.0] * 6, [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]])  # rows 0 and 1: variance 0
    inputs = [
        ("one vector (D=6), gamma=1, beta=0", (rng.standard_normal(6), *params(6, identity=True))),
        ("a matrix (T=4, D=6)", (2 * rng.standard_normal((4, 6)) + 1, *params(6))),
        ("a square matrix (T=5, D=5)", (rng.standard_normal((5, 5)) + 3, *params(5))),
        ("a batch (B=2, T=3, D=8)", (rng.standard_normal((2, 3, 8)), *params(8))),
        ("constant rows (variance 0, the output is beta)", (constant, *params(6))),
        (
            "eps=1e-3 passed, rows of small variance (about 1e-3)",
            (0.03 * rng.standard_normal((3, 6)), *params(6), 1e-3),
        ),
        (
            "rows of variance about 1e-12 (where the default eps=1e-12 matters)",
            (1e-6 * rng.standard_normal((3, 6)), *params(6)),
        ),
        ("large offsets (values around 1000)", (1000 + rng.standard_normal((3, 6)), *params(6))),
        ("float32 input (3, 8)", tuple(a.astype(np.float32) for a in (rng.standard_normal((3, 8)), *params(8)))),
    ]
    cases = [Case(name, args, encoder_pieces.layer_norm(*args)) for name, args in inputs]
    run_checks(_LAYER_NORM, fn, cases)


# --------------------------------------------------------------------------------------------
# An encoder block from its pieces
#
# The checker hands the learner four numpy functions of (..., T, D) arrays: a seeded single-head
# self-attention, a seeded feed-forward network (expand x4, GELU, compress) and two LayerNorms
# with different gamma and beta, so that every wrong assembly gives different numbers.


def _erf_gelu(z: np.ndarray) -> np.ndarray:
    """The exact GELU, z * Phi(z), elementwise in numpy."""
    return 0.5 * z * (1.0 + np.vectorize(math.erf)(z / math.sqrt(2.0)))


def _pieces(d: int, seed: int) -> tuple[Callable, Callable, Callable, Callable]:
    """``attention, feed_forward, norm1, norm2`` for width ``d``: each ``(..., T, d)`` -> ``(..., T, d)``."""
    rng = np.random.default_rng(seed)
    W_q, W_k, W_v, W_o = (rng.standard_normal((d, d)) / math.sqrt(d) for _ in range(4))
    W_1, b_1 = rng.standard_normal((d, 4 * d)) / math.sqrt(d), 0.1 * rng.standard_normal(4 * d)
    W_2, b_2 = rng.standard_normal((4 * d, d)) / math.sqrt(4 * d), 0.1 * rng.standard_normal(d)
    gamma1, beta1 = 1 + 0.3 * rng.standard_normal(d), 0.3 * rng.standard_normal(d)
    gamma2, beta2 = 1 + 0.3 * rng.standard_normal(d), 0.3 * rng.standard_normal(d)

    def self_attention(x):
        """Single-head self-attention: (..., T, D) -> (..., T, D)."""
        x = _f64(x)
        output, _ = attention.scaled_dot_product_attention(x @ W_q, x @ W_k, x @ W_v)
        return output @ W_o

    def feed_forward(x):
        """Expand x4, GELU, compress: (..., T, D) -> (..., T, D)."""
        return _erf_gelu(_f64(x) @ W_1 + b_1) @ W_2 + b_2

    def norm1(x):
        """LayerNorm with its own gamma1, beta1: (..., T, D) -> (..., T, D)."""
        return encoder_pieces.layer_norm(x, gamma1, beta1)

    def norm2(x):
        """LayerNorm with its own gamma2, beta2: (..., T, D) -> (..., T, D)."""
        return encoder_pieces.layer_norm(x, gamma2, beta2)

    return self_attention, feed_forward, norm1, norm2


# The wrong assemblies take the learner's arguments: x, attention (a), feed_forward (f), norm1, norm2.
_ENCODER_BLOCK = Exercise(
    name="encoder_block",
    call="encoder_block(x, attention, feed_forward, norm1, norm2) with x of shape (T, D) or (B, T, D) and "
    "four functions that each map (..., T, D) to (..., T, D); it expects the block's output, of x's shape",
    compare=lambda result, expected: close_values(result, expected, "the output", ("...", "T", "D")),
    mistakes=(
        Mistake(
            "this is a pre-LN block (GPT-2 and later): x + attention(norm1(x)), then h + feed_forward(norm2(h)). "
            "BERT and DistilBERT are post-LN: the LayerNorm comes after the residual sum, norm1(x + attention(x)).",
            lambda x, a, f, n1, n2: (lambda h: h + f(n2(h)))(x + a(n1(x))),
        ),
        Mistake(
            "there are no residual connections: add each sub-layer's input to its output before normalising, "
            "norm1(x + attention(x)), then norm2(h + feed_forward(h)).",
            lambda x, a, f, n1, n2: n2(f(n1(a(x)))),
        ),
        Mistake(
            "the attention sub-layer has no residual: h = norm1(x + attention(x)), not norm1(attention(x)).",
            lambda x, a, f, n1, n2: (lambda h: n2(h + f(h)))(n1(a(x))),
        ),
        Mistake(
            "the feed-forward sub-layer has no residual: the output is norm2(h + feed_forward(h)).",
            lambda x, a, f, n1, n2: n2(f(n1(x + a(x)))),
        ),
        Mistake(
            "the second residual adds x, the block's input: it adds h, the input of the feed-forward "
            "sub-layer, norm2(h + feed_forward(h)).",
            lambda x, a, f, n1, n2: n2(x + f(n1(x + a(x)))),
        ),
        Mistake(
            "feed_forward reads x: it reads h = norm1(x + attention(x)), the attention sub-layer's output.",
            lambda x, a, f, n1, n2: n2(n1(x + a(x)) + f(x)),
        ),
        Mistake(
            "the residual is added after the LayerNorm: x + norm1(attention(x)). In a post-LN block the sum "
            "comes first, then the norm: norm1(x + attention(x)).",
            lambda x, a, f, n1, n2: (lambda h: h + n2(f(h)))(x + n1(a(x))),
        ),
        Mistake(
            "norm1 and norm2 are swapped: norm1 follows the attention sub-layer, norm2 the feed-forward one.",
            lambda x, a, f, n1, n2: (lambda h: n1(h + f(h)))(n2(x + a(x))),
        ),
        Mistake(
            "the sub-layers are in the wrong order: attention first, then the feed-forward network.",
            lambda x, a, f, n1, n2: (lambda h: n2(h + a(h)))(n1(x + f(x))),
        ),
        Mistake(
            "the last LayerNorm is missing: the output is norm2(h + feed_forward(h)).",
            lambda x, a, f, n1, n2: (lambda h: h + f(h))(n1(x + a(x))),
        ),
        Mistake(
            "the first LayerNorm is missing: h = norm1(x + attention(x)).",
            lambda x, a, f, n1, n2: (lambda h: n2(h + f(h)))(x + a(x)),
        ),
        Mistake(
            "that is h, the output of the attention sub-layer only: the feed-forward sub-layer follows, "
            "norm2(h + feed_forward(h)).",
            lambda x, a, f, n1, n2: n1(x + a(x)),
        ),
    ),
    symptoms=(
        Symptom(
            "the output should have the shape of x, (T, D) or (B, T, D): every step of the block keeps it.",
            lambda result, case: as_float_array(result).shape != np.shape(case.args[0]),
        ),
    ),
    fallback="h = norm1(x + attention(x)), then return norm2(h + feed_forward(h)).",
    on_error="attention, feed_forward, norm1 and norm2 are functions: call them on an array of shape "
    "(..., T, D), e.g. attention(x); each returns an array of the same shape.",
)


def check_encoder_block(fn: Callable[..., Any]) -> None:
    """Check a learner's ``encoder_block(x, attention, feed_forward, norm1, norm2)``: a post-LN block.

    Four cases with their own seeded sub-layers (numpy functions of ``(..., T, D)`` arrays): one
    sentence ``(T=5, D=4)``, a batch ``(B=2, T=3, D=6)``, a single token ``(T=1, D=8)`` and a
    longer sentence with other sub-layers ``(T=7, D=8)``. The two LayerNorms have different
    ``gamma`` and ``beta``, so swapping them shows.
    """
    rng = np.random.default_rng(6)
    inputs = [
        ("one sentence (T=5, D=4)", rng.standard_normal((5, 4)), 1),
        ("a batch (B=2, T=3, D=6)", rng.standard_normal((2, 3, 6)), 2),
        ("a single token (T=1, D=8)", rng.standard_normal((1, 8)), 3),
        ("a longer sentence, other sub-layers (T=7, D=8)", 2 * rng.standard_normal((7, 8)), 4),
    ]
    cases = []
    for name, x, seed in inputs:
        args = (x, *_pieces(x.shape[-1], seed))
        cases.append(Case(name, args, encoder_pieces.encoder_block(*args)))
    run_checks(_ENCODER_BLOCK, fn, cases)


# --------------------------------------------------------------------------------------------
# The block turned into pre-LN
#
# The same four pieces as check_encoder_block, numpy functions of (..., T, D) arrays, plus one case
# with the torch modules of a TransformerBlock on a tensor: the lesson stacks the learner's block on
# torch modules to measure its gradients, so a version that works on numpy arrays only must fail here.


def _torch_pieces(d: int, seed: int):
    """A float64 ``x (2, 5, d)`` that requires its gradient and the four sub-layers of a seeded
    :class:`TransformerBlock` (each function's ``block`` attribute is the module)."""
    import torch

    torch.manual_seed(seed)
    block = encoder.TransformerBlock(encoder.EncoderConfig(dim=d, n_heads=2, hidden_dim=4 * d, n_layers=1))
    block = block.eval().double()
    with torch.no_grad():  # LayerNorms whose gamma and beta differ from 1 and 0, and from each other
        for norm in (block.sa_layer_norm, block.output_layer_norm):
            norm.weight.copy_(1 + 0.3 * torch.randn(d, dtype=torch.float64))
            norm.bias.copy_(0.3 * torch.randn(d, dtype=torch.float64))
    x = torch.randn(2, 5, d, dtype=torch.float64).requires_grad_()

    def self_attention(h):
        """The block's multi-head self-attention: (B, T, D) -> (B, T, D)."""
        return block.attention(h)[0]

    def feed_forward(h):
        """The block's feed-forward network: (B, T, D) -> (B, T, D)."""
        return block.ffn(h)

    def norm1(h):
        """The block's first LayerNorm, sa_layer_norm: (B, T, D) -> (B, T, D)."""
        return block.sa_layer_norm(h)

    def norm2(h):
        """The block's second LayerNorm, output_layer_norm: (B, T, D) -> (B, T, D)."""
        return block.output_layer_norm(h)

    # plain functions, not the modules: the engine compares each argument before and after the
    # call, and a copied module is never equal to itself
    self_attention.block = block
    return x, self_attention, feed_forward, norm1, norm2


def _gradients(output, x, block, weights) -> list:
    """d(sum(output * weights)) / d(x and every weight of ``block``): None where nothing reaches it."""
    import torch

    return list(torch.autograd.grad((output * weights).sum(), [x, *block.parameters()], allow_unused=True))


def _backward_like_the_lesson(reference_grads: list, weights) -> Callable[[Any, Case, tuple], "str | None"]:
    """What lesson 06's next cell does with the learner's block on torch modules: back-propagate
    through it. Its gradients (of the input and of every weight) must be the reference's."""
    import torch

    def follow(result: Any, case: Case, args: tuple) -> str | None:
        x = args[0]
        if not isinstance(x, torch.Tensor):
            return None  # a numpy case: nothing runs backward
        lesson = "the lesson's next cell runs backward through your block"
        if not result.requires_grad:
            return (f"the result is cut from the autograd graph, and {lesson}: did you call .detach(), go through "
                    "numpy, or compute under torch.no_grad()? Keep every step a torch operation on the tensors "
                    "you are given.")
        try:
            grads = _gradients(result, x, args[1].block, weights)
        except RuntimeError as error:
            first = str(error).splitlines()[0].split(";")[0]
            if "inplace" in first or "in-place" in first:
                return (f"{lesson}, and backward fails: {first[:240]}. A residual added in place (h += "
                        "feed_forward(norm2(h))) changes a tensor that a LayerNorm saved for its backward pass: "
                        "write h = h + feed_forward(norm2(h)), a new tensor.")
            return f"{lesson}, and backward fails: {first[:200]}"
        names = ["the input x"] + [f"the weight {n}" for n, _ in args[1].block.named_parameters()]
        for name, got, want in zip(names, grads, reference_grads):
            if got is None and want is not None:
                return (f"{lesson}, and no gradient reaches {name}: is a part of the block cut from the graph "
                        "(.detach(), numpy)?")
            if got is not None and want is not None and not torch.allclose(got.double(), want, rtol=1e-5, atol=1e-7):  # float32 passes
                largest = float((got - want).abs().max())
                return (f"{lesson}: the gradient of {name} differs from the reference's (largest difference "
                        f"{largest:.3g}), though the output is right: is a part of the block detached?")
        return None

    return follow


# The wrong versions take the learner's arguments: x, attention (a), feed_forward (f), norm1, norm2.
_PRE_LN_BLOCK = Exercise(
    name="pre_ln_block",
    call="pre_ln_block(x, attention, feed_forward, norm1, norm2) with x of shape (T, D) or (B, T, D), a numpy "
    "array or a torch tensor, and four functions that each map (..., T, D) to (..., T, D); it expects the "
    "pre-LN block's output, of x's shape and kind (a torch tensor for a torch x, through which backward runs)",
    compare=lambda result, expected: close_values(result, expected, "the output", ("...", "T", "D")),
    returns=lambda result, case: torch_for_torch(result, case, "the lesson runs backward through it"),
    mistakes=(
        Mistake(
            "this is the post-LN block you started from: the LayerNorm still comes after the residual sum. "
            "In pre-LN it normalises the input of each sub-layer: h = x + attention(norm1(x)).",
            encoder_pieces.encoder_block,
        ),
        Mistake(
            "the residual path carries the normalised x: x = norm1(x), then x + attention(x), adds the normalised "
            "vector. Keep x as it is on the residual path and normalise only what goes into the sub-layer: "
            "x + attention(norm1(x)).",
            lambda x, a, f, n1, n2: (lambda h: n2(h) + f(n2(h)))(n1(x) + a(n1(x))),
        ),
        Mistake(
            "each LayerNorm is applied twice, before the sub-layer and again after the sum: keep only the one "
            "before, h = x + attention(norm1(x)), then h + feed_forward(norm2(h)).",
            lambda x, a, f, n1, n2: (lambda h: n2(h + f(n2(h))))(n1(x + a(n1(x)))),
        ),
        Mistake(
            "the block's output is normalised: a pre-LN block returns h + feed_forward(norm2(h)), with no "
            "LayerNorm after the sum (GPT-2 normalises once, after the last block, not in every block).",
            lambda x, a, f, n1, n2: (lambda h: n2(h + f(n2(h))))(x + a(n1(x))),
        ),
        Mistake(
            "the LayerNorm normalises the sub-layer's output, x + norm1(attention(x)). In pre-LN it normalises "
            "the sub-layer's input: x + attention(norm1(x)).",
            lambda x, a, f, n1, n2: (lambda h: h + n2(f(h)))(x + n1(a(x))),
        ),
        Mistake(
            "there are no residual connections: add each sub-layer's input back, h = x + attention(norm1(x)), "
            "then h + feed_forward(norm2(h)).",
            lambda x, a, f, n1, n2: f(n2(a(n1(x)))),
        ),
        Mistake(
            "the attention sub-layer has no residual: h = x + attention(norm1(x)), not attention(norm1(x)).",
            lambda x, a, f, n1, n2: (lambda h: h + f(n2(h)))(a(n1(x))),
        ),
        Mistake(
            "the feed-forward sub-layer has no residual: the output is h + feed_forward(norm2(h)).",
            lambda x, a, f, n1, n2: f(n2(x + a(n1(x)))),
        ),
        Mistake(
            "the second residual adds x, the block's input: it adds h, the input of the feed-forward sub-layer, "
            "h + feed_forward(norm2(h)).",
            lambda x, a, f, n1, n2: x + f(n2(x + a(n1(x)))),
        ),
        Mistake(
            "feed_forward reads x: it reads norm2(h), with h = x + attention(norm1(x)) the attention sub-layer's "
            "output.",
            lambda x, a, f, n1, n2: x + a(n1(x)) + f(n2(x)),
        ),
        Mistake(
            "norm2 is never used: each sub-layer has its own LayerNorm, norm1 before attention and norm2 before "
            "the feed-forward network.",
            lambda x, a, f, n1, n2: (lambda h: h + f(n1(h)))(x + a(n1(x))),
        ),
        Mistake(
            "norm1 and norm2 are swapped: norm1 goes before attention, norm2 before the feed-forward network.",
            lambda x, a, f, n1, n2: (lambda h: h + f(n1(h)))(x + a(n2(x))),
        ),
        Mistake(
            "the sub-layers are in the wrong order: attention first, then the feed-forward network.",
            lambda x, a, f, n1, n2: (lambda h: h + a(n2(h)))(x + f(n1(x))),
        ),
        Mistake(
            "that is h, the output of the attention sub-layer only: the feed-forward sub-layer follows, "
            "h + feed_forward(norm2(h)).",
            lambda x, a, f, n1, n2: x + a(n1(x)),
        ),
    ),
    symptoms=(
        Symptom(
            "the output should have the shape of x, (T, D) or (B, T, D): every step of the block keeps it.",
            lambda result, case: tuple(result.shape) != tuple(case.args[0].shape),
        ),
    ),
    fallback="h = x + attention(norm1(x)), then return h + feed_forward(norm2(h)).",
    on_error="attention, feed_forward, norm1 and norm2 are functions: call them on x or h, e.g. attention(norm1(x)); "
    "one case passes torch tensors and torch modules, so use + rather than numpy functions such as np.add.",
    error_hints=(
        ("in-place operation",
         "do not add in place (x += ..., h += ...): it changes a tensor the lesson's autograd graph still needs. "
         "Write h = x + attention(norm1(x)), then return h + feed_forward(norm2(h)): new tensors."),
    ),
)


def check_pre_ln_block(fn: Callable[..., Any]) -> None:
    """Check a learner's ``pre_ln_block(x, attention, feed_forward, norm1, norm2)`` against
    :func:`course_utils.encoder_pieces.pre_ln_block`.

    Four cases with seeded numpy sub-layers (those of :func:`check_encoder_block`): one sentence
    ``(T=5, D=4)``, a batch ``(B=2, T=3, D=6)``, a single token ``(T=1, D=8)``, a longer sentence
    ``(T=7, D=8)``; then a batch ``(B=2, T=5, D=8)`` in torch, with the modules of a
    :class:`course_utils.encoder.TransformerBlock` as sub-layers, as the lesson stacks the block:
    there the result must be a torch tensor, and backward through it (what the lesson's next cell
    runs) must work and give the reference's gradients of the input and of every weight (a
    residual added in place onto a tensor a LayerNorm saved, or a detached result, fails).
    The two LayerNorms have different ``gamma`` and ``beta`` everywhere, so swapping them shows.
    """
    rng = np.random.default_rng(9)
    inputs = [
        ("one sentence (T=5, D=4)", rng.standard_normal((5, 4)), 11),
        ("a batch (B=2, T=3, D=6)", rng.standard_normal((2, 3, 6)), 12),
        ("a single token (T=1, D=8)", rng.standard_normal((1, 8)), 13),
        ("a longer sentence, other sub-layers (T=7, D=8)", 2 * rng.standard_normal((7, 8)), 14),
    ]
    cases = []
    for name, x, seed in inputs:
        args = (x, *_pieces(x.shape[-1], seed))
        cases.append(Case(name, args, encoder_pieces.pre_ln_block(*args)))
    import dataclasses

    import torch

    args = _torch_pieces(8, 15)
    with torch.no_grad():
        expected = encoder_pieces.pre_ln_block(*args)
    weights = torch.randn(expected.shape, generator=torch.Generator().manual_seed(16), dtype=torch.float64)
    x = args[0].detach().clone().requires_grad_()
    reference_grads = _gradients(encoder_pieces.pre_ln_block(x, *args[1:]), x, args[1].block, weights)
    cases.append(Case("torch: a batch (B=2, T=5, D=8) through a TransformerBlock's modules", args, expected))
    exercise = dataclasses.replace(_PRE_LN_BLOCK, follow=_backward_like_the_lesson(reference_grads, weights))
    run_checks(exercise, fn, cases)


# --------------------------------------------------------------------------------------------
# Parameters of one encoder layer


def _count(d: int, f: int) -> int:
    return encoder_pieces.encoder_layer_param_count(d, f)


# The wrong versions take the learner's arguments: d = d_model, f = d_ff.
_ENCODER_LAYER_PARAM_COUNT = Exercise(
    name="encoder_layer_param_count",
    call="encoder_layer_param_count(d_model, d_ff) with two positive integers, and expects an integer",
    compare=equal_integers("parameters"),
    mistakes=(
        Mistake(
            "the feed-forward width is d_ff, the argument: do not assume d_ff = 4 * d_model "
            "(it is 4 * d_model in BERT and DistilBERT, not in every model).",
            lambda d, f: _count(d, 4 * d),
        ),
        Mistake(
            "did you forget the biases? Every linear map has one: 4 of D values in attention, one of d_ff "
            "and one of D in the feed-forward network.",
            lambda d, f: _count(d, f) - 4 * d - f - d,
        ),
        Mistake(
            "did you forget the biases of the feed-forward network? d_ff for the expansion, D for the compression.",
            lambda d, f: _count(d, f) - f - d,
        ),
        Mistake(
            "every bias is missing, LayerNorm's beta too: count the biases of the linear maps and the "
            "gamma and beta of both LayerNorms.",
            lambda d, f: _count(d, f) - 4 * d - f - d - 2 * d,
        ),
        Mistake(
            "4D too few: did you forget the two LayerNorms (each has a gamma and a beta of D values), or the "
            "biases of the four attention projections (D values each)?",
            lambda d, f: _count(d, f) - 4 * d,
        ),
        Mistake(
            "2D too few: there are two LayerNorms (after attention and after the feed-forward network), "
            "each with a gamma AND a beta of D values.",
            lambda d, f: _count(d, f) - 2 * d,
        ),
        Mistake(
            "did you forget the output projection W_O of attention? After the heads are merged, a D x D "
            "matrix (and its bias) mixes them.",
            lambda d, f: _count(d, f) - d * d - d,
        ),
        Mistake(
            "the feed-forward network has two matrices, D x d_ff (expand) and d_ff x D (compress).",
            lambda d, f: _count(d, f) - d * f - d,
        ),
        Mistake(
            "one attention matrix per head? No: the heads share the four D x D matrices, which are split into "
            "heads after the product. The count does not depend on the number of heads.",
            lambda d, f: _count(d, f) + 3 * d * d,
        ),
    ),
    fallback="attention: 4 D x D matrices + 4 biases of D; feed-forward: D x d_ff + d_ff + d_ff x D + D; "
    "two LayerNorms: 2 x (D + D).",
    on_error="the arguments are plain integers, d_model and d_ff.",
)


def check_encoder_layer_param_count(fn: Callable[[int, int], int]) -> None:
    """Check a learner's ``encoder_layer_param_count(d_model, d_ff) -> int``.

    The reference is :func:`course_utils.encoder_pieces.encoder_layer_param_count`, equal to the count of
    :class:`course_utils.encoder.TransformerBlock`. Six cases: sizes where ``d_ff`` is not
    ``4 * d_model`` first, then the running example (4, 16), the course teacher (128, 512) and
    DistilBERT-base (768, 3072).
    """
    sizes = [(6, 10), (10, 7), (1, 3), (4, 16), (128, 512), (768, 3072)]
    cases = [Case(f"d_model={d}, d_ff={f}", (d, f), _count(d, f)) for d, f in sizes]
    run_checks(_ENCODER_LAYER_PARAM_COUNT, fn, cases)
