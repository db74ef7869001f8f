"""Checkers of lesson 03: the sinusoidal encoding, and how alike two positions look by their distance."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .. import positional
from .engine import Case, Exercise, Mistake, Symptom, close_arrays, run_checks

# --------------------------------------------------------------------------------------------
# The sinusoidal encoding


def _sinusoids(positions, rates, even=np.sin, odd=np.cos) -> np.ndarray:
    """``even`` of the angles in even columns, ``odd`` in odd columns; angles ``positions x rates``."""
    angles = np.asarray(positions, dtype=np.float64)[:, None] * rates[None, :]  # (T, D)
    table = np.empty_like(angles)
    table[:, 0::2], table[:, 1::2] = even(angles[:, 0::2]), odd(angles[:, 1::2])
    return table


def _pair(d_model: int) -> np.ndarray:
    return np.arange(d_model) // 2  # (D,): the pair index i of every dimension


def _rates(d_model: int, exponent: np.ndarray, base: float = 10000.0) -> np.ndarray:
    return 1.0 / np.power(base, exponent)  # (D,)


def _right_rates(d_model: int) -> np.ndarray:
    return _rates(d_model, 2 * _pair(d_model) / d_model)


def _positions(seq_len: int) -> np.ndarray:
    return np.arange(seq_len)


def _concatenated(seq_len: int, d_model: int) -> np.ndarray:
    angles = _positions(seq_len)[:, None] * _right_rates(d_model)[None, 0::2]  # (T, D/2)
    return np.concatenate([np.sin(angles), np.cos(angles)], axis=1)


_SINUSOIDAL_ENCODING = Exercise(
    name="sinusoidal_encoding",
    call="sinusoidal_encoding(seq_len, d_model) with two positive integers (d_model even), and expects an "
    "array of shape (seq_len, d_model)",
    compare=close_arrays(("seq_len", "d_model")),
    mistakes=(
        Mistake(
            "sin and cos are swapped: the even dimensions (0, 2, 4, ...) hold sines and the odd ones cosines. "
            "Row 0, position 0, should read [0, 1, 0, 1, ...].",
            lambda t, d: _sinusoids(_positions(t), _right_rates(d), even=np.cos, odd=np.sin),
        ),
        Mistake(
            "the sines fill the first half of the columns and the cosines the second half: that is a "
            "concatenation. Interleave them: column 2i is a sine and column 2i+1 its cosine "
            "(pe[:, 0::2] = ... and pe[:, 1::2] = ...).",
            _concatenated,
        ),
        Mistake(
            "the result is transposed: one row per position (seq_len rows), one column per dimension "
            "(d_model columns).",
            lambda t, d: positional.sinusoidal_encoding(t, d).T,
        ),
        Mistake(
            "positions count from 0: row 0 is the encoding of position 0, [0, 1, 0, 1, ...]. Use "
            "np.arange(seq_len), not the numbers 1 .. seq_len.",
            lambda t, d: _sinusoids(np.arange(1, t + 1), _right_rates(d)),
        ),
        Mistake(
            "the odd dimensions have the wrong frequency: in 10000^(2i/d_model), i is the index of the "
            "(sin, cos) *pair*, i = j // 2 for dimension j, so dimensions 2i and 2i+1 share one frequency. "
            "It looks like you used the dimension index j, 10000^(j/d_model).",
            lambda t, d: _sinusoids(_positions(t), _rates(d, np.arange(d) / d)),
        ),
        Mistake(
            "the frequencies fall twice too fast: in 10000^(2i/d_model), 2i is the even dimension of "
            "the pair (i = j // 2), not twice the dimension index j.",
            lambda t, d: _sinusoids(_positions(t), _rates(d, 2 * np.arange(d) / d)),
        ),
        Mistake(
            "the frequencies fall twice too fast: when you loop over the even dimensions "
            "(for i in range(0, d_model, 2)), i is already 2 x the pair index, so the exponent is "
            "i / d_model, not 2 * i / d_model.",
            lambda t, d: _sinusoids(_positions(t), _rates(d, 4 * _pair(d) / d)),
        ),
        Mistake(
            "the frequencies fall too slowly: the exponent is 2i/d_model. Did you forget the factor 2?",
            lambda t, d: _sinusoids(_positions(t), _rates(d, _pair(d) / d)),
        ),
        Mistake(
            "every pair of dimensions turns at the same speed, as if the exponent 2i/d_model were 0: "
            "integer division (2 * i // d_model) rounds it down to 0. Use / instead of //.",
            lambda t, d: _sinusoids(_positions(t), np.ones(d)),
        ),
        Mistake(
            "the positions are multiplied by 10000^(2i/d_model): they should be divided by it "
            "(pos / 10000 ** (2 * i / d_model), or pos * 10000 ** (-2 * i / d_model)). The frequencies "
            "must fall from one pair to the next, not grow.",
            lambda t, d: _sinusoids(_positions(t), 1.0 / _right_rates(d)),
        ),
        Mistake(
            "the base of the power is 10000, not 1000.",
            lambda t, d: _sinusoids(_positions(t), _rates(d, 2 * _pair(d) / d, base=1000.0)),
        ),
        Mistake(
            "the base of the power is 10000, not e: np.exp(2 * i / d_model) is e^(2i/d_model). With "
            "exponentials, write np.exp(-2 * i * np.log(10000) / d_model).",
            lambda t, d: _sinusoids(_positions(t), _rates(d, 2 * _pair(d) / d, base=np.e)),
        ),
        Mistake(
            "the angles pos / 10000^(2i/d_model) are already in radians, which is what np.sin and "
            "np.cos take: do not convert them (np.radians, np.deg2rad, math.radians).",
            lambda t, d: _sinusoids(_positions(t), np.deg2rad(_right_rates(d))),
        ),
        Mistake(
            "the angles pos / 10000^(2i/d_model) are already in radians, which is what np.sin and "
            "np.cos take: do not convert them (np.degrees, np.rad2deg).",
            lambda t, d: _sinusoids(_positions(t), np.rad2deg(_right_rates(d))),
        ),
        Mistake(
            "every dimension holds a sine: the odd dimensions hold cosines, cos(pos / 10000^(2i/d_model)).",
            lambda t, d: _sinusoids(_positions(t), _right_rates(d), odd=np.sin),
        ),
        Mistake(
            "every dimension holds a cosine: the even dimensions hold sines, sin(pos / 10000^(2i/d_model)).",
            lambda t, d: _sinusoids(_positions(t), _right_rates(d), even=np.cos),
        ),
        Mistake(
            "these are the angles pos / 10000^(2i/d_model) themselves: take their sin (even dimensions) "
            "and their cos (odd dimensions).",
            lambda t, d: _positions(t)[:, None] * _right_rates(d)[None, :],
        ),
    ),
    symptoms=(
        Symptom(
            "return the table (seq_len, d_model) itself, without a batch axis in front.",
            lambda result, case: np.shape(result) == (1, *np.shape(case.expected)),
        ),
        Symptom(
            "the result has d_model / 2 columns: each frequency gives two columns, a sine (even "
            "dimension 2i) and a cosine (odd dimension 2i+1).",
            lambda result, case: np.shape(result) == (case.expected.shape[0], case.expected.shape[1] // 2),
        ),
        Symptom(
            "one row per position 0, 1, ..., seq_len - 1: the table should have seq_len rows.",
            lambda result, case: (
                np.ndim(result) == 2
                and np.shape(result)[0] != case.expected.shape[0]
                and np.shape(result)[1] == case.expected.shape[1]
            ),
        ),
        Symptom(
            "some values are outside [-1, 1], which sines and cosines never are.",
            lambda result, case: np.any(np.abs(np.asarray(result, dtype=np.float64)) > 1 + 1e-6),
        ),
    ),
    fallback="compare your table with PE[pos, 2i] = sin(pos / 10000^(2i/d_model)) and PE[pos, 2i+1] = "
    "cos(pos / 10000^(2i/d_model)), for the positions pos = 0 .. seq_len-1.",
    on_error="seq_len and d_model are plain integers; build the positions with np.arange(seq_len) and the "
    "pair indices with np.arange(0, d_model, 2) or np.arange(d_model // 2).",
)


def check_sinusoidal_encoding(fn: Callable[[int, int], Any]) -> None:
    """Check a learner's ``sinusoidal_encoding(seq_len, d_model) -> (seq_len, d_model)`` table.

    The reference is :func:`course_utils.positional.sinusoidal_encoding` (sin and cos interleaved,
    positions from 0). Six cases, all with an even ``d_model``: a non-square table first (it tells
    a transposed table apart), a longer sequence, a square one, the smallest ``d_model`` (2), a
    single position, and 128 positions of 64 dimensions. Float32 arithmetic, loops, torch tensors
    all pass.
    """
    sizes = {
        "seq_len=10, d_model=8": (10, 8),
        "a longer sequence: seq_len=50, d_model=16": (50, 16),
        "square: seq_len=d_model=6": (6, 6),
        "the smallest d_model: seq_len=7, d_model=2": (7, 2),
        "one position: seq_len=1, d_model=4": (1, 4),
        "128 positions of 64 dimensions": (128, 64),
    }
    cases = [Case(name, (t, d), positional.sinusoidal_encoding(t, d)) for name, (t, d) in sizes.items()]
    run_checks(_SINUSOIDAL_ENCODING, fn, cases)


# --------------------------------------------------------------------------------------------
# How alike two positions look, by their distance

# The wrong versions take the arguments of dots_by_distance: p = table (L, D), s = start, k = max_distance.
def _rows(p, s, k) -> np.ndarray:
    return np.asarray(p, dtype=np.float64)[s : s + k + 1]  # (K + 1, D): positions s .. s + K


def _cosines(p, s, k) -> np.ndarray:
    rows, here = _rows(p, s, k), np.asarray(p, dtype=np.float64)[s]
    return rows @ here / (np.linalg.norm(rows, axis=1) * np.linalg.norm(here))


_DOTS_BY_DISTANCE = Exercise(
    name="dots_by_distance",
    call="dots_by_distance(table, start, max_distance) with a position table (L, D) and two integers "
    "(start + max_distance < L), and expects an array of max_distance + 1 numbers",
    compare=close_arrays(("k",)),
    mistakes=(
        Mistake(
            "entry k compares position `start` with the first rows of the table (positions 0 .. max_distance): "
            "it should compare it with position start + k, table[start + k].",
            lambda p, s, k: np.asarray(p, dtype=np.float64)[: k + 1] @ np.asarray(p, dtype=np.float64)[s],
        ),
        Mistake(
            "these are the dot products measured from position 0, whatever `start` is: measure from "
            "position `start`, table[start] . table[start + k]. (For the sinusoidal table the two agree; "
            "for a learned table they do not.)",
            lambda p, s, k: _rows(p, 0, k) @ np.asarray(p, dtype=np.float64)[0],
        ),
        Mistake(
            "entry k compares position `start` with position start - k, k positions back: look k "
            "positions on, table[start + k].",
            lambda p, s, k: np.asarray(p, dtype=np.float64)[s - np.arange(k + 1)] @ np.asarray(p, dtype=np.float64)[s],
        ),
        Mistake(
            "each dot product is divided by the lengths of the two vectors: that is the cosine similarity. "
            "Attention compares vectors with the plain dot product, so return that.",
            _cosines,
        ),
        Mistake(
            "each dot product is divided by D: a dot product sums the products of the coordinates, it does "
            "not average them (np.dot, @, or .sum(), not .mean()).",
            lambda p, s, k: _rows(p, s, k) @ np.asarray(p, dtype=np.float64)[s] / np.shape(p)[1],
        ),
        Mistake(
            "these are squared distances, sum((a - b)**2): the exercise asks for dot products, sum(a * b).",
            lambda p, s, k: ((_rows(p, s, k) - np.asarray(p, dtype=np.float64)[s]) ** 2).sum(axis=1),
        ),
        Mistake(
            "the distances stop one short: k runs over 0, 1, ..., max_distance, max_distance + 1 entries "
            "(range(max_distance + 1)).",
            lambda p, s, k: _rows(p, s, k)[:-1] @ np.asarray(p, dtype=np.float64)[s],
        ),
        Mistake(
            "the first entry is distance 1: distance 0 comes first (a position with itself), then 1, ..., "
            "max_distance.",
            lambda p, s, k: _rows(p, s + 1, k - 1) @ np.asarray(p, dtype=np.float64)[s],
        ),
    ),
    symptoms=(
        Symptom(
            "one number per distance: the products of the coordinates must be summed over the D "
            "dimensions (a dot product), which leaves an array of max_distance + 1 numbers.",
            lambda result, case: np.shape(result) == (case.expected.shape[0], np.shape(case.args[0])[1]),
        ),
        Symptom(
            "the result has one number per dimension: sum over the dimensions (axis=1 of the rows, or "
            "@ the vector of `start`), not over the positions.",
            lambda result, case: np.shape(result) == (np.shape(case.args[0])[1],) != case.expected.shape,
        ),
        Symptom(
            "the result is a matrix of dot products between many positions: return only position `start` "
            "against positions start, start + 1, ..., start + max_distance.",
            lambda result, case: np.ndim(result) == 2,
        ),
    ),
    fallback="entry k should be the dot product table[start] . table[start + k], for k = 0 .. max_distance.",
    on_error="table is an array (L, D), one row per position; start and max_distance are integers with "
    "start + max_distance < L, so table[start + k] exists for every k up to max_distance.",
)


def _dots_case(name: str, table: np.ndarray, start: int, max_distance: int) -> Case:
    return Case(name, (table, start, max_distance), positional.dots_by_distance(table, start, max_distance))


def check_dots_by_distance(fn: Callable[[Any, int, int], Any]) -> None:
    """Check a learner's ``dots_by_distance(table, start, max_distance) -> (max_distance + 1,)``.

    Entry ``k`` is ``table[start] . table[start + k]``; the reference is
    :func:`course_utils.positional.dots_by_distance`. Six cases: a learned-like (random) table first,
    where the start matters (on a sinusoidal table a function that ignores it would pass), the
    sinusoidal table from two starts, a table of float32, a single distance (0), and a start at
    the table's first row. Loops, ``np.dot``, ``@``, ``einsum`` and torch all pass.
    """
    rng = np.random.default_rng(11)
    learned = rng.normal(0.0, 1.0, (40, 6))  # (L, D): a table as a model starts it, random
    sinusoidal = positional.sinusoidal_encoding(120, 16)
    cases = [
        _dots_case("a learned (random) table (40, 6), start=12, max_distance=8", learned, 12, 8),
        _dots_case("the sinusoidal table (120, 16), start=30, max_distance=50", sinusoidal, 30, 50),
        _dots_case("the sinusoidal table (120, 16), start=3, max_distance=10", sinusoidal, 3, 10),
        _dots_case(
            "a float32 table (30, 5), start=7, max_distance=12", rng.normal(0.0, 0.5, (30, 5)).astype(np.float32), 7, 12
        ),
        _dots_case("distance 0 only: start=5, max_distance=0", learned, 5, 0),
        _dots_case("from the first row: start=0, max_distance=20", learned, 0, 20),
    ]
    run_checks(_DOTS_BY_DISTANCE, fn, cases)
