"""Checkers of lesson 01: the RNN step and the LSTM's parameter count."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .. import rnn
from .engine import Case, Exercise, Mistake, Symptom, close_arrays, equal_integers, run_checks


def _rnn_step_case(
    name: str,
    rng: np.random.Generator,
    d_in: int,
    d_hidden: int,
    *,
    h_prev_zero: bool = False,
    scale: float = 1.0,
    dtype: type = np.float64,
) -> Case:
    x_t = scale * rng.standard_normal(d_in)
    h_prev = np.zeros(d_hidden) if h_prev_zero else rng.uniform(-1, 1, d_hidden)  # a hidden state is in (-1, 1)
    W_xh, W_hh = rng.standard_normal((d_in, d_hidden)), rng.standard_normal((d_hidden, d_hidden))
    b_h = rng.standard_normal(d_hidden)
    args = tuple(np.asarray(a, dtype=dtype) for a in (x_t, h_prev, W_xh, W_hh, b_h))
    return Case(name, args, rnn.rnn_step(*args))


# The wrong versions take the arguments of rnn_step: x = x_t, h = h_prev, W_xh, W_hh, b = b_h.
_RNN_STEP = Exercise(
    name="rnn_step",
    call="rnn_step(x_t, h_prev, W_xh, W_hh, b_h) with x_t (D_in,), h_prev (D_h,), W_xh (D_in, D_h), "
    "W_hh (D_h, D_h), b_h (D_h,), and expects h_t (D_h,)",
    compare=close_arrays(("D_h",)),
    mistakes=(
        Mistake(
            "the output is not in (-1, 1): did you forget the tanh?",
            lambda x, h, W_xh, W_hh, b: x @ W_xh + h @ W_hh + b,
        ),
        Mistake(
            "every output is in (0, 1): did you use a sigmoid instead of the tanh? h_t = tanh(...) is in (-1, 1).",
            lambda x, h, W_xh, W_hh, b: rnn.sigmoid(x @ W_xh + h @ W_hh + b),
        ),
        Mistake(
            "no output is negative: did you use a ReLU instead of the tanh?",
            lambda x, h, W_xh, W_hh, b: np.maximum(x @ W_xh + h @ W_hh + b, 0.0),
        ),
        Mistake(
            "the result is tanh(x_t @ W_xh + h_prev @ W_hh): did you forget the bias b_h?",
            lambda x, h, W_xh, W_hh, b: np.tanh(x @ W_xh + h @ W_hh),
        ),
        Mistake(
            "the bias b_h is added after the tanh: it belongs inside, tanh(x_t @ W_xh + h_prev @ W_hh + b_h).",
            lambda x, h, W_xh, W_hh, b: np.tanh(x @ W_xh + h @ W_hh) + b,
        ),
        Mistake(
            "the result does not depend on h_prev: did you forget the recurrent term h_prev @ W_hh?",
            lambda x, h, W_xh, W_hh, b: np.tanh(x @ W_xh + b),
        ),
        Mistake(
            "the result does not depend on x_t: did you forget the input term x_t @ W_xh?",
            lambda x, h, W_xh, W_hh, b: np.tanh(h @ W_hh + b),
        ),
        Mistake(
            "the result changes with h_prev as h_prev @ W_hh.T would: W_hh is transposed. W_hh @ h_prev "
            "multiplies by the transpose; this course uses row vectors: h_prev @ W_hh.",
            lambda x, h, W_xh, W_hh, b: np.tanh(x @ W_xh + h @ W_hh.T + b),
        ),
    ),
    symptoms=(
        Symptom(
            "the result has nan or inf for large inputs: use np.tanh, the formula with np.exp overflows.",
            lambda result, case: not np.all(np.isfinite(np.asarray(result, dtype=np.float64))),
        ),
        Symptom(
            "the output is not in (-1, 1): did you forget the tanh?",
            lambda result, case: np.any(np.abs(np.asarray(result, dtype=np.float64)) > 1.0),
        ),
        Symptom(
            "the output has the shape of a batch of one: return a vector (D_h,), e.g. without reshaping x_t.",
            lambda result, case: np.shape(result) == (1, *np.shape(case.expected)),
        ),
    ),
    fallback="compare your code with h_t = tanh(x_t @ W_xh + h_prev @ W_hh + b_h), term by term.",
    on_error="vectors are rows in this course: x_t @ W_xh is (D_in,) @ (D_in, D_h) -> (D_h,), "
    "and h_prev @ W_hh is (D_h,) @ (D_h, D_h) -> (D_h,).",
)


def check_rnn_step(fn: Callable[..., Any]) -> None:
    """Check a learner's ``rnn_step(x_t, h_prev, W_xh, W_hh, b_h) -> h_t`` against the reference.

    The reference is :func:`course_utils.rnn.rnn_step`.

    Shapes: ``x_t`` ``(D_in,)``, ``h_prev`` ``(D_h,)``, ``W_xh`` ``(D_in, D_h)``,
    ``W_hh`` ``(D_h, D_h)``, ``b_h`` ``(D_h,)``; ``h_t`` ``(D_h,)``. Six cases: non-square and
    square random weights, a first step (``h_prev = 0``), ``D_in = D_h = 1``, large inputs that
    saturate the tanh, and float32 inputs.
    """
    rng = np.random.default_rng(2024)
    cases = [
        _rnn_step_case("random, non-square: D_in=3, D_h=5", rng, 3, 5),
        _rnn_step_case("random, square: D_in=D_h=4", rng, 4, 4),
        _rnn_step_case("first step: h_prev = 0, D_in=2, D_h=3", rng, 2, 3, h_prev_zero=True),
        _rnn_step_case("smallest: D_in=D_h=1", rng, 1, 1),
        _rnn_step_case("large inputs (x_t * 1000): the tanh saturates", rng, 6, 3, scale=1000.0),
        _rnn_step_case("float32 inputs: D_in=5, D_h=2", rng, 5, 2, dtype=np.float32),
    ]
    run_checks(_RNN_STEP, fn, cases)


# --------------------------------------------------------------------------------------------
# Lesson 01: counting the parameters of an LSTM


def _per_gate(d_in: int, d_hidden: int) -> int:
    return d_in * d_hidden + d_hidden * d_hidden + d_hidden  # W_xh block, W_hh block, bias block


# The wrong versions take the arguments of lstm_param_count: d_in and d_h = d_hidden.
_LSTM_PARAM_COUNT = Exercise(
    name="lstm_param_count",
    call="lstm_param_count(d_in, d_hidden) with two positive integers, and expects an integer",
    compare=equal_integers("parameters"),
    mistakes=(
        Mistake(
            "that is the count of one gate (a vanilla RNN cell): an LSTM has 4 gates, i, f, g and o, "
            "each with its own input weights, recurrent weights and bias.",
            lambda d_in, d_h: _per_gate(d_in, d_h),
        ),
        Mistake(
            "that is the count of 3 gates: did you forget the candidate values g? There are 4 blocks: "
            "input gate i, forget gate f, candidate g and output gate o.",
            lambda d_in, d_h: 3 * _per_gate(d_in, d_h),
        ),
        Mistake(
            "you counted two bias vectors per gate, as torch does (bias_ih and bias_hh). They are always "
            "added together, so this course's LSTM has one bias per gate.",
            lambda d_in, d_h: 4 * (_per_gate(d_in, d_h) + d_h),
        ),
        Mistake(
            "did you forget the biases? Each of the 4 gates has a bias of d_hidden values.",
            lambda d_in, d_h: 4 * (d_in * d_h + d_h * d_h),
        ),
        Mistake(
            "each gate has its own bias: 4 * d_hidden bias values in all, not d_hidden.",
            lambda d_in, d_h: 4 * (d_in * d_h + d_h * d_h) + d_h,
        ),
        Mistake(
            "did you forget the recurrent weights W_hh? Each gate also reads h_prev: d_hidden x d_hidden weights.",
            lambda d_in, d_h: 4 * (d_in * d_h + d_h),
        ),
        Mistake(
            "did you forget the input weights W_xh? Each gate also reads x_t: d_in x d_hidden weights.",
            lambda d_in, d_h: 4 * (d_h * d_h + d_h),
        ),
        Mistake(
            "the recurrent weights W_hh map h_prev (d_hidden values) to d_hidden values: "
            "d_hidden x d_hidden, not d_in x d_in.",
            lambda d_in, d_h: 4 * (d_in * d_h + d_in * d_in + d_h),
        ),
        Mistake(
            "that is twice the count: it is the count of a BiLSTM (two LSTMs), one LSTM has half.",
            lambda d_in, d_h: 8 * _per_gate(d_in, d_h),
        ),
    ),
    fallback="an LSTM has 4 gates; each has input weights (d_in, d_hidden), recurrent weights "
    "(d_hidden, d_hidden) and a bias (d_hidden,).",
    on_error="the arguments are plain integers, d_in and d_hidden.",
)


def check_lstm_param_count(fn: Callable[[int, int], int]) -> None:
    """Check a learner's ``lstm_param_count(d_in, d_hidden) -> int`` against the reference.

    The reference is :func:`course_utils.rnn.lstm_param_count`: one bias per gate (torch keeps two and
    counts ``4 * d_hidden`` more).
    Six cases, non-square ones first (they tell the weights apart), up to ``d_in=300, d_hidden=128``.
    """
    sizes = [(3, 5), (10, 2), (4, 4), (1, 1), (7, 1), (300, 128)]
    cases = [Case(f"d_in={i}, d_hidden={h}", (i, h), rnn.lstm_param_count(i, h)) for i, h in sizes]
    run_checks(_LSTM_PARAM_COUNT, fn, cases)
