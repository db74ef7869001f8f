"""Checkers of lesson 05: the causal mask and the padding mask (boolean, True = may attend).

The references are :func:`course_utils.masking.causal_mask` and :func:`course_utils.masking.padding_mask`.
Results may be numpy arrays, torch tensors or nested lists of booleans; they must be boolean (an
integer or float mask means something else to attention functions: an additive mask, or indices).
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from .. import masking
from .engine import Case, Exercise, Mistake, Symptom, run_checks
from .values import describe, named_shape


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
