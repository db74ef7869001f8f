"""Checkers of lesson 04: softmax, scaled dot-product attention (with or without a mask), the
entropy of the weights with and without the 1/sqrt(d_k) scale.

The references are :mod:`course_utils.attention`. Results may be numpy arrays or torch tensors,
in float32 or float64: they are compared by value (a list is refused by the engine,
:func:`course_utils.checks.engine.kind_problem`).

**Attention with a mask** is checked by the same :func:`check_scaled_dot_product_attention`: it
runs the masked cases whenever the learner's function takes a fourth argument ``mask``. A lesson 04
version ``fn(queries, keys, values)`` is checked on the unmasked cases only; a version
``fn(queries, keys, values, mask=None)`` (a learner who adds lesson 05's mask to lesson 04's
function) on all of them. Lesson 05's own exercise is the masked softmax, with rows that allow no
key: :func:`course_utils.checks.masking.check_safe_masked_softmax`. Masking with ``-inf``, with
``finfo(dtype).min`` or with ``-1e9`` are all correct here (no case has a query row whose keys are
all blocked, where ``-inf`` gives ``nan``).

The checkers of ``split_heads`` and ``merge_heads`` are in :mod:`course_utils.checks.multi_head`.
"""

from __future__ import annotations

import inspect
from typing import Any, Callable

import numpy as np

from .. import attention
from .engine import Case, Exercise, Mistake, Symptom, run_checks
from .values import as_float_array, close_values, describe, has_non_finite, shape_of

# --------------------------------------------------------------------------------------------
# Lesson 04: softmax


def _softmax_axis(x, axis):
    return attention.softmax(np.asarray(x, dtype=np.float64), axis=axis)


_SOFTMAX = Exercise(
    name="softmax",
    call="softmax(x, axis) with x a float array of any shape and axis an integer (default -1), "
    "and expects an array of x's shape whose values along axis are positive and sum to 1",
    compare=lambda result, expected: close_values(result, expected, "the result", ("x's shape",)),
    mistakes=(
        Mistake(
            "the values are exp(x), not normalised: divide by their sum along the axis, "
            "e / e.sum(axis=axis, keepdims=True).",
            lambda x, axis=-1: np.exp(np.asarray(x, dtype=np.float64) - np.max(x, axis=axis, keepdims=True)),
        ),
        Mistake(
            "the values are exp(x) without the division by their sum: normalise along the axis.",
            lambda x, axis=-1: np.exp(np.asarray(x, dtype=np.float64)),
        ),
        Mistake(
            "the axis argument is ignored: the values sum to 1 along the last axis. Pass axis to max and sum.",
            lambda x, axis=-1: _softmax_axis(x, -1),
        ),
        Mistake(
            "the values sum to 1 along axis 0, not along the axis asked for: pass axis to max and sum.",
            lambda x, axis=-1: _softmax_axis(x, 0),
        ),
        Mistake(
            "the values sum to 1 over the whole array: sum along the axis only, e.sum(axis=axis, keepdims=True).",
            lambda x, axis=-1: _softmax_axis(np.asarray(x).reshape(-1), -1).reshape(np.shape(x)),
        ),
        Mistake(
            "the sum is broadcast along the wrong axis: keep the summed axis, e.sum(axis=axis, keepdims=True), "
            "so that each row is divided by its own sum.",
            lambda x, axis=-1: (lambda e: e / e.sum(axis=axis))(np.exp(x - np.max(x, axis=axis, keepdims=True))),
        ),
        Mistake(
            "x is normalised by its sum, without the exponential: softmax is exp(x) / sum(exp(x)).",
            lambda x, axis=-1: np.asarray(x) / np.sum(x, axis=axis, keepdims=True),
        ),
    ),
    symptoms=(
        Symptom(
            "nan or inf for large values: exp(1000) overflows. Subtract the maximum of each row first, "
            "x - x.max(axis=axis, keepdims=True) (it cancels in the ratio, and the largest exponent is exp(0) = 1).",
            lambda result, case: has_non_finite(result),
        ),
        Symptom(
            "some values are negative: a softmax is exp(...) / sum(exp(...)), positive everywhere.",
            lambda result, case: bool(np.any(as_float_array(result) < 0)),
        ),
    ),
    fallback="softmax(x) = exp(x - max) / sum(exp(x - max)), the max and the sum taken along axis with keepdims=True.",
    on_error="x can have any number of axes; take the max and the sum along axis with keepdims=True so "
    "that they broadcast back against x.",
)


