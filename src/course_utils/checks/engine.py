"""The machinery every checker shares: cases, known mistakes, symptoms, and the report."""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

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
    return f"⏳ {name}: not attempted yet. Write it above, then run this cell again."


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
