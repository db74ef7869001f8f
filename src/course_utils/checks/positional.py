"""Checkers of lesson 03: the sinusoidal encoding, and adding positions to token embeddings."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .. import data, positional
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
# Adding positions to token embeddings

# The wrong versions take the arguments of add_positions: e = embeddings (T, D), p = table (L, D).
_ADD_POSITIONS = Exercise(
    name="add_positions",
    call="add_positions(embeddings, positions_table) with embeddings (T, D) and positions_table (L, D), "
    "L >= T, and expects an array (T, D)",
    compare=close_arrays(("T", "D")),
    mistakes=(
        Mistake(
            "the positions are concatenated to the embeddings, side by side (T, 2D): add them instead, "
            "so that each token's vector keeps its size D.",
            lambda e, p: np.concatenate([e, p[: len(e)]], axis=1),
        ),
        Mistake(
            "the positions are stacked under the embeddings (2T, D): add them, row by row.",
            lambda e, p: np.concatenate([e, p[: len(e)]], axis=0),
        ),
        Mistake(
            "the embeddings are multiplied by the positions: add them (+), do not multiply.",
            lambda e, p: e * p[: len(e)],
        ),
        Mistake(
            "the positions are subtracted: add them.",
            lambda e, p: e - p[: len(e)],
        ),
        Mistake(
            "token t gets row t + 1 of the table: positions count from 0, so the first token gets row 0 "
            "(positions_table[:T], not positions_table[1:T+1]).",
            lambda e, p: e + p[1 : len(e) + 1],
        ),
        Mistake(
            "the tokens get the last T rows of the table: they get the first T, positions_table[:T].",
            lambda e, p: e + p[len(p) - len(e) :],
        ),
        Mistake(
            "every token got the same row of the table: token t gets its own row t, so add positions_table[:T].",
            lambda e, p: e + p[len(e)],
        ),
        Mistake(
            "every token got the same row of the table: token t gets its own row t, so add positions_table[:T].",
            lambda e, p: e + p[len(e) - 1],
        ),
        Mistake(
            "every token got row 0 of the table: token t gets its own row t, so add positions_table[:T].",
            lambda e, p: e + p[0],
        ),
        Mistake(
            "the result holds the positions only: add the token embeddings to them.",
            lambda e, p: p[: len(e)],
        ),
        Mistake(
            "the result is the embeddings unchanged: add the rows of the positions table to them.",
            lambda e, p: e,
        ),
    ),
    symptoms=(
        Symptom(
            "the result has one row per row of the table: it should have one row per token. Use only the "
            "first T rows of the table, positions_table[:T] with T = len(embeddings).",
            lambda result, case: np.shape(result) == np.shape(case.args[1]),
        ),
    ),
    fallback="each token t should get embeddings[t] + positions_table[t], for t = 0 .. T-1.",
    on_error="the table has L rows, one per position the model knows, usually more than the T tokens: "
    "add only its first T rows, positions_table[:T] with T = embeddings.shape[0].",
)


def _add_case(name: str, embeddings: np.ndarray, table: np.ndarray, dtype: type = np.float64) -> Case:
    args = (np.asarray(embeddings, dtype=dtype), np.asarray(table, dtype=dtype))
    return Case(name, args, positional.add_positions(*args))


def check_add_positions(fn: Callable[[Any, Any], Any]) -> None:
    """Check a learner's ``add_positions(embeddings, positions_table) -> (T, D)``.

    ``embeddings`` ``(T, D)``: one row per token; ``positions_table`` ``(L, D)`` with ``L >= T``: a
    sinusoidal or a learned table. The reference is :func:`course_utils.positional.add_positions`:
    ``embeddings + positions_table[:T]``. Six cases: a table longer than the sentence first (it must
    be sliced), the running example with a sinusoidal table of 512 positions, a table exactly as
    long as the sentence, one token, a learned (random) table with ``D = 7``, and float32 inputs.
    """
    rng = np.random.default_rng(3)
    example = data.running_example()
    cases = [
        _add_case(
            "T=5 tokens, a learned table of L=12 positions, D=4",
            rng.standard_normal((5, 4)),
            rng.normal(0, 0.5, (12, 4)),
        ),
        _add_case(
            "the running example [CLS] I love NLP [SEP], a sinusoidal table of 512 positions",
            example.embeddings,
            positional.sinusoidal_encoding(512, example.d_model),
        ),
        _add_case(
            "the sentence fills the table: T=L=6, D=4",
            rng.standard_normal((6, 4)),
            positional.sinusoidal_encoding(6, 4),
        ),
        _add_case("one token: T=1, L=8, D=3", rng.standard_normal((1, 3)), rng.normal(0, 0.5, (8, 3))),
        _add_case("a learned table: T=3, L=10, D=7", rng.standard_normal((3, 7)), rng.normal(0, 0.5, (10, 7))),
        _add_case(
            "float32 inputs: T=4, L=9, D=6",
            rng.standard_normal((4, 6)),
            positional.sinusoidal_encoding(9, 6),
            dtype=np.float32,
        ),
    ]
    run_checks(_ADD_POSITIONS, fn, cases)