def check_softmax(fn: Callable[..., Any]) -> None:
    """Check a learner's ``softmax(x, axis=-1)`` against :func:`course_utils.attention.softmax`.

    Seven cases: a vector, a matrix (rows, the default axis), a square matrix (a missing
    ``keepdims`` gives wrong values instead of an error), ``axis=0``, a batch of score matrices with
    ``axis=1``, large values (``exp(1000)`` overflows without the max subtraction) and float32.
    """
    rng = np.random.default_rng(404)
    extreme = np.array([[1000.0, 1001.0, 999.0, 1000.5], [-1000.0, -1002.0, -999.0, -1001.0]])
    inputs = [
        ("a vector of 5 scores", (rng.standard_normal(5),)),
        ("a matrix (3, 5), softmax of each row (default axis=-1)", (2 * rng.standard_normal((3, 5)),)),
        ("a square matrix (4, 4), axis=-1", (rng.standard_normal((4, 4)), -1)),
        ("a matrix (4, 3), axis=0: each column sums to 1", (rng.standard_normal((4, 3)), 0)),
        ("a batch of scores (2, 3, 4), axis=1", (rng.standard_normal((2, 3, 4)), 1)),
        ("large values (around ±1000)", (extreme,)),
        ("float32 input (3, 6)", (rng.standard_normal((3, 6)).astype(np.float32),)),
    ]
    cases = [Case(name, args, attention.softmax(*args)) for name, args in inputs]
    run_checks(_SOFTMAX, fn, cases)


# --------------------------------------------------------------------------------------------
# Lessons 04 and 05: scaled dot-product attention, with and without a mask


def _np(x) -> np.ndarray:
    return np.asarray(x, dtype=np.float64)


def _transposed(keys) -> np.ndarray:
    return np.swapaxes(_np(keys), -1, -2)


FLOAT64_MIN = float(np.finfo(np.float64).min)  # a masked score: exp() of it is 0

def _attend(scores, values, mask=None, *, fill=FLOAT64_MIN, axis=-1):
    """Softmax of the (masked) scores along ``axis``, times the values: ``(output, weights)``."""
    if mask is not None:
        scores = np.where(mask, scores, fill)
    weights = attention.softmax(scores, axis=axis)
    return weights @ _np(values), weights


def _scaled(queries, keys, divisor):
    return _np(queries) @ _transposed(keys) / divisor


def _d(x) -> int:
    return np.shape(x)[-1]


def _mask_after_softmax(queries, keys, values, mask=None):
    weights = attention.softmax(_scaled(queries, keys, np.sqrt(_d(queries))))
    if mask is not None:
        weights = weights * mask
    return weights @ _np(values), weights


def _outputs(result) -> tuple[Any, Any] | None:
    """The learner's ``(output, weights)``, or ``None`` when the result is not a pair."""
    if isinstance(result, (tuple, list)) and len(result) == 2:
        return result[0], result[1]
    return None


def _compare_attention(result: Any, expected: Any) -> str | None:
    pair = _outputs(result)
    if pair is None:
        return f"expected a pair (output, weights), got {describe(result)}"
    output, weights = expected
    return close_values(pair[0], output, "the output", ("...", "T_q", "d_v")) or close_values(
        pair[1], weights, "the weights", ("...", "T_q", "T_k")
    )


def _weights_sum_over_queries(result, case) -> bool:
    weights = as_float_array(_outputs(result)[1])
    return weights.shape == case.expected[1].shape and np.allclose(weights.sum(axis=-2), 1.0, atol=1e-4)


def _swapped_pair(result, case) -> bool:
    first, second = _outputs(result)
    return shape_of(first) == case.expected[1].shape and shape_of(second) == case.expected[0].shape


