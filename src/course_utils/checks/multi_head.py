"""Checkers of lesson 04's multi-head pieces: ``split_heads`` and ``merge_heads``.

The references are :func:`course_utils.attention.split_heads` and
:func:`course_utils.attention.merge_heads`; results may be numpy arrays or torch tensors.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .. import attention
from .engine import Case, Exercise, Mistake, Symptom, run_checks
from .values import close_values, shape_of

# --------------------------------------------------------------------------------------------
# Lesson 04: split_heads and merge_heads


def _split(x, n_heads: int, order: str) -> np.ndarray:
    """Wrong and right splits: ``order`` is how the last axis is cut and which axes are swapped."""
    x = np.asarray(x, dtype=np.float64)
    batch, seq_len, d_model = x.shape
    d_head = d_model // n_heads
    if order == "reshape only":  # the classic bug: the right shape, tokens mixed up
        return x.reshape(batch, n_heads, seq_len, d_head)
    if order == "no transpose":
        return x.reshape(batch, seq_len, n_heads, d_head)
    if order == "interleaved":  # head h gets every H-th value
        return x.reshape(batch, seq_len, d_head, n_heads).transpose(0, 3, 1, 2)
    if order == "transpose (0, 2, 3, 1)":
        return x.reshape(batch, seq_len, n_heads, d_head).transpose(0, 2, 3, 1)
    raise ValueError(order)


_SPLIT_HEADS = Exercise(
    name="split_heads",
    call="split_heads(x, n_heads) with x (B, T, D) and n_heads an integer dividing D, and expects "
    "(B, n_heads, T, D // n_heads)",
    compare=lambda result, expected: close_values(result, expected, "the result", ("B", "H", "T", "D/H")),
    mistakes=(
        Mistake(
            "the shape is right but the values are mixed up: a reshape straight to (B, H, T, D/H) cuts the "
            "sequence, not each token's vector. Reshape to (B, T, H, D/H) first, then swap the axes T and H "
            "(x.transpose(0, 2, 1, 3)).",
            lambda x, n_heads: _split(x, n_heads, "reshape only"),
        ),
        Mistake(
            "the result is (B, T, H, D/H): swap the axes T and H as well, x.transpose(0, 2, 1, 3), so that each "
            "head holds a whole sequence.",
            lambda x, n_heads: _split(x, n_heads, "no transpose"),
        ),
        Mistake(
            "each head gets every H-th value of a token: reshape to (B, T, H, D/H), not (B, T, D/H, H), so that "
            "head h gets the values h*D/H ... (h+1)*D/H - 1.",
            lambda x, n_heads: _split(x, n_heads, "interleaved"),
        ),
        Mistake(
            "the wrong axes are swapped: after the reshape to (B, T, H, D/H), swap only the axes 1 and 2, "
            "x.transpose(0, 2, 1, 3).",
            lambda x, n_heads: _split(x, n_heads, "transpose (0, 2, 3, 1)"),
        ),
    ),
    symptoms=(
        Symptom(
            "the result is (B, T, H, D/H): swap the axes T and H as well, x.transpose(0, 2, 1, 3).",
            lambda result, case: shape_of(result) == shape_of(case.expected.transpose(0, 2, 1, 3)),
        ),
        Symptom(
            "the axes are reversed: x.T reverses every axis of a 4-D array; use x.transpose(0, 2, 1, 3).",
            lambda result, case: shape_of(result) == tuple(case.expected.shape[i] for i in (3, 1, 2, 0)),
        ),
        Symptom(
            "the shape is right but the values are not: reshape to (B, T, H, D/H), then swap the axes T and H.",
            lambda result, case: shape_of(result) == case.expected.shape,
        ),
    ),
    fallback="reshape x to (B, T, H, D/H), then swap the axes 1 and 2: (B, H, T, D/H).",
    on_error="x is (B, T, D); D // n_heads is the size of a head; reshape to (B, T, n_heads, D // n_heads) "
    "then transpose.",
)


def check_split_heads(fn: Callable[..., Any]) -> None:
    """Check a learner's ``split_heads(x, n_heads)``: ``(B, T, D) -> (B, H, T, D/H)``.

    The reference is :func:`course_utils.attention.split_heads`. Six cases: ``(2, 3, 8)`` in 2
    heads, ``(1, 5, 6)`` in 3, ``T = H`` (a missing transpose keeps the right shape), one head,
    heads of size 1, and float32.
    """
    rng = np.random.default_rng(406)
    inputs = [
        ("B=2, T=3, D=8, H=2", (2, 3, 8), 2, np.float64),
        ("B=1, T=5, D=6, H=3", (1, 5, 6), 3, np.float64),
        ("T = H: B=2, T=4, D=8, H=4", (2, 4, 8), 4, np.float64),
        ("one head: B=2, T=3, D=4, H=1", (2, 3, 4), 1, np.float64),
        ("heads of size 1: B=1, T=2, D=5, H=5", (1, 2, 5), 5, np.float64),
        ("float32: B=3, T=2, D=6, H=2", (3, 2, 6), 2, np.float32),
    ]
    cases = []
    for name, shape, n_heads, dtype in inputs:
        x = rng.standard_normal(shape).astype(dtype)
        cases.append(Case(name, (x, n_heads), attention.split_heads(x, n_heads)))
    run_checks(_SPLIT_HEADS, fn, cases)


def _merge(x, order: str) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    batch, n_heads, seq_len, d_head = x.shape
    if order == "reshape only":
        return x.reshape(batch, seq_len, n_heads * d_head)
    if order == "interleaved":
        return x.transpose(0, 2, 3, 1).reshape(batch, seq_len, n_heads * d_head)
    if order == "no reshape":
        return x.transpose(0, 2, 1, 3)
    if order == "along T":
        return np.concatenate(list(x.transpose(1, 0, 2, 3)), axis=1)
    raise ValueError(order)


_MERGE_HEADS = Exercise(
    name="merge_heads",
    call="merge_heads(x) with x (B, H, T, d_head), and expects (B, T, H * d_head)",
    compare=lambda result, expected: close_values(result, expected, "the result", ("B", "T", "H*d_head")),
    mistakes=(
        Mistake(
            "the shape is right but the values are mixed up: swap the axes H and T back first "
            "(x.transpose(0, 2, 1, 3)), then reshape to (B, T, H * d_head).",
            lambda x: _merge(x, "reshape only"),
        ),
        Mistake(
            "the heads are interleaved: after swapping H and T, (B, T, H, d_head), reshape without moving "
            "d_head, so that head h fills the values h*d_head ... (h+1)*d_head - 1.",
            lambda x: _merge(x, "interleaved"),
        ),
        Mistake(
            "the result is (B, T, H, d_head): concatenate the heads of each token with a reshape to "
            "(B, T, H * d_head).",
            lambda x: _merge(x, "no reshape"),
        ),
        Mistake(
            "the heads are concatenated along the sequence: concatenate them along the last axis, each token "
            "gets its H vectors side by side.",
            lambda x: _merge(x, "along T"),
        ),
    ),
    symptoms=(
        Symptom(
            "the shape is right but the values are not: swap the axes H and T back, then reshape.",
            lambda result, case: shape_of(result) == case.expected.shape,
        ),
    ),
    fallback="swap the axes 1 and 2, (B, T, H, d_head), then reshape to (B, T, H * d_head).",
    on_error="x is (B, H, T, d_head): x.transpose(0, 2, 1, 3) is (B, T, H, d_head), then reshape "
    "(a transposed array may need np.ascontiguousarray or .reshape rather than .view in torch).",
)


def check_merge_heads(fn: Callable[..., Any]) -> None:
    """Check a learner's ``merge_heads(x)``: ``(B, H, T, d_head) -> (B, T, H * d_head)``.

    The reference is :func:`course_utils.attention.merge_heads`. Five cases: ``(2, 2, 3, 4)``,
    ``(1, 3, 5, 2)``, ``T = H``, one head, and float32.
    """
    rng = np.random.default_rng(407)
    inputs = [
        ("B=2, H=2, T=3, d_head=4", (2, 2, 3, 4), np.float64),
        ("B=1, H=3, T=5, d_head=2", (1, 3, 5, 2), np.float64),
        ("T = H: B=2, H=4, T=4, d_head=3", (2, 4, 4, 3), np.float64),
        ("one head: B=2, H=1, T=3, d_head=4", (2, 1, 3, 4), np.float64),
        ("float32: B=3, H=2, T=2, d_head=3", (3, 2, 2, 3), np.float32),
    ]
    cases = []
    for name, shape, dtype in inputs:
        x = rng.standard_normal(shape).astype(dtype)
        cases.append(Case(name, (x,), attention.merge_heads(x)))
    run_checks(_MERGE_HEADS, fn, cases)
