"""Checkers of lesson 05: the causal mask, the padding mask, and attention weights under a mask.

The references are :func:`course_utils.masking.causal_mask`, :func:`course_utils.masking.padding_mask`
and :func:`course_utils.masking.safe_masked_softmax`. Masks may be returned as numpy arrays, torch
tensors or nested lists of booleans; they must be boolean (an integer or float mask means something
else to attention functions: an additive mask, or indices). Weights may be numpy arrays or torch
tensors, in float32 or float64, compared by value with a tolerance.

:func:`check_safe_masked_softmax` knows the ways a learner's masked softmax goes wrong: the mask
applied after the softmax (rows that no longer sum to 1), the same renormalised (right in exact
arithmetic, ``nan`` when blocked keys have far larger scores and the allowed weights underflow), the
softmax over the queries, blocked scores filled with 0 or with a number that is not low enough, an
inverted mask, an ignored mask, and a row with no allowed key left ``nan`` (``-inf``) or uniform
(the dtype's minimum) instead of zeros.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from .. import attention, masking
from .engine import Case, Exercise, Mistake, Symptom, run_checks
from .values import as_float_array, describe, named_shape


def _as_array(value: Any) -> np.ndarray | None:
    """``value`` as a numpy array (any dtype), or ``None`` when it cannot be one."""
    try:
        if hasattr(value, "detach"):  # a torch tensor
            value = value.detach().cpu().numpy()
        array = np.asarray(value)
    except Exception:  # ragged lists and the like
        return None
    return None if array.dtype == object else array


def equal_masks(axes: Sequence[str]) -> Callable[[Any, Any], "str | None"]:
    """An exact comparison of boolean masks whose axes are named ``axes`` (for the shape message).

    The values are compared before the dtype, so that a mask of the right values in the wrong dtype
    gets its own message (and a right mask of 0/1 integers is told to become boolean).
    """

    def compare(result: Any, expected: Any) -> str | None:
        array = _as_array(result)
        if array is None:
            return f"expected a boolean array, got {describe(result)}"
        expected = np.asarray(expected)
        if array.shape != expected.shape:
            return f"expected a mask of shape {named_shape(axes, expected.shape)}, got {array.shape}"
        if array.dtype != np.bool_:
            try:
                same = bool(np.array_equal(array.astype(np.float64), expected.astype(np.float64)))
            except (TypeError, ValueError):
                same = False
            values = "the right values" if same else "values"
            return f"expected a boolean mask (dtype bool, True = may attend), got {values} of dtype {array.dtype}"
        if not np.array_equal(array, expected):
            wrong = int(np.sum(array != expected))
            return f"{wrong} of the {expected.size} entries are wrong"
        return None

    return compare


def _boolean_mask(result: Any, case: Case) -> str | None:
    """The right values in another dtype than bool: a type problem (an integer or float mask is read as
    something else by attention functions: indices, or numbers added to the scores)."""
    array = _as_array(result)
    if array is None or array.dtype == np.bool_ or array.shape != np.shape(case.expected):
        return None
    try:
        same = np.array_equal(array.astype(np.float64), np.asarray(case.expected).astype(np.float64))
    except (TypeError, ValueError):
        return None
    if not same:
        return None  # wrong values too: the comparison says so, with its hint
    return (f"returned a mask of dtype {array.dtype}; return a boolean mask (dtype bool, True = may attend), e.g. "
            ".astype(bool): an integer or float mask is read as something else by attention functions")


def _right_values_wrong_dtype(result, case) -> bool:
    array = _as_array(result)
    return array.dtype != np.bool_ and np.array_equal(array.astype(np.float64), case.expected.astype(np.float64))


# --------------------------------------------------------------------------------------------
# The causal mask


_CAUSAL_MASK = Exercise(
    name="causal_mask",
    call="causal_mask(seq_len) with seq_len a positive integer, and expects a boolean (seq_len, seq_len) array, "
    "True where the key position is <= the query position (row = query, column = key)",
    compare=equal_masks(("T", "T")),
    returns=_boolean_mask,
    mistakes=(
        Mistake(
            "the mask is transposed (the upper triangle): rows are queries and columns keys, and query i may "
            "see the keys j <= i, the lower triangle (np.tril).",
            lambda seq_len: np.triu(np.ones((seq_len, seq_len), dtype=bool)),
        ),
        Mistake(
            "the diagonal is blocked: a token may attend to itself (key j = query i). Use np.tril with k=0.",
            lambda seq_len: np.tri(seq_len, k=-1, dtype=bool),
        ),
        Mistake(
            "the mask is inverted: True means 'may attend', so the future (the upper triangle above the "
            "diagonal) is False and the rest True.",
            lambda seq_len: ~np.tri(seq_len, dtype=bool),
        ),
        Mistake(
            "everything is allowed: the mask must block the future, the keys j > i of query i.",
            lambda seq_len: np.ones((seq_len, seq_len), dtype=bool),
        ),
    ),
    symptoms=(
        Symptom(
            "the values are right but the mask is not boolean: make it boolean, e.g. np.tril(np.ones((T, T), "
            "dtype=bool)) or .astype(bool). An integer or float mask is read as something else by attention "
            "functions (indices, or numbers added to the scores).",
            _right_values_wrong_dtype,
        ),
        Symptom(
            "the mask is not boolean: build it with dtype=bool (True = may attend).",
            lambda result, case: _as_array(result).dtype != np.bool_,
        ),
    ),
    fallback="row i is query i: it may attend to the keys 0 ... i. That is the lower triangle, "
    "np.tril(np.ones((seq_len, seq_len), dtype=bool)).",
    on_error="seq_len is a plain integer; build a (seq_len, seq_len) array.",
)


def check_causal_mask(fn: Callable[[int], Any]) -> None:
    """Check a learner's ``causal_mask(seq_len)``: boolean ``(T, T)``, True where key ``<=`` query.

    Five cases: ``T = 4, 1, 2, 7, 16``.
    """
    cases = [Case(f"seq_len={t}", (t,), masking.causal_mask(t)) for t in (4, 1, 2, 7, 16)]
    run_checks(_CAUSAL_MASK, fn, cases)


# --------------------------------------------------------------------------------------------
# The padding mask


def _expand(mask: np.ndarray) -> np.ndarray:
    return mask[:, None, None, :]


_PADDING_MASK = Exercise(
    name="padding_mask",
    call="padding_mask(attention_mask) with attention_mask a (B, T) array of 1 (real token) and 0 (padding), "
    "and expects a boolean (B, 1, 1, T) array, True = may attend",
    compare=equal_masks(("B", "1", "1", "T")),
    returns=_boolean_mask,
    mistakes=(
        Mistake(
            "the mask is inverted: True means 'may attend', so real tokens (attention_mask == 1) are True and "
            "padding False.",
            lambda attention_mask: _expand(np.asarray(attention_mask) == 0),
        ),
        Mistake(
            "the mask is (B, 1, T, 1): it would block queries, not keys. The padding is among the keys, the last "
            "axis of the scores (B, H, T_q, T_k): use attention_mask[:, None, None, :].",
            lambda attention_mask: (np.asarray(attention_mask) == 1)[:, None, :, None],
        ),
        Mistake(
            "the mask is still (B, T): add two axes, attention_mask[:, None, None, :], so that it broadcasts "
            "against the scores (B, H, T_q, T_k), the same for every head and every query.",
            lambda attention_mask: np.asarray(attention_mask) == 1,
        ),
        Mistake(
            "the mask is (B, 1, T): add one more axis, (B, 1, 1, T), so that it broadcasts against the scores "
            "(B, H, T_q, T_k) with heads.",
            lambda attention_mask: (np.asarray(attention_mask) == 1)[:, None, :],
        ),
    ),
    symptoms=(
        Symptom(
            "the values are right but the mask is not boolean: convert it, e.g. attention_mask.astype(bool) or "
            "attention_mask == 1. An integer or float mask is read as something else by attention functions.",
            _right_values_wrong_dtype,
        ),
        Symptom(
            "the mask is not boolean: compare with 1 (attention_mask == 1) or use .astype(bool).",
            lambda result, case: _as_array(result).dtype != np.bool_,
        ),
        Symptom(
            "the mask has the right number of values but the wrong shape: it must be (B, 1, 1, T), "
            "attention_mask[:, None, None, :].",
            lambda result, case: (
                _as_array(result).size == case.expected.size and _as_array(result).shape != case.expected.shape
            ),
        ),
    ),
    fallback="True where attention_mask is 1, then two new axes: (attention_mask == 1)[:, None, None, :].",
    on_error="attention_mask is a (B, T) numpy array of integers 0 and 1.",
)


def check_padding_mask(fn: Callable[[Any], Any]) -> None:
    """Check a learner's ``padding_mask(attention_mask)``: ``(B, T)`` of 0/1 -> boolean ``(B, 1, 1, T)``.

    Five cases (``attention_mask`` int64, as Hugging Face's tokenizers give it): a batch of three
    sentences of lengths 4, 2 and 3, a batch without padding, one sentence, ``T = 1``, and a
    batch ``B = T`` (an inverted shape ``(B, 1, T, 1)`` would not be told apart by size).
    """

    def batch(lengths: Sequence[int], seq_len: int) -> np.ndarray:
        return (np.arange(seq_len) < np.asarray(lengths)[:, None]).astype(np.int64)

    inputs = [
        ("3 sentences of lengths 4, 2, 3 padded to T=4", batch([4, 2, 3], 4)),
        ("no padding: B=2, T=3", batch([3, 3], 3)),
        ("one sentence of length 3 padded to T=6", batch([3], 6)),
        ("T=1: B=2", batch([1, 1], 1)),
        ("B = T = 5, lengths 5, 1, 3, 2, 4", batch([5, 1, 3, 2, 4], 5)),
    ]
    cases = [Case(name, (attention_mask,), masking.padding_mask(attention_mask)) for name, attention_mask in inputs]
    run_checks(_PADDING_MASK, fn, cases)


# --------------------------------------------------------------------------------------------
# Attention weights under a mask, with rows that allow no key


def _masked_weights(scores, mask, *, fill=-np.inf, axis=-1, zero_empty=True) -> np.ndarray:
    """The weights of a (right or wrong) masked softmax: blocked scores set to ``fill``, the softmax
    along ``axis``, then (``zero_empty``) every weight multiplied by the mask and ``nan`` set to 0."""
    scores = np.asarray(scores, dtype=np.float64)
    allowed = np.broadcast_to(mask, scores.shape)
    weights = attention.softmax(np.where(allowed, scores, fill), axis=axis)
    if zero_empty:
        weights = np.nan_to_num(weights * allowed, nan=0.0)
    return weights


def _after_softmax(scores, mask) -> np.ndarray:
    return attention.softmax(np.asarray(scores, dtype=np.float64)) * np.broadcast_to(mask, np.shape(scores))


def _renormalised(scores, mask, *, nan_to_zero=False) -> np.ndarray:
    weights = _after_softmax(scores, mask)
    with np.errstate(invalid="ignore", divide="ignore"):
        weights = weights / weights.sum(axis=-1, keepdims=True)
    return np.nan_to_num(weights, nan=0.0) if nan_to_zero else weights


def _no_max_subtraction(scores, mask) -> np.ndarray:
    with np.errstate(over="ignore", invalid="ignore"):
        exps = np.exp(np.where(np.broadcast_to(mask, np.shape(scores)), np.asarray(scores, np.float64), -np.inf))
        return np.nan_to_num(exps / exps.sum(axis=-1, keepdims=True), nan=0.0)


def _compare_weights(result: Any, expected: Any) -> str | None:
    """Weights close to ``expected`` (``nan`` equal to ``nan``, so that the known wrong versions that
    give ``nan`` are recognised), else what differs."""
    array = as_float_array(result)
    if array is None or array.ndim == 0:
        return f"expected the weights as a float array of shape (..., T_q, T_k), got {describe(result)}"
    expected = np.asarray(expected, dtype=np.float64)
    if array.shape != expected.shape:
        return f"expected weights of the scores' shape {named_shape(('...', 'T_q', 'T_k'), expected.shape)}, got {array.shape}"
    bad = ~np.isfinite(array) & np.isfinite(expected)
    if bad.any():
        rows = int(np.any(bad, axis=-1).sum())
        return f"{rows} row(s) of the weights hold nan or inf"
    if not np.allclose(array, expected, atol=1e-5, rtol=1e-4, equal_nan=True):
        return f"the weights differ from the reference (largest difference {np.nanmax(np.abs(array - expected)):.3g})"
    return None


def _rows(result, case):
    """``(weights, allowed, empty)``: the learner's weights as float64, the mask broadcast to them,
    and the rows whose keys are all blocked."""
    weights = as_float_array(result)
    allowed = np.broadcast_to(case.args[1], weights.shape)
    return weights, allowed, ~allowed.any(axis=-1)


def _nan_in_empty_rows_only(result, case) -> bool:
    weights, allowed, empty = _rows(result, case)
    bad = ~np.isfinite(weights).all(axis=-1)
    return bool(empty.any() and bad[empty].all() and not bad[~empty].any())


def _uniform_in_empty_rows(result, case) -> bool:
    weights, allowed, empty = _rows(result, case)
    return bool(empty.any() and np.allclose(weights[empty], 1.0 / weights.shape[-1], atol=1e-6))


def _non_finite(result, case) -> bool:
    return not np.isfinite(as_float_array(result)).all()


def _rows_sum_below_one(result, case) -> bool:
    weights, allowed, empty = _rows(result, case)
    sums = weights.sum(axis=-1)[~empty]
    blocked = np.abs(weights[~allowed]).max(initial=0.0)
    return bool(blocked < 1e-6 and np.all(sums < 1 + 1e-6) and np.any(sums < 1 - 1e-4))


def _weight_on_blocked(result, case) -> bool:
    weights, allowed, empty = _rows(result, case)
    return bool(np.any(np.abs(weights[~allowed]) > 1e-6))


def _columns_sum_to_one(result, case) -> bool:
    weights, allowed, empty = _rows(result, case)
    sums = weights.sum(axis=-2)
    counted = sums[np.isfinite(sums) & (sums > 0)]
    # never on an empty selection (np.allclose of nothing is True): a log-softmax has no positive column sum
    return bool(weights.shape[-2] > 1 and counted.size > 0 and np.allclose(counted, 1.0, atol=1e-4))


def _fill_not_low_enough(result, case) -> bool:
    """The allowed weights of some row vanished, though its blocked keys got nothing: the case's allowed
    scores lie far below 0 (-20,000 here), and a fill such as -1e4 beat them before the mask was applied."""
    weights, allowed, empty = _rows(result, case)
    scores = np.broadcast_to(np.asarray(case.args[0], dtype=np.float64), weights.shape)
    if not np.all(np.isfinite(weights)) or np.abs(weights[~allowed]).max(initial=0.0) > 1e-6:
        return False
    lost = ~empty & (weights.sum(axis=-1) < 0.5)  # rows that allow keys but hold almost no weight
    highest_allowed = np.where(allowed, scores, -np.inf).max(axis=-1)
    return bool(np.any(lost & (highest_allowed < -1_000)))


_SAFE_MASKED_SOFTMAX = Exercise(
    name="safe_masked_softmax",
    call="safe_masked_softmax(scores, mask) with scores a float array (..., T_q, T_k) and mask a boolean array "
    "broadcastable to it (True = may attend), and expects the weights (..., T_q, T_k): each row's softmax over its "
    "allowed keys, 0 on blocked keys, and a row of zeros where no key is allowed",
    compare=_compare_weights,
    mistakes=(
        Mistake(
            "a row with no allowed key is nan: with every score -inf, the softmax computes -inf - (-inf). "
            "Give such a row zeros: np.nan_to_num(weights), or fill with np.finfo(scores.dtype).min and multiply "
            "the weights by the mask.",
            lambda scores, mask: _masked_weights(scores, mask, zero_empty=False),
        ),
        Mistake(
            "a row with no allowed key gets uniform weights 1/T_k: its blocked scores are all equal (the dtype's "
            "minimum, or -1e9), so the softmax shares the weight evenly among keys that are all blocked. Such a row "
            "must be zeros: multiply the weights by the mask.",
            lambda scores, mask: _masked_weights(scores, mask, fill=float(np.finfo(np.float64).min), zero_empty=False),
        ),
        Mistake(
            "the weights are masked after the softmax and divided by their new sum, nan set to 0: when the blocked "
            "keys have far larger scores, the allowed weights underflow to 0 before you divide, so the row is lost. "
            "Block the scores before the softmax instead.",
            lambda scores, mask: _renormalised(scores, mask, nan_to_zero=True),
        ),
        Mistake(
            "the mask is applied after the softmax: the blocked keys' weights are removed, so each row sums to less "
            "than 1. Block the scores before the softmax: np.where(mask, scores, -np.inf).",
            _after_softmax,
        ),
        Mistake(
            "the weights are masked after the softmax and divided by their new sum. That is right in exact "
            "arithmetic, but when the blocked keys have far larger scores the allowed weights underflow to 0, and "
            "0 / 0 is nan. Block the scores before the softmax instead.",
            _renormalised,
        ),
        Mistake(
            "the softmax is taken over the queries (axis -2): each query's weights over its keys must sum to 1, "
            "so take the softmax along the last axis.",
            lambda scores, mask: _masked_weights(scores, mask, axis=-2),
        ),
        Mistake(
            "the blocked scores are set to 0 (or multiplied by the mask): a score of 0 is not blocked, exp(0) = 1 "
            "still gets weight. Set them to -np.inf (or np.finfo(scores.dtype).min) before the softmax.",
            lambda scores, mask: _masked_weights(scores, mask, fill=0.0),
        ),
        Mistake(
            "the blocked scores are set to 0 (or multiplied by the mask): a score of 0 is not blocked, exp(0) = 1 "
            "still gets weight. Set them to -np.inf (or np.finfo(scores.dtype).min) before the softmax.",
            lambda scores, mask: _masked_weights(scores, mask, fill=0.0, zero_empty=False),
        ),
        Mistake(
            "the mask is inverted: True means 'may attend', so the scores to block are where the mask is False: "
            "np.where(mask, scores, -np.inf).",
            lambda scores, mask: masking.safe_masked_softmax(np.asarray(scores, dtype=np.float64), ~np.asarray(mask)),
        ),
        Mistake(
            "the exponentials overflow (exp of a score near 1000 is inf): subtract each row's largest allowed "
            "score before the exponential, as the softmax of lesson 04 does.",
            _no_max_subtraction,
        ),
        Mistake(
            "the mask is ignored: block the scores where the mask is False before the softmax.",
            lambda scores, mask: attention.softmax(np.asarray(scores, dtype=np.float64)),
        ),
    ),
    symptoms=(
        Symptom(
            "a row with no allowed key is nan (-inf - (-inf) in the softmax): give such a row zeros, e.g. "
            "np.nan_to_num(weights), or multiply the weights by the mask after filling with np.finfo(scores.dtype).min.",
            _nan_in_empty_rows_only,
        ),
        Symptom(
            "a row with no allowed key gets uniform weights: such a row must be zeros (multiply the weights by "
            "the mask).",
            _uniform_in_empty_rows,
        ),
        Symptom(
            "nan or inf in a row that allows some keys: either exp overflowed (subtract each row's largest allowed "
            "score before the exponential) or a sum of 0 was divided (masking after the softmax, then dividing by "
            "the new sum, fails when the blocked scores are far larger). Block the scores before the softmax.",
            _non_finite,
        ),
        Symptom(
            "the value you fill the blocked scores with is not below this case's allowed scores (about -20,000): "
            "a 'large' negative number such as -1e4 beats them, so the softmax gives the blocked keys the weight, "
            "and multiplying by the mask then leaves the row with almost none. Fill with -np.inf or "
            "np.finfo(scores.dtype).min, below any score.",
            _fill_not_low_enough,
        ),
        Symptom(
            "the rows sum to less than 1 though the blocked keys get 0: the mask is applied after the softmax. "
            "Block the scores before it.",
            _rows_sum_below_one,
        ),
        Symptom(
            "the weights sum to 1 over the queries: take the softmax along the last axis (the keys).",
            _columns_sum_to_one,
        ),
        Symptom(
            "a blocked key has a weight that is not zero: is the mask inverted (True = may attend), or is the "
            "value you fill the blocked scores with not low enough? A 'large' negative number such as -1e4 still "
            "beats allowed scores below it; use -np.inf or np.finfo(scores.dtype).min.",
            _weight_on_blocked,
        ),
    ),
    fallback="block the scores where the mask is False (np.where(mask, scores, -np.inf)), take the softmax along "
    "the last axis, then set the rows with no allowed key to 0.",
    on_error="the mask may have fewer axes than the scores (a padding mask (B, 1, T_k)): np.where(mask, scores, "
    "fill) broadcasts it, scores[~mask] = fill does not. Do not change scores in place.",
)


def safe_masked_softmax_cases() -> list[Case]:
    """The cases of :func:`check_safe_masked_softmax`, each with the reference's weights."""
    rng = np.random.default_rng(505)

    def allowed_somewhere(mask):
        mask = mask.copy()
        mask[~mask.any(axis=-1), 0] = True
        return mask

    left_padded = np.arange(5) >= np.array([0, 2])[:, None]  # (B=2, T=5): sentence 2 has 2 [PAD]s on the left
    blocked_high = rng.standard_normal((3, 6))
    high_mask = np.arange(6) < np.array([4, 2, 5])[:, None]  # (3, 6)
    blocked_high[~high_mask] += 1000.0  # the blocked keys' scores dwarf the allowed ones
    # allowed scores far below 0 (a fill of -1e4 is not low enough for the first row), multiples of
    # 1/4, exact in float32 too
    very_negative = np.array([[-20_000.0], [-5_000.0]]) + np.round(4 * rng.standard_normal((2, 4))) / 4
    large_noise = np.round(4 * rng.standard_normal((3, 4))) / 4
    inputs = [
        ("scores (3, 5), a mask of the same shape", 2 * rng.standard_normal((3, 5)),
         allowed_somewhere(rng.random((3, 5)) < 0.6)),
        ("a padding mask (B=2, 1, T_k=6) on scores (B=2, T_q=4, T_k=6)", rng.standard_normal((2, 4, 6)),
         (np.arange(6) < np.array([6, 3])[:, None])[:, None, :]),
        ("a causal mask (T, T) on heads (B=2, H=2, T=5, T=5)", rng.standard_normal((2, 2, 5, 5)),
         np.tri(5, dtype=bool)),
        ("large scores (about 1000 and -1000)", np.array([[1000.0], [1000.0], [-1000.0]]) + large_noise,
         allowed_somewhere(rng.random((3, 4)) < 0.7)),
        ("blocked keys with far larger scores (+1000) than the allowed ones", blocked_high, high_mask),
        ("rows with no allowed key: left padding and a causal mask (B=2, 1, T=5, T=5) on (B=2, H=3, T, T)",
         rng.standard_normal((2, 3, 5, 5)), np.tri(5, dtype=bool) & left_padded[:, None, None, :]),
        ("very negative allowed scores (about -20,000 and -5,000)", very_negative,
         np.array([[True, True, False, False], [False, True, True, True]])),
        ("float32 scores (2, 3, 4)", rng.standard_normal((2, 3, 4)).astype(np.float32),
         allowed_somewhere(rng.random((2, 3, 4)) < 0.6)),
    ]
    return [
        Case(name, (scores, mask), masking.safe_masked_softmax(np.asarray(scores, dtype=np.float64), mask))
        for name, scores, mask in inputs
    ]


def check_safe_masked_softmax(fn: Callable[[Any, Any], Any]) -> None:
    """Check a learner's ``safe_masked_softmax(scores, mask)`` against
    :func:`course_utils.masking.safe_masked_softmax`.

    ``scores (..., T_q, T_k)`` float, ``mask`` boolean broadcastable to it, True = may attend; the
    weights are each row's softmax over its allowed keys and a row of zeros where no key is allowed.
    Eight cases, in this order: a plain ``(3, 5)`` case, a padding mask ``(B, 1, T_k)``, a causal
    ``(T, T)`` mask on heads, scores near 1000 and -1000 (no max subtraction overflows), blocked keys
    with scores 1000 above the allowed ones (masking after the softmax and renormalising gives
    0 / 0 there), left padding under a causal mask (rows with no allowed key), allowed scores near
    -20,000 and -5,000 (a fill such as -1e4 is not low enough for the first row, 0 for either), and
    float32 scores. ``-inf``, the dtype's minimum or a number such as -1e9, with the empty rows set
    to 0 by any means, passes.
    """
    run_checks(_SAFE_MASKED_SOFTMAX, fn, safe_masked_softmax_cases())