def _mask_ignored(result, case) -> bool:
    if len(case.args) < 4:
        return False
    unmasked = attention.scaled_dot_product_attention(*(_np(a) for a in case.args[:3]))
    return _compare_attention(result, unmasked) is None


def _nan_rows_where_allowed(result, case) -> bool:
    if len(case.args) < 4:
        return False
    weights = as_float_array(_outputs(result)[1])
    mask = np.broadcast_to(case.args[3], weights.shape)
    nan_rows = np.isnan(weights).all(axis=-1)
    return bool(np.any(nan_rows & mask.all(axis=-1)))


def _blocked_weight_not_zero(result, case) -> bool:
    if len(case.args) < 4:
        return False
    weights = as_float_array(_outputs(result)[1])
    blocked = ~np.broadcast_to(case.args[3], weights.shape)
    return bool(np.any(np.abs(weights[blocked]) > 1e-6))


_SDPA = Exercise(
    name="scaled_dot_product_attention",
    call="scaled_dot_product_attention(queries, keys, values) (and with a fourth argument, the mask) with "
    "queries (..., T_q, d_k), keys (..., T_k, d_k), values (..., T_k, d_v), mask boolean broadcastable to "
    "(..., T_q, T_k) with True = may attend, and expects the pair (output (..., T_q, d_v), weights (..., T_q, T_k))",
    compare=_compare_attention,
    mistakes=(
        Mistake(
            "the pair is in the wrong order: return (output, weights), the output first.",
            lambda q, k, v, mask=None: attention.scaled_dot_product_attention(_np(q), _np(k), _np(v), mask)[::-1],
        ),
        Mistake(
            "the scores are not scaled: divide Q @ K^T by sqrt(d_k) before the softmax.",
            lambda q, k, v, mask=None: _attend(_scaled(q, k, 1.0), v, mask),
        ),
        Mistake(
            "the scores are divided by d_k: divide by its square root, sqrt(d_k).",
            lambda q, k, v, mask=None: _attend(_scaled(q, k, _d(q)), v, mask),
        ),
        Mistake(
            "the scores are divided by sqrt(d_v), the size of the values: the scale is sqrt(d_k), the size of "
            "the queries and keys (their dot products are what grows with the size).",
            lambda q, k, v, mask=None: _attend(_scaled(q, k, np.sqrt(_d(v))), v, mask),
        ),
        Mistake(
            "the softmax is taken over the queries (axis -2): each query's weights over the keys must sum to 1, "
            "softmax along the last axis.",
            lambda q, k, v, mask=None: _attend(_scaled(q, k, np.sqrt(_d(q))), v, mask, axis=-2),
        ),
        Mistake(
            "the keys are not transposed: the scores are Q @ K^T, the keys transposed on their last two axes "
            "(np.swapaxes(keys, -1, -2)).",
            lambda q, k, v, mask=None: _attend(_np(q) @ _np(k) / np.sqrt(_d(q)), v, mask),
        ),
        Mistake(
            "the mask is inverted: True means 'may attend', so the scores to fill are where the mask is False "
            "(np.where(mask, scores, -np.inf)).",
            lambda q, k, v, mask=None: _attend(_scaled(q, k, np.sqrt(_d(q))), v, None if mask is None else ~mask),
        ),
        Mistake(
            "the blocked scores are set to 0 (or multiplied by the mask): a score of 0 is not 'blocked', exp(0) = 1 "
            "still gets weight. "
            "Set the blocked scores to -inf (or a large negative number) before the softmax.",
            lambda q, k, v, mask=None: _attend(_scaled(q, k, np.sqrt(_d(q))) * (1 if mask is None else mask), v),
        ),
        Mistake(
            "the mask is applied after the softmax: the remaining weights no longer sum to 1. Fill the blocked "
            "scores with -inf before the softmax instead.",
            _mask_after_softmax,
        ),
        Mistake(
            "the mask is ignored: set the scores where the mask is False to -inf (or a large negative number) "
            "before the softmax.",
            lambda q, k, v, mask=None: attention.scaled_dot_product_attention(_np(q), _np(k), _np(v)),
        ),
    ),
    symptoms=(
        Symptom(
            "return the pair (output, weights), e.g. `return weights @ values, weights`.",
            lambda result, case: _outputs(result) is None,
        ),
        Symptom("the pair is in the wrong order: return (output, weights), the output first.", _swapped_pair),
        Symptom(
            "a row of weights is nan: all its keys were blocked, but in every case each query may attend to at "
            "least one key. Is the mask inverted? True means 'may attend': fill where the mask is False.",
            lambda result, case: _nan_rows_where_allowed(result, case),
        ),
        Symptom(
            "nan or inf for large scores: your softmax overflows. Subtract each row's maximum before the "
            "exponential (or use the softmax of the previous exercise).",
            lambda result, case: any(has_non_finite(part) for part in _outputs(result)),
        ),
        Symptom(
            "the weights sum to 1 over the queries: take the softmax along the last axis (the keys).",
            _weights_sum_over_queries,
        ),
        Symptom(
            "the mask is ignored: set the scores where the mask is False to -inf before the softmax.", _mask_ignored
        ),
        Symptom(
            "a blocked key has a weight that is not zero: fill the blocked scores before the softmax, "
            "np.where(mask, scores, -np.inf) (True = may attend).",
            _blocked_weight_not_zero,
        ),
    ),
    fallback="compare your code with weights = softmax(Q @ K^T / sqrt(d_k)) along the keys, output = "
    "weights @ V, step by step.",
    on_error="queries @ keys^T is (..., T_q, d_k) @ (..., d_k, T_k): transpose the keys on their last two axes "
    "with np.swapaxes(keys, -1, -2) (keys.T reverses every axis of a batch); the output is weights @ values, "
    "(..., T_q, T_k) @ (..., T_k, d_v). The mask broadcasts against the scores: use np.where(mask, scores, "
    "-np.inf) (scores[~mask] needs a mask of the scores' full shape).",
)


