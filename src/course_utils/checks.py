"""Exercise checkers: call the learner's function on several cases and say what is wrong.

A checker ``check_<thing>(fn)`` runs ``fn`` on a handful of :class:`Case` s (random, edge,
non-square shapes, large values, float32 inputs) and compares each result with the reference
implementation of ``course_utils``. Then:

- all cases pass: it prints one line, ``✅ <thing>: all N cases pass.``;
- ``fn`` raises ``NotImplementedError`` (the exercise stub): it prints one line saying the
  exercise is not attempted yet and returns, so a lesson runs top to bottom with the stub in place;
- a result is wrong: it raises ``AssertionError`` naming the case, what differs and the likely
  mistake. The diagnosis compares the wrong result with the outputs of the common wrong versions
  of the function (:class:`Mistake`), then looks for tell-tale properties (:class:`Symptom`);
- ``fn`` is not callable: ``TypeError``.

Results are compared by value, with a tolerance, so every correct implementation passes, however
it is written (``@``, ``np.dot``, ``einsum``, torch, float32 arithmetic).

Writing a checker for a new lesson: describe the exercise with an :class:`Exercise` (its name, how
it is called, a comparison made by :func:`close_arrays` or :func:`equal_integers`, the mistakes and
symptoms with their hints), build the cases from the reference, and hand both to
:func:`run_checks`. The checkers of lesson 01 below are examples.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from . import data, rnn

__all__ = [
    "Case",
    "Comparison",
    "Exercise",
    "Mistake",
    "Symptom",
    "check_frame_tokens",
    "check_lstm_param_count",
    "check_rnn_step",
    "close_arrays",
    "diagnose",
    "equal_integers",
    "not_attempted_message",
    "require_callable",
    "run_checks",
    "success_message",
]

# A comparison returns None when ``result`` matches ``expected``, else what differs, in words.
Comparison = Callable[[Any, Any], "str | None"]


@dataclass(frozen=True)
class Case:
    """One call of the learner's function: ``fn(*args)`` should give ``expected``.

    ``name`` says what the case is about, for the messages (``"non-square: D_in=3, D_h=5"``).
    """

    name: str
    args: tuple
    expected: Any


@dataclass(frozen=True)
class Mistake:
    """A common wrong version of the function, and the hint shown when a result matches it.

    ``wrong`` takes the same arguments as the learner's function.
    """

    hint: str
    wrong: Callable[..., Any]


@dataclass(frozen=True)
class Symptom:
    """A tell-tale property of a wrong result, and the hint shown when it is present.

    ``present(result, case)`` is only asked about results that already failed the comparison.
    """

    hint: str
    present: Callable[[Any, Case], bool]


@dataclass(frozen=True)
class Exercise:
    """What a checker knows about an exercise besides its cases.

    ``name`` is the function's name in the lesson; ``call`` how the checker calls it (shown when
    the function raises); ``compare`` decides whether a result is right; ``mistakes`` and
    ``symptoms`` diagnose a wrong one, tried in order; ``fallback`` is the hint when none applies;
    ``on_error`` the hint when the function raises.
    """

    name: str
    call: str
    compare: Comparison
    mistakes: Sequence[Mistake] = field(default_factory=tuple)
    symptoms: Sequence[Symptom] = field(default_factory=tuple)
    fallback: str = ""
    on_error: str = ""


# --------------------------------------------------------------------------------------------
# The generic machinery


def not_attempted_message(name: str) -> str:
    """The one line printed when the learner's function is still the stub."""
    return (
        f"⏳ {name}: not attempted yet. Write it above, then run this cell again."
    )


def success_message(name: str, n_cases: int) -> str:
    """The one line printed when every case passes."""
    return f"✅ {name}: all {n_cases} cases pass."


def require_callable(name: str, fn: Any) -> None:
    """Raise ``TypeError`` with an actionable message unless ``fn`` can be called."""
    if not callable(fn):
        raise TypeError(
            f"expected the function {name} itself, got {fn!r:.60} (of type {type(fn).__name__}). "
            f"Pass the function without calling it: check_{name}({name}), not check_{name}({name}(...))."
        )


def _fresh(args: tuple) -> tuple:
    """Copies of the array arguments, so a function that writes into its inputs cannot change the cases."""
    return tuple(arg.copy() if isinstance(arg, np.ndarray) else arg for arg in args)


def diagnose(exercise: Exercise, result: Any, case: Case) -> str:
    """The most likely mistake behind a wrong ``result``: a matching :class:`Mistake`, else a present
    :class:`Symptom`, else the exercise's fallback hint."""
    for mistake in exercise.mistakes:
        try:
            wrong = mistake.wrong(*_fresh(case.args))
        except Exception:  # a wrong version may not apply to every case
            continue
        if exercise.compare(result, wrong) is None:
            return mistake.hint
    for symptom in exercise.symptoms:
        try:
            if symptom.present(result, case):
                return symptom.hint
        except Exception:  # a symptom may not apply to a result of the wrong type or shape
            continue
    return exercise.fallback


