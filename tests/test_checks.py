"""Tests of course_utils.checks: the checker machinery, the lesson checkers, the lessons' solutions.

A checker must accept every correct implementation, however it is written, reject the common
wrong ones with a hint that names the mistake, print exactly one line when everything passes, and
let a lesson run top to bottom while its exercise is still the stub.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch

from course_utils import checks, rnn
from tests.checker_cases import stub as _stub

LESSONS = Path(__file__).resolve().parents[1] / "lessons"

RNN_STEP_PASS = "✓ rnn_step: all 6 cases pass.\n"
LSTM_COUNT_PASS = "✓ lstm_param_count: all 6 cases pass.\n"


# --------------------------------------------------------------------------------------------
# check_rnn_step

CORRECT_RNN_STEPS = {
    "matmul operator": lambda x_t, h_prev, W_xh, W_hh, b_h: np.tanh(x_t @ W_xh + h_prev @ W_hh + b_h),
    "np.dot": lambda x_t, h_prev, W_xh, W_hh, b_h: np.tanh(np.dot(x_t, W_xh) + np.dot(h_prev, W_hh) + b_h),
    "einsum": lambda x_t, h_prev, W_xh, W_hh, b_h: np.tanh(
        np.einsum("i,ih->h", x_t, W_xh) + np.einsum("j,jh->h", h_prev, W_hh) + b_h
    ),
    "column vectors with transposes": lambda x_t, h_prev, W_xh, W_hh, b_h: np.tanh(
        W_xh.T @ x_t + W_hh.T @ h_prev + b_h
    ),
    "one product of the concatenation": lambda x_t, h_prev, W_xh, W_hh, b_h: np.tanh(
        np.concatenate([x_t, h_prev]) @ np.vstack([W_xh, W_hh]) + b_h
    ),
    "float32 arithmetic": lambda x_t, h_prev, W_xh, W_hh, b_h: np.tanh(
        x_t.astype(np.float32) @ W_xh.astype(np.float32) + h_prev.astype(np.float32) @ W_hh.astype(np.float32)
        + b_h.astype(np.float32)
    ),
    "torch tensors": lambda x_t, h_prev, W_xh, W_hh, b_h: torch.tanh(
        torch.as_tensor(x_t) @ torch.as_tensor(W_xh) + torch.as_tensor(h_prev) @ torch.as_tensor(W_hh)
        + torch.as_tensor(b_h)
    ),
    "the package's reference": rnn.rnn_step,
}


@pytest.mark.parametrize("implementation", CORRECT_RNN_STEPS.values(), ids=CORRECT_RNN_STEPS.keys())
def test_check_rnn_step_accepts_correct_implementations(implementation, capsys):
    assert checks.check_rnn_step(implementation) is None
    assert capsys.readouterr().out == RNN_STEP_PASS


def _exp_tanh(z):
    return (np.exp(z) - np.exp(-z)) / (np.exp(z) + np.exp(-z))


WRONG_RNN_STEPS = {
    "forgot the tanh": (
        lambda x_t, h_prev, W_xh, W_hh, b_h: x_t @ W_xh + h_prev @ W_hh + b_h,
        r"the output is not in \(-1, 1\): did you forget the tanh\?",
    ),
    "sigmoid instead of tanh": (
        lambda x_t, h_prev, W_xh, W_hh, b_h: 1 / (1 + np.exp(-(x_t @ W_xh + h_prev @ W_hh + b_h))),
        r"did you use a sigmoid instead of the tanh\?",
    ),
    "relu instead of tanh": (
        lambda x_t, h_prev, W_xh, W_hh, b_h: np.maximum(0, x_t @ W_xh + h_prev @ W_hh + b_h),
        r"did you use a ReLU instead of the tanh\?",
    ),
    "forgot the bias": (
        lambda x_t, h_prev, W_xh, W_hh, b_h: np.tanh(x_t @ W_xh + h_prev @ W_hh),
        r"did you forget the bias b_h\?",
    ),
    "bias after the tanh": (
        lambda x_t, h_prev, W_xh, W_hh, b_h: np.tanh(x_t @ W_xh + h_prev @ W_hh) + b_h,
        r"the bias b_h is added after the tanh",
    ),
    "ignored h_prev": (
        lambda x_t, h_prev, W_xh, W_hh, b_h: np.tanh(x_t @ W_xh + b_h),
        r"does not depend on h_prev: did you forget the recurrent term h_prev @ W_hh\?",
    ),
    "ignored x_t": (
        lambda x_t, h_prev, W_xh, W_hh, b_h: np.tanh(h_prev @ W_hh + b_h),
        r"did you forget the input term x_t @ W_xh\?",
    ),
    "transposed W_hh (W_hh @ h_prev)": (
        lambda x_t, h_prev, W_xh, W_hh, b_h: np.tanh(x_t @ W_xh + W_hh @ h_prev + b_h),
        r"W_hh is transposed",
    ),
    "tanh with np.exp overflows": (
        lambda x_t, h_prev, W_xh, W_hh, b_h: _exp_tanh(x_t @ W_xh + h_prev @ W_hh + b_h),
        r"nan or inf for large inputs: use np.tanh",
    ),
    "returns a batch of one": (
        lambda x_t, h_prev, W_xh, W_hh, b_h: np.tanh(x_t[None, :] @ W_xh + h_prev @ W_hh + b_h),
        r"expected the result of shape \(D_h,\)=\(5,\), got \(1, 5\).*batch of one",
    ),
    "two mistakes at once": (
        lambda x_t, h_prev, W_xh, W_hh, b_h: x_t @ W_xh,
        r"the output is not in \(-1, 1\): did you forget the tanh\?",
    ),
    "something else entirely": (
        lambda x_t, h_prev, W_xh, W_hh, b_h: np.tanh(x_t @ W_xh + 0.5 * h_prev @ W_hh + b_h),
        r"compare your code with h_t = tanh\(x_t @ W_xh \+ h_prev @ W_hh \+ b_h\), term by term",
    ),
}


@pytest.mark.parametrize("implementation, hint", WRONG_RNN_STEPS.values(), ids=WRONG_RNN_STEPS.keys())
def test_check_rnn_step_rejects_common_mistakes_with_a_hint(implementation, hint, capsys):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the learner's own overflow
        with pytest.raises(AssertionError, match=f"(?s){hint}") as error:
            checks.check_rnn_step(implementation)
    assert "rnn_step" in str(error.value) and "on the case" in str(error.value)
    assert capsys.readouterr().out == ""  # no success line, no noise


def test_check_rnn_step_explains_a_crash_with_the_calling_convention():
    def column_convention(x_t, h_prev, W_xh, W_hh, b_h):
        return np.tanh(W_xh @ x_t + W_hh @ h_prev + b_h)  # (D_in, D_h) @ (D_in,) fails when D_in != D_h

    message = r"(?s)raised ValueError.*The checker calls rnn_step\(x_t, h_prev.*vectors are rows"
    with pytest.raises(AssertionError, match=message) as error:
        checks.check_rnn_step(column_convention)
    assert isinstance(error.value.__cause__, ValueError)


def test_check_rnn_step_says_when_nothing_is_returned():
    def forgot_return(x_t, h_prev, W_xh, W_hh, b_h):
        np.tanh(x_t @ W_xh + h_prev @ W_hh + b_h)

    with pytest.raises(AssertionError, match=r"returned None .*did you forget the `return`\?"):
        checks.check_rnn_step(forgot_return)


def test_check_rnn_step_with_the_stub_prints_one_line_and_does_not_raise(capsys):
    assert checks.check_rnn_step(_stub) is None
    assert capsys.readouterr().out == checks.not_attempted_message("rnn_step") + "\n"
    assert "not attempted yet" in checks.not_attempted_message("rnn_step")


@pytest.mark.parametrize("checker", [checks.check_rnn_step, checks.check_lstm_param_count])
@pytest.mark.parametrize("not_a_function", [None, 3, np.zeros(4), "rnn_step"])
def test_checkers_reject_non_callables(checker, not_a_function):
    with pytest.raises(TypeError, match=r"expected the function \w+ itself.*Pass the function without calling it"):
        checker(not_a_function)


def test_check_rnn_step_refuses_a_function_that_writes_into_its_inputs_and_the_cases_survive(capsys):
    def vandal(x_t, h_prev, W_xh, W_hh, b_h):
        result = np.tanh(x_t @ W_xh + h_prev @ W_hh + b_h)
        for array in (x_t, h_prev, W_xh, W_hh, b_h):
            array[...] = 0.0
        return result

    in_place = lambda x_t, h_prev, W_xh, W_hh, b_h: np.tanh(np.add(b_h, x_t @ W_xh + h_prev @ W_hh, out=b_h), out=b_h)
    with pytest.raises(AssertionError, match="rnn_step changed its input `x_t` in place"):
        checks.check_rnn_step(vandal)
    with pytest.raises(AssertionError, match="changed its input `b_h` in place.*x = x.copy"):
        checks.check_rnn_step(in_place)
    checks.check_rnn_step(rnn.rnn_step)
    assert capsys.readouterr().out == RNN_STEP_PASS


def test_check_rnn_step_refuses_a_list_naming_the_type():
    as_list = lambda x_t, h_prev, W_xh, W_hh, b_h: list(np.tanh(x_t @ W_xh + h_prev @ W_hh + b_h))
    with pytest.raises(AssertionError, match=r"returned a list; return an array \(numpy or torch\)"):
        checks.check_rnn_step(as_list)


# --------------------------------------------------------------------------------------------
# check_lstm_param_count

CORRECT_LSTM_COUNTS = {
    "four gates": lambda d_in, d_hidden: 4 * (d_in * d_hidden + d_hidden * d_hidden + d_hidden),
    "one product of the concatenation [x, h]": lambda d_in, d_hidden: 4 * ((d_in + d_hidden) * d_hidden + d_hidden),
    "from the shapes": lambda d_in, d_hidden: sum(p.size for p in rnn.init_lstm_params(d_in, d_hidden)),
    "a numpy integer": lambda d_in, d_hidden: np.int64(4) * (d_in * d_hidden + d_hidden**2 + d_hidden),
    "the package's reference": rnn.lstm_param_count,
}
TORCH_RNG_WARNING = "⚠ {} changed torch's random generator (torch.manual_seed, or a new layer's random weights?)"
RESTORED = ". The checker put it back, so the rest of the lesson runs as in the book.\n"


def test_check_lstm_param_count_accepts_a_count_by_torch_and_restores_torchs_generator(capsys):
    torch.manual_seed(0)
    by_torch = lambda d_in, d_hidden: sum(
        p.numel() for name, p in torch.nn.LSTM(d_in, d_hidden).named_parameters() if "bias_hh" not in name
    )
    checks.check_lstm_param_count(by_torch)
    assert torch.equal(torch.rand(3), torch.manual_seed(0) and torch.rand(3)), "the layers' draws leaked out"
    out = capsys.readouterr().out
    assert out.startswith(TORCH_RNG_WARNING.format("lstm_param_count")) and out.endswith(LSTM_COUNT_PASS)


def test_check_lstm_param_count_refuses_a_float_naming_the_type():
    with pytest.raises(AssertionError, match="expected an integer, got the float 180.0"):
        checks.check_lstm_param_count(lambda d_in, d_hidden: 4.0 * (d_in * d_hidden + d_hidden**2 + d_hidden))


@pytest.mark.parametrize("implementation", CORRECT_LSTM_COUNTS.values(), ids=CORRECT_LSTM_COUNTS.keys())
def test_check_lstm_param_count_accepts_correct_implementations(implementation, capsys):
    assert checks.check_lstm_param_count(implementation) is None
    assert capsys.readouterr().out == LSTM_COUNT_PASS


WRONG_LSTM_COUNTS = {
    "one gate": (lambda d_in, d_h: d_in * d_h + d_h * d_h + d_h, r"the count of one gate.*4 gates"),
    "three gates": (lambda d_in, d_h: 3 * (d_in * d_h + d_h * d_h + d_h), r"the count of 3 gates"),
    "two biases, like torch": (
        lambda d_in, d_h: sum(p.numel() for p in torch.nn.LSTM(d_in, d_h).parameters()),
        r"two bias vectors per gate, as torch does \(bias_ih and bias_hh\)",
    ),
    "no biases": (lambda d_in, d_h: 4 * (d_in * d_h + d_h * d_h), r"did you forget the biases\?"),
    "one bias for all gates": (lambda d_in, d_h: 4 * (d_in * d_h + d_h * d_h) + d_h, r"each gate has its own bias"),
    "no recurrent weights": (lambda d_in, d_h: 4 * (d_in * d_h + d_h), r"did you forget the recurrent weights W_hh\?"),
    "no input weights": (lambda d_in, d_h: 4 * (d_h * d_h + d_h), r"did you forget the input weights W_xh\?"),
    "recurrent weights d_in x d_in": (
        lambda d_in, d_h: 4 * (d_in * d_h + d_in * d_in + d_h),
        r"d_hidden x d_hidden, not d_in x d_in",
    ),
    "a BiLSTM": (lambda d_in, d_h: 8 * (d_in * d_h + d_h * d_h + d_h), r"the count of a BiLSTM"),
    "a string": (lambda d_in, d_h: str(4 * (d_in * d_h + d_h * d_h + d_h)), r"returned a str; return an int\.$"),
    "not a whole number": (
        lambda d_in, d_h: 4.5 * (d_in * d_h + d_h * d_h + d_h),
        r"expected a whole number of parameters",
    ),
    "something else": (lambda d_in, d_h: 5, r"5 is not the right number of parameters.*an LSTM has 4 gates"),
}


@pytest.mark.parametrize("implementation, hint", WRONG_LSTM_COUNTS.values(), ids=WRONG_LSTM_COUNTS.keys())
def test_check_lstm_param_count_rejects_common_mistakes_with_a_hint(implementation, hint, capsys):
    with pytest.raises(AssertionError, match=f"(?s){hint}") as error:
        checks.check_lstm_param_count(implementation)
    assert "on the case 'd_in=3, d_hidden=5'" in str(error.value)
    assert str(rnn.lstm_param_count(3, 5)) not in str(error.value)  # the answer is not given away
    assert capsys.readouterr().out in ("", TORCH_RNG_WARNING.format("lstm_param_count") + RESTORED)


def test_check_lstm_param_count_with_the_stub(capsys):
    assert checks.check_lstm_param_count(_stub) is None
    assert capsys.readouterr().out == checks.not_attempted_message("lstm_param_count") + "\n"


# --------------------------------------------------------------------------------------------
# The generic machinery, on a toy exercise: square a vector


def _toy_exercise(**overrides) -> checks.Exercise:
    fields = dict(
        name="square",
        call="square(x) with x (N,)",
        compare=checks.close_arrays(("N",)),
        mistakes=(checks.Mistake("you doubled instead of squaring", lambda x: 2 * x),),
        symptoms=(checks.Symptom("a square is never negative", lambda result, case: np.any(np.asarray(result) < 0)),),
        fallback="square each entry: x ** 2",
        on_error="x is a numpy array",
    )
    return checks.Exercise(**{**fields, **overrides})


TOY_CASES = [checks.Case(f"N={n}", (np.arange(-1.0, n - 1.0),), np.arange(-1.0, n - 1.0) ** 2) for n in (3, 5)]


def test_run_checks_returns_true_after_one_success_line(capsys):
    assert checks.run_checks(_toy_exercise(), lambda x: x * x, TOY_CASES) is True
    assert capsys.readouterr().out == checks.success_message("square", 2) + "\n"
    assert checks.success_message("square", 2) == "✓ square: all 2 cases pass."


def test_run_checks_returns_false_for_the_stub(capsys):
    assert checks.run_checks(_toy_exercise(), _stub, TOY_CASES) is False
    assert capsys.readouterr().out.count("\n") == 1


def test_diagnosis_tries_mistakes_then_symptoms_then_the_fallback():
    with pytest.raises(AssertionError, match="Hint: you doubled instead of squaring"):
        checks.run_checks(_toy_exercise(), lambda x: 2 * x, TOY_CASES)
    with pytest.raises(AssertionError, match="Hint: a square is never negative"):
        checks.run_checks(_toy_exercise(), lambda x: x**3, TOY_CASES)
    with pytest.raises(AssertionError, match=r"Hint: square each entry: x \*\* 2"):
        checks.run_checks(_toy_exercise(), lambda x: x**2 + 1, TOY_CASES)
    with pytest.raises(AssertionError) as error:
        checks.run_checks(_toy_exercise(fallback=""), lambda x: x**2 + 1, TOY_CASES)
    assert "Hint" not in str(error.value)


def test_diagnose_names_the_matching_mistake():
    case = TOY_CASES[1]
    exercise = _toy_exercise()
    assert checks.diagnose(exercise, 2 * case.args[0], case) == "you doubled instead of squaring"
    assert checks.diagnose(exercise, -np.ones(5), case) == "a square is never negative"
    assert checks.diagnose(exercise, np.ones(5), case) == "square each entry: x ** 2"


def test_no_hint_names_a_mistake_that_gives_the_right_answer_on_the_case():
    """On x = (0, 2), doubling is squaring: a result equal to 2 * x there is the right one, and a
    wrong result there must not be blamed on doubling."""
    case = checks.Case("x = (0, 2)", (np.array([0.0, 2.0]),), np.array([0.0, 4.0]))
    exercise = _toy_exercise()
    assert checks.diagnose(exercise, np.array([0.0, 4.0]), case) == "square each entry: x ** 2"
    with pytest.raises(AssertionError) as error:
        checks.run_checks(exercise, lambda x: 2 * x + 1, [case])
    assert "doubled" not in str(error.value) and "Hint: square each entry" in str(error.value)


def test_a_type_problem_gets_no_hint_from_the_known_mistakes():
    """The right values as a list: the type is named, and no mistake (doubling equals squaring on
    x = (0, 2), the first case) is offered as the reason."""
    case = checks.Case("x = (0, 2)", (np.array([0.0, 2.0]),), np.array([0.0, 4.0]))
    with pytest.raises(AssertionError) as error:
        checks.run_checks(_toy_exercise(), lambda x: (x**2).tolist(), [case, *TOY_CASES])
    assert "returned a list; return an array" in str(error.value) and "Hint" not in str(error.value)


def test_a_half_written_function_is_not_finished_and_the_stub_not_attempted(capsys):
    def half_written(x):
        if len(x) > 3:
            raise NotImplementedError("longer vectors: to do")
        return x**2

    with pytest.raises(AssertionError, match=r"square is not finished: it raised NotImplementedError \(longer "
                                             r"vectors: to do\) on the case 'N=5', after returning 1 time\."):
        checks.run_checks(_toy_exercise(), half_written, TOY_CASES)
    assert "not attempted" not in capsys.readouterr().out
    assert checks.run_checks(_toy_exercise(), _stub, TOY_CASES) is False
    assert capsys.readouterr().out == checks.not_attempted_message("square") + "\n"


def test_follow_runs_what_the_next_cell_runs_with_a_right_result():
    def next_cell(result, case, args):
        return None if result.flags.writeable else "the next cell writes into the result: return a writable array"

    exercise = _toy_exercise(follow=next_cell)
    frozen = lambda x: (lambda y: (y.setflags(write=False), y)[1])(x**2)  # noqa: E731
    with pytest.raises(AssertionError, match="the next cell writes into the result"):
        checks.run_checks(exercise, frozen, TOY_CASES)
    assert checks.run_checks(exercise, lambda x: x**2, TOY_CASES) is True


def test_a_mistake_or_symptom_that_fails_is_skipped():
    def broken(*args):
        raise RuntimeError("this wrong version does not apply here")

    exercise = _toy_exercise(
        mistakes=(checks.Mistake("never shown", broken),),
        symptoms=(checks.Symptom("never shown either", broken),),
    )
    with pytest.raises(AssertionError, match="Hint: square each entry"):
        checks.run_checks(exercise, lambda x: x + 1, TOY_CASES)


def test_run_checks_reports_an_error_of_the_function_with_its_calling_convention():
    message = r"(?s)square raised KeyError on the case 'N=3'.*square\(x\) with x \(N,\).*x is a numpy array"
    with pytest.raises(AssertionError, match=message):
        checks.run_checks(_toy_exercise(), lambda x: {}["oops"], TOY_CASES)


def test_close_arrays_messages():
    compare = checks.close_arrays(("T", "D"))
    expected = np.zeros((2, 3))
    assert compare(np.zeros((2, 3)), expected) is None
    assert compare(np.full((2, 3), 5e-5), expected) is None  # float32-level differences pass
    assert compare(np.zeros((3, 2)), expected) == "expected the result of shape (T, D)=(2, 3), got (3, 2)"
    assert compare(np.full((2, 3), np.nan), expected) == "the result contains nan or inf"
    assert "largest difference 0.1" in compare(np.full((2, 3), 0.1), expected)
    assert compare(object(), expected) == "expected the result to be a numeric array, got an object"
    assert compare((1, 2), expected) == "expected the result of shape (T, D)=(2, 3), got (2,)"
    # a tensor that still needs its gradient is compared, not refused
    assert compare(torch.zeros((2, 3), requires_grad=True), expected) is None


def test_equal_integers_messages():
    compare = checks.equal_integers("parameters")
    assert compare(144, 144) is None and compare(np.int32(144), 144) is None and compare(144.0, 144) is None
    assert compare(145, 144) == "145 is not the right number of parameters"
    assert compare(True, 1) == "expected a whole number of parameters, got a bool"
    assert compare(143.5, 144) == "expected a whole number of parameters, got 143.5"
    assert compare("144", 144) == "expected a whole number of parameters, got a str"


def test_require_callable():
    checks.require_callable("f", len)
    with pytest.raises(TypeError, match=r"check_f\(f\), not check_f\(f\(\.\.\.\)\)"):
        checks.require_callable("f", 3)


# --------------------------------------------------------------------------------------------
# The lessons' exercises: every solution passes its checker, every stub is checked

CODE_CELL = re.compile(r"^```\{code-cell\}[^\n]*\n(.*?)^```\s*$", re.M | re.S)
EXERCISE = re.compile(r"^(`{3,}|:{3,})\{exercise\}[^\n]*\n:label:\s*(\S+)", re.M)
SOLUTION = re.compile(r"^(`{3,}|:{3,})\{solution\}\s*(\S+)\s*\n(.*?)^\1\s*$", re.M | re.S)
PYTHON_BLOCK = re.compile(r"^```python\s*\n(.*?)^```\s*$", re.M | re.S)
DEFINED_FUNCTION = re.compile(r"^def (\w+)\(", re.M)


def _solutions() -> list[tuple[Path, str, str]]:
    """(lesson, exercise label, python code) for every python block in a solution of a lesson."""
    found = []
    for lesson in sorted(LESSONS.glob("*.md")):
        for _, label, body in SOLUTION.findall(lesson.read_text(encoding="utf-8")):
            found.extend((lesson, label, code) for code in PYTHON_BLOCK.findall(body))
    return found


def test_lesson_01_has_its_two_code_exercises():
    labels = {label for lesson, label, _ in _solutions() if lesson.stem == "01_rnn_recap"}
    assert labels == {"ex-rnn-step", "ex-lstm-params"}


@pytest.mark.parametrize(
    "lesson, label, code", [pytest.param(*found, id=f"{found[0].stem}:{found[1]}") for found in _solutions()]
)
def test_solution_passes_its_checker_and_the_lesson_checks_its_stub(lesson, label, code, capsys):
    text = lesson.read_text(encoding="utf-8")
    assert label in {found[1] for found in EXERCISE.findall(text)}, f"solution {label} has no exercise"
    names = DEFINED_FUNCTION.findall(code)
    assert names, f"the solution of {label} defines no function"
    namespace: dict = {"np": np}
    exec(compile(code, f"{lesson.name}:{label}", "exec"), namespace)
    cells = CODE_CELL.findall(text)
    for name in names:
        checker = getattr(checks, f"check_{name}", None)
        assert checker is not None, f"no checker course_utils.checks.check_{name} for the solution of {label}"
        checker(namespace[name])
        assert capsys.readouterr().out.startswith(f"✓ {name}: all ")
        # The lesson has the stub for the learner, and a cell calling the checker on it.
        assert any(re.search(rf"^def {name}\(", cell, re.M) and "raise NotImplementedError" in cell for cell in cells)
        assert any(f"check_{name}({name})" in cell for cell in cells)


# --------------------------------------------------------------------------------------------
# check_frame_tokens (lesson 00)


@pytest.mark.parametrize(
    "implementation",
    [
        lambda words: ["[CLS]", *words, "[SEP]"],
        lambda words: ["[CLS]"] + list(words) + ["[SEP]"],
        lambda words: [token for token in ("[CLS]", *words, "[SEP]")],
    ],
)
def test_check_frame_tokens_accepts_correct_implementations(implementation, capsys):
    assert checks.check_frame_tokens(implementation) is None
    assert capsys.readouterr().out == "✓ frame_tokens: all 5 cases pass.\n"


@pytest.mark.parametrize(
    "implementation, hint",
    [
        (lambda words: ["[CLS]", *words], r"\[SEP\] is missing"),
        (lambda words: [*words, "[SEP]"], r"\[CLS\] is missing"),
        (lambda words: ["[SEP]", *words, "[CLS]"], r"\[CLS\] comes first and \[SEP\] last"),
        (lambda words: ["[CLS]", list(words), "[SEP]"], r"one nested list: unpack them"),
        (lambda words: " ".join(["[CLS]", *words, "[SEP]"]), r"returned a str; return a list"),
        (lambda words: ("[CLS]", *words, "[SEP]"), r"returned a tuple; return a list \(the statement asks for a list"),
        (lambda words: ["[cls]", *words, "[sep]"], r"written in capitals"),
        (lambda words: ["[CLS]", *list(words)[:-1], "[SEP]"], r"then every word in order"),
        (lambda words: 5, r"returned an int; return a list"),
    ],
)
def test_check_frame_tokens_rejects_common_mistakes_with_a_hint(implementation, hint):
    with pytest.raises(AssertionError, match=hint):
        checks.check_frame_tokens(implementation)


def test_check_frame_tokens_with_the_stub(capsys):
    assert checks.check_frame_tokens(_stub) is None
    assert "not attempted yet" in capsys.readouterr().out