def _accepts_mask(fn: Callable[..., Any]) -> bool:
    """Whether ``fn`` can be called with four arguments (queries, keys, values, mask)."""
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):  # no signature to read: assume it does
        return True
    try:
        signature.bind(None, None, None, None)
    except TypeError:
        return False
    return True


def _allowed_somewhere(mask: np.ndarray) -> np.ndarray:
    """``mask`` with the first key allowed in every row where nothing was: no fully blocked row."""
    mask = mask.copy()
    mask[~mask.any(axis=-1), 0] = True
    return mask


def _attention_case(name, rng, batch, t_q, t_k, d_k, d_v, *, mask=None, scale=1.0, dtype=np.float64) -> Case:
    queries = scale * rng.standard_normal((*batch, t_q, d_k))
    keys = rng.standard_normal((*batch, t_k, d_k))
    values = rng.standard_normal((*batch, t_k, d_v))
    args = tuple(np.asarray(a, dtype=dtype) for a in (queries, keys, values))
    if mask is not None:
        args = (*args, mask)
    return Case(name, args, attention.scaled_dot_product_attention(*(a.astype(np.float64) for a in args[:3]), mask))


def check_scaled_dot_product_attention(fn: Callable[..., Any]) -> None:
    """Check a learner's ``scaled_dot_product_attention(queries, keys, values, mask=None) -> (output,
    weights)`` against :func:`course_utils.attention.scaled_dot_product_attention`.

    Shapes: ``queries (..., T_q, d_k)``, ``keys (..., T_k, d_k)``, ``values (..., T_k, d_v)``; ``mask``
    boolean broadcastable to ``(..., T_q, T_k)``, True = may attend. Six cases without a mask: non-square
    (``T_q != T_k``, ``d_k != d_v``), square, a batch, a batch of heads ``(B, H, T, d)``, large scores and
    float32 inputs. When ``fn`` takes a fourth argument, five more with masks: a causal ``(T, T)`` mask
    on a batch, a padding mask ``(B, 1, T_k)``, a padding mask ``(B, 1, 1, T_k)`` on heads, a random full
    mask and a float32 case. Every query row has at least one allowed key, so ``-inf`` and a large
    negative number are both right.
    """
    rng = np.random.default_rng(405)
    cases = [
        _attention_case("non-square: T_q=3, T_k=4, d_k=4, d_v=2", rng, (), 3, 4, 4, 2),
        _attention_case("square: T=5, d_k=d_v=3", rng, (), 5, 5, 3, 3),
        _attention_case("a batch (B=2, T_q=4, T_k=6, d_k=5, d_v=3)", rng, (2,), 4, 6, 5, 3),
        _attention_case("heads (B=2, H=3, T=4, d=2)", rng, (2, 3), 4, 4, 2, 2),
        _attention_case("large scores (queries * 1000), T=4, d_k=8", rng, (), 4, 4, 8, 3, scale=1000.0),
        _attention_case("float32 inputs (B=2, T_q=3, T_k=5, d_k=4, d_v=6)", rng, (2,), 3, 5, 4, 6, dtype=np.float32),
    ]
    if _accepts_mask(fn):
        lengths = np.array([6, 3, 1])
        padding_3d = np.arange(6) < lengths[:, None, None]  # (B, 1, T_k)
        padding_4d = (np.arange(5) < np.array([5, 2])[:, None])[:, None, None, :]  # (B, 1, 1, T_k)
        cases += [
            _attention_case(
                "causal mask (T, T) on a batch (B=2, T=5, d_k=4, d_v=3)",
                rng,
                (2,),
                5,
                5,
                4,
                3,
                mask=np.tri(5, dtype=bool),
            ),
            _attention_case(
                "padding mask (B=3, 1, T_k=6), T_q=4, d_k=3, d_v=2", rng, (3,), 4, 6, 3, 2, mask=padding_3d
            ),
            _attention_case(
                "padding mask (B=2, 1, 1, T=5) on heads (B=2, H=2, T=5, d=4)", rng, (2, 2), 5, 5, 4, 4, mask=padding_4d
            ),
            _attention_case(
                "a random mask (2, 4, 6) with large scores",
                rng,
                (2,),
                4,
                6,
                5,
                3,
                scale=30.0,
                mask=_allowed_somewhere(rng.random((2, 4, 6)) < 0.5),
            ),
            _attention_case(
                "float32 inputs with a causal mask (T=4)",
                rng,
                (),
                4,
                4,
                3,
                5,
                dtype=np.float32,
                mask=np.tri(4, dtype=bool),
            ),
        ]
    run_checks(_SDPA, fn, cases)