def run_checks(exercise: Exercise, fn: Callable[..., Any], cases: Sequence[Case]) -> bool:
    """Run ``fn`` on every case and report: the engine of every checker.

    Returns ``True`` when all cases pass (after printing :func:`success_message`), ``False`` when
    ``fn`` raises ``NotImplementedError`` (after printing :func:`not_attempted_message`). Raises
    ``AssertionError`` on the first failing case, with the case, what differs and a hint;
    ``TypeError`` when ``fn`` is not callable.
    """
    require_callable(exercise.name, fn)
    for case in cases:
        try:
            result = fn(*_fresh(case.args))
        except NotImplementedError:
            print(not_attempted_message(exercise.name))
            return False
        except Exception as error:
            hint = f"\nHint: {exercise.on_error}" if exercise.on_error else ""
            raise AssertionError(
                f"{exercise.name} raised {type(error).__name__} on the case '{case.name}': {error}\n"
                f"The checker calls {exercise.call}.{hint}"
            ) from error
        if result is None:
            raise AssertionError(
                f"{exercise.name} returned None on the case '{case.name}': did you forget the `return`?"
            )
        problem = exercise.compare(result, case.expected)
        if problem is not None:
            hint = diagnose(exercise, result, case)
            raise AssertionError(
                f"{exercise.name} is not right yet on the case '{case.name}': {problem}."
                + (f"\nHint: {hint}" if hint else "")
            )
    print(success_message(exercise.name, len(cases)))
    return True


def close_arrays(axes: Sequence[str], *, atol: float = 1e-4, rtol: float = 1e-4) -> Comparison:
    """A comparison of numeric arrays whose axes are named ``axes`` (for the shape message).

    The default tolerance accepts float32 arithmetic and rejects every real mistake.
    """
    axis_names = ", ".join(axes) + ("," if len(axes) == 1 else "")

    def compare(result: Any, expected: Any) -> str | None:
        try:
            result = np.asarray(result, dtype=np.float64)
        except (TypeError, ValueError):
            return f"expected a numeric array, got a {type(result).__name__}"
        expected = np.asarray(expected, dtype=np.float64)
        if result.shape != expected.shape:
            return f"expected shape ({axis_names})={expected.shape}, got {result.shape}"
        if not np.all(np.isfinite(result)):
            return "the result contains nan or inf"
        if not np.allclose(result, expected, atol=atol, rtol=rtol):
            largest = np.max(np.abs(result - expected))
            return f"the values differ from the reference (largest difference {largest:.3g})"
        return None

    return compare


def equal_integers(what: str) -> Comparison:
    """An exact comparison of whole numbers; ``what`` names the quantity (``"parameters"``).

    Integers of any type pass; so do floats holding a whole number. The message does not give the
    right answer away.
    """

    def compare(result: Any, expected: Any) -> str | None:
        if isinstance(result, bool) or not isinstance(result, numbers.Real):
            return f"expected a whole number of {what}, got a {type(result).__name__}"
        if not float(result).is_integer():
            return f"expected a whole number of {what}, got {result}"
        if int(result) != int(expected):
            return f"{int(result)} is not the right number of {what}"
        return None

    return compare


# --------------------------------------------------------------------------------------------
# Lesson 00: framing a sentence with its special tokens


def _same_tokens(result: Any, expected: Any) -> str | None:
    if isinstance(result, str):
        return f"expected a list of tokens, got one string {result!r}"
    try:
        result = list(result)
    except TypeError:
        return f"expected a list of tokens, got a {type(result).__name__}"
    if result != list(expected):
        return f"got {result!r}"
    return None


_FRAME_TOKENS = Exercise(
    name="frame_tokens",
    call="frame_tokens(words) with words a list of strings, e.g. ['I', 'love', 'NLP']",
    compare=_same_tokens,
    mistakes=(
        Mistake("[SEP] is missing: it closes the sentence.", lambda words: ["[CLS]", *words]),
        Mistake("[CLS] is missing: it opens the sentence.", lambda words: [*words, "[SEP]"]),
        Mistake("[CLS] comes first and [SEP] last, not the other way round.", lambda words: ["[SEP]", *words, "[CLS]"]),
        Mistake(
            "the words sit in one nested list: unpack them (with *) so that each word is a token.",
            lambda words: ["[CLS]", list(words), "[SEP]"],
        ),
    ),
    symptoms=(
        Symptom("return the tokens as a list, not joined into one string.", lambda result, case: isinstance(result, str)),
        Symptom(
            "the special tokens are written in capitals inside square brackets: '[CLS]' and '[SEP]'.",
            lambda result, case: [str(t).upper() for t in result] == [t.upper() for t in case.expected],
        ),
    ),
    fallback="the result should be '[CLS]', then every word in order, then '[SEP]'.",
)


def check_frame_tokens(fn: Callable[[Sequence[str]], Sequence[str]]) -> None:
    """Check a learner's ``frame_tokens(words) -> list of tokens`` against :func:`course_utils.data.frame_tokens`.

    Five cases: the running example, one word, an empty sentence, a long sentence, a tuple of words.
    """
    sentences = {
        "I love NLP": ["I", "love", "NLP"],
        "one word": ["attention"],
        "an empty sentence": [],
        "a long sentence": "the cats that the dog chased were not happy but they ran".split(),
        "words given as a tuple": ("queries", "keys", "values"),
    }
    cases = [Case(name, (words,), data.frame_tokens(words)) for name, words in sentences.items()]
    run_checks(_FRAME_TOKENS, fn, cases)


# --------------------------------------------------------------------------------------------
# Lesson 01: the RNN step


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
    symptoms=(
        Symptom(
            "return the count as a number (an int).",
            lambda result, case: isinstance(result, bool) or not isinstance(result, numbers.Real),
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