# --------------------------------------------------------------------------------------------
# Lesson 04: the entropy of the weights, with and without the 1/sqrt(d_k) scale


def _entropy_of(weights, log=np.log, reduce=np.sum) -> np.ndarray:
    w = _np(weights)
    return -reduce(w * log(np.where(w > 0, w, 1.0)), axis=-1)


def _entropy_with(queries, keys, scaled, divisor=None, *, axis=-1, log=np.log, reduce=np.sum):
    scores = _np(queries) @ _transposed(keys)
    if divisor is None:
        divisor = np.sqrt(_d(queries)) if scaled else 1.0
    return _entropy_of(attention.softmax(scores / divisor, axis=axis), log, reduce)


def _negative_entropy(result, case) -> bool:
    array = as_float_array(result)
    return array is not None and bool(np.any(array < -1e-9))


def _one_number_for_all(result, case) -> bool:
    array = as_float_array(result)
    return array is not None and array.ndim == 0 and np.ndim(case.expected) > 0


_ENTROPY = Exercise(
    name="weights_entropy",
    call="weights_entropy(queries, keys, scaled) with queries (..., T_q, d_k), keys (..., T_k, d_k) and "
    "scaled True or False, and expects the entropy of each query's weights, an array (..., T_q)",
    compare=lambda result, expected: close_values(result, expected, "the entropies", ("...", "T_q")),
    mistakes=(
        Mistake(
            "the scores are divided by d_k: the scale is its square root, / np.sqrt(d_k).",
            lambda q, k, scaled=True: _entropy_with(q, k, scaled, _d(q) if scaled else 1.0),
        ),
        Mistake(
            "with scaled=False the scores are still divided by √d_k: divide only when scaled is True.",
            lambda q, k, scaled=True: _entropy_with(q, k, True),
        ),
        Mistake(
            "the scores are never divided by √d_k: with scaled=True, divide them by np.sqrt(d_k).",
            lambda q, k, scaled=True: _entropy_with(q, k, False),
        ),
        Mistake(
            "the entropy is in bits (log base 2): the lesson measures nats, with the natural logarithm np.log "
            "(uniform weights over 16 keys: ln 16 = 2.77).",
            lambda q, k, scaled=True: _entropy_with(q, k, scaled, log=np.log2),
        ),
        Mistake(
            "the terms are averaged over the keys: the entropy is their sum, -(w * np.log(w)).sum(axis=-1).",
            lambda q, k, scaled=True: _entropy_with(q, k, scaled, reduce=np.mean),
        ),
        Mistake(
            "the softmax runs over the queries (axis -2): each query's weights are a softmax over the keys, "
            "the last axis of the scores.",
            lambda q, k, scaled=True: _entropy_with(q, k, scaled, axis=-2),
        ),
    ),
    symptoms=(
        Symptom(
            "nan or inf: either a weight is exactly 0 and 0 * log(0) is nan (count those terms as 0, their "
            "limit: w * np.log(np.where(w > 0, w, 1))), or exp overflowed (use a stable softmax, which "
            "subtracts each row's maximum first).",
            lambda result, case: has_non_finite(result),
        ),
        Symptom(
            "some entropies are negative: the entropy is -sum w ln w (each ln w is at most 0); is the minus "
            "sign missing?",
            _negative_entropy,
        ),
        Symptom(
            "one number for everything: return one entropy per query, an array (..., T_q); take the mean "
            "in the measuring cell.",
            _one_number_for_all,
        ),
    ),
    fallback="scores = queries @ keys^T (transpose the last two axes), divided by √d_k when scaled; weights = "
    "their softmax over the last axis; entropy = -(w * ln w) summed over the last axis.",
    on_error="queries and keys may have batch axes: transpose only the last two axes of the keys, "
    "np.swapaxes(keys, -1, -2), and softmax over the last axis.",
)


def check_weights_entropy(fn: Callable[..., Any]) -> None:
    """Check a learner's ``weights_entropy(queries, keys, scaled=True)`` against
    :func:`course_utils.attention.weights_entropy`: the entropy ``(..., T_q)`` of each query's
    weights ``softmax(q . k / sqrt(d_k))`` (no division when ``scaled`` is False).

    Seven cases: one query matrix scaled and unscaled (``T_q != T_k``, so a softmax over the queries
    gives the wrong shape), a square one (so it gives the wrong values), a batch of the lesson's
    experiment (one query, 16 keys, ``d_k = 64``) both ways, large scores whose weights underflow to
    exactly 0 (``0 ln 0`` must count as 0) and overflow a plain ``exp``, and float32 inputs.
    """
    rng = np.random.default_rng(406)
    inputs = [
        ("one sentence: T_q=3, T_k=5, d_k=4, scaled", (rng.standard_normal((3, 4)), rng.standard_normal((5, 4)), True)),
        ("the same shapes, scaled=False", (rng.standard_normal((3, 4)), rng.standard_normal((5, 4)), False)),
        ("square: T=4, d_k=4, scaled", (rng.standard_normal((4, 4)), rng.standard_normal((4, 4)), True)),
        ("a batch of 6 queries, each with 16 keys, d_k=64, scaled",
         (rng.standard_normal((6, 1, 64)), rng.standard_normal((6, 16, 64)), True)),
        ("the same batch, scaled=False", (rng.standard_normal((6, 1, 64)), rng.standard_normal((6, 16, 64)), False)),
        ("large scores (queries * 500), scaled=False: some weights are exactly 0",
         (500 * rng.standard_normal((2, 3, 8)), rng.standard_normal((2, 6, 8)), False)),
        ("float32 inputs, d_k=16, scaled",
         (rng.standard_normal((4, 16)).astype(np.float32), rng.standard_normal((7, 16)).astype(np.float32), True)),
    ]  # fmt: skip
    cases = [Case(name, args, attention.weights_entropy(*args)) for name, args in inputs]
    run_checks(_ENTROPY, fn, cases)
