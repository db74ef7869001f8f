"""The machinery every checker shares: cases, known mistakes, symptoms, and the report.

The learner's function runs in a small sandbox (:func:`call_learner`), so that nothing it does
can freeze the notebook or quietly change the rest of the lesson:

- a **time limit** per case (:data:`TIME_LIMIT_S`, adjustable: ``checks.engine.TIME_LIMIT_S = 120``),
  with a "still running" line every :data:`NOTICE_S` seconds; it uses ``signal.SIGALRM``, so it
  works in the main thread on Linux, macOS and Colab (elsewhere the function runs unlimited);
- its **printed output** is captured and shown once, cut to :data:`OUTPUT_LIMIT` characters;
- the **global state** it may change (the random generators of Python, numpy and torch, torch's
  default dtype, numpy's print options) is saved before and restored after, with a warning
  naming what changed;
- its **inputs** are copies, compared with the originals afterwards: a function that changes
  its inputs in place fails, since in the lesson it would change the learner's own variables;
- its **result** must be of the type the lesson's next cells need: an array where an array belongs
  (not a list), an int or a float where a number belongs, integers or booleans where those belong,
  and what an exercise requires besides (:attr:`Exercise.returns`: a torch tensor for a torch
  input, a list where the statement says a list). A type problem is reported as such ("returned a
  str; return a float"), with no hint from the table of known mistakes;
- what the lesson runs next with the result, the checker runs too (:attr:`Exercise.follow`: a
  backward pass through it, say), and reports what fails there.

A function that raises ``NotImplementedError`` before returning anything is the stub: "not
attempted yet", and the lesson goes on. One that raises it after returning on earlier cases (or
calls) is half-written: "not finished", a failure.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import inspect
import io
import numbers
import random
import signal
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from . import values

TIME_LIMIT_S = 30.0  # per case; a correct function of the course takes well under a second
NOTICE_S = 10.0  # a "still running" line this often while a slow function runs
OUTPUT_LIMIT = 2000  # characters of the learner's printed output shown

# The symbol that opens each kind of message: text symbols that the fonts of every system hold
# (DejaVu, Segoe UI Symbol, Apple Symbols), never emoji, which are empty boxes on a screen with no
# emoji font (many Linux desktops) in Jupyter, in Colab and on the site alike.
PASSED, NOT_ATTEMPTED, STILL_RUNNING, CHANGED, PRINTED = "✓", "○", "…", "⚠", "✎"
SYMBOLS = (PASSED, NOT_ATTEMPTED, STILL_RUNNING, CHANGED, PRINTED)

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
    ``on_error`` the hint when the function raises, unless the error's message contains the text of
    one of ``error_hints`` (pairs ``(text, hint)``, tried in order): then that pair's hint.

    ``returns(result, case)``, when given, says what is wrong with the *type* of a result for the
    lesson's next cells ("return a float (loss.item())"), else None; it is asked before the values
    are compared, on top of the engine's own rules (:func:`type_problem`). ``follow(result, case,
    args)``, when given, runs what the lesson runs next with a result whose values are right
    (``args``: the arguments the function was called with), and says what fails, else None.
    """

    name: str
    call: str
    compare: Comparison
    mistakes: Sequence[Mistake] = field(default_factory=tuple)
    symptoms: Sequence[Symptom] = field(default_factory=tuple)
    fallback: str = ""
    on_error: str = ""
    error_hints: Sequence[tuple[str, str]] = field(default_factory=tuple)
    returns: Callable[[Any, Case], "str | None"] | None = None
    follow: Callable[[Any, Case, tuple], "str | None"] | None = None

    def error_hint(self, error: BaseException) -> str:
        """The hint for an error the learner's function raised: the first of ``error_hints`` whose
        text is in the error's message, else ``on_error``."""
        message = str(error)
        return next((hint for text, hint in self.error_hints if text in message), self.on_error)


# --------------------------------------------------------------------------------------------
# The generic machinery


def not_attempted_message(name: str) -> str:
    """The one line printed when the learner's function is still the stub."""
    return f"{NOT_ATTEMPTED} {name}: not attempted yet. Write it above, then run this cell again."


def not_finished_message(name: str, case: Case, returned: int, error: BaseException) -> str:
    """The failure of a function that returned before and then raised ``NotImplementedError``."""
    said = f" ({error})" if str(error) else ""
    before = f"after returning {returned} time{'s' if returned != 1 else ''}" if returned else "after earlier cases"
    return (f"{name} is not finished: it raised NotImplementedError{said} on the case '{case.name}', {before}. "
            "A part of it is still to write; write it, then run this cell again.")


def success_message(name: str, n_cases: int) -> str:
    """The one line printed when every case passes."""
    return f"{PASSED} {name}: all {n_cases} cases pass."


def require_callable(name: str, fn: Any) -> None:
    """Raise ``TypeError`` with an actionable message unless ``fn`` can be called."""
    if not callable(fn):
        raise TypeError(
            f"expected the function {name} itself, got {fn!r:.60} (of type {type(fn).__name__}). "
            f"Pass the function without calling it: check_{name}({name}), not check_{name}({name}(...))."
        )


class Tracked:
    """The learner's function, counting the calls that returned: a checker that calls it from inside
    an observation (``run_checks`` then calls the observer, not the function) hands this to
    :func:`run_checks` as ``learner``, so that a half-written function is told from the stub."""

    def __init__(self, fn: Callable[..., Any]):
        self.fn, self.returned = fn, 0
        functools.update_wrapper(self, fn)

    def __call__(self, *args, **kwargs):
        result = self.fn(*args, **kwargs)
        self.returned += 1
        return result


def _fresh(args: tuple) -> tuple:
    """Deep copies of the arguments, so a function that writes into its inputs cannot change the cases."""
    return copy.deepcopy(args)


# --------------------------------------------------------------------------------------------
# The sandbox around the learner's call


class CheckFailure(AssertionError):
    """A failure found by the sandbox (time-out, inputs changed), as opposed to an ``AssertionError``
    raised by the learner's own code."""


class _OutOfTime(BaseException):
    """Raised inside the learner's function when the time limit passes (not an ``Exception``, so a
    ``try: ... except Exception`` in the learner's loop cannot swallow it)."""


class _CappedOutput(io.TextIOBase):
    """A text stream that keeps the first ``limit`` characters written to it and counts the rest."""

    def __init__(self, limit: int = OUTPUT_LIMIT):
        self.limit, self.kept, self.total, self.lines = limit, [], 0, 0

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        room = self.limit - min(self.total, self.limit)
        if room > 0:
            self.kept.append(text[:room])
        self.total += len(text)
        self.lines += text.count("\n")
        return len(text)

    def report(self, name: str) -> str:
        """What the function printed, cut to the limit, with how much more there was; "" if nothing."""
        if not self.total:
            return ""
        shown = "".join(self.kept)
        more = self.total - len(shown)
        tail = f"\n… and {more:,} more characters ({self.lines:,} lines in all) not shown." if more > 0 else ""
        return f"{PRINTED} {name} printed while being checked:\n{shown.rstrip()}{tail}"


def _torch():
    return sys.modules.get("torch")  # torch is only looked at when something imported it


def _settings() -> list[tuple[str, Callable[[], Any], Callable[[Any], Any]]]:
    """``(what, read, write)`` of each global setting a learner's function may change."""
    rows = [
        ("Python's random generator (random.seed?)", random.getstate, random.setstate),
        ("numpy's global random generator (np.random.seed?)", np.random.get_state, np.random.set_state),
        ("numpy's print options (np.set_printoptions?)", np.get_printoptions,
         lambda options: np.set_printoptions(**options)),
    ]
    torch = _torch()
    if torch is not None:
        rows += [
            ("torch's random generator (torch.manual_seed, or a new layer's random weights?)",
             torch.get_rng_state, torch.set_rng_state),
            ("torch's default dtype (torch.set_default_dtype?)", torch.get_default_dtype, torch.set_default_dtype),
        ]
    return rows


def global_state() -> dict[str, Any]:
    """The global settings a function may change: random generators, torch's default dtype, print options."""
    return {what: read() for what, read, _ in _settings()}


def restore_state(saved: dict[str, Any]) -> list[str]:
    """Put back the settings of :func:`global_state`; the names of those that had changed."""
    changed = []
    for what, read, write in _settings():
        if what in saved and not same_value(read(), saved[what]):
            write(saved[what])
            changed.append(what)
    return changed


def same_value(a: Any, b: Any) -> bool:
    """Whether ``a`` and ``b`` hold the same values (arrays, tensors, nested lists, dicts), nan equal to nan."""
    torch = _torch()
    if torch is not None and isinstance(a, torch.Tensor):
        return (isinstance(b, torch.Tensor) and a.shape == b.shape and a.dtype == b.dtype
                and bool(((a == b) | (a != a) & (b != b)).all()))
    if isinstance(a, np.ndarray):
        return (isinstance(b, np.ndarray) and a.shape == b.shape and a.dtype == b.dtype
                and bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")))
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(same_value(a[k], b[k]) for k in a)
    try:
        return bool(a == b) or (a != a and b != b)
    except Exception:  # values that cannot be compared are not reported
        return True


@contextlib.contextmanager
def _time_limit(name: str, case: Case, limit: float, shown):
    """Stop the learner's call after ``limit`` seconds, printing a line to ``shown`` every :data:`NOTICE_S`."""
    usable = hasattr(signal, "SIGALRM") and threading.current_thread() is threading.main_thread() and limit > 0
    if not usable:
        yield
        return
    start = time.monotonic()

    def alarm(signum, frame):
        elapsed = time.monotonic() - start
        if elapsed >= limit - 1e-3:
            raise _OutOfTime
        print(f"{STILL_RUNNING} {name} is still running on the case '{case.name}' ({elapsed:.0f} s; "
              f"the checker stops it at {limit:g} s)", file=shown, flush=True)
        signal.setitimer(signal.ITIMER_REAL, min(NOTICE_S, limit - elapsed))  # the next notice, or the end

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, min(NOTICE_S, limit))
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _argument_names(fn: Callable[..., Any], n: int) -> list[str]:
    try:
        names = [p.name for p in inspect.signature(fn).parameters.values()
                 if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        names = []
    return [names[i] if i < len(names) else f"argument {i + 1}" for i in range(n)]


@dataclass
class Sandbox:
    """What :func:`call_learner` saw over a check: printed output, global settings changed."""

    output: _CappedOutput = field(default_factory=_CappedOutput)
    changed: list[str] = field(default_factory=list)
    args: tuple = ()  # the arguments of the last call (copies of the case's), for Exercise.follow

    def report(self, name: str) -> None:
        """Print the learner's output (cut) and a warning for each global setting it changed."""
        text = self.output.report(name)
        if text:
            print(text)
        if self.changed:
            print(f"{CHANGED} {name} changed {', '.join(self.changed)}. The checker put it back, so the rest of the "
                  "lesson runs as in the book.")


def call_learner(exercise: Exercise, fn: Callable[..., Any], case: Case, sandbox: Sandbox,
                 time_limit: float | None = None) -> Any:
    """``fn(*copies of case.args)`` in the sandbox: time limit, output captured, global state
    restored, inputs compared afterwards. Raises ``AssertionError`` for a time-out or changed inputs."""
    limit = TIME_LIMIT_S if time_limit is None else time_limit
    args, shown, saved = _fresh(case.args), sys.stdout, global_state()
    sandbox.args = args
    try:
        with _time_limit(exercise.name, case, limit, shown), contextlib.redirect_stdout(sandbox.output), \
                contextlib.redirect_stderr(sandbox.output):
            result = fn(*args)
    except _OutOfTime:
        raise CheckFailure(
            f"{exercise.name} did not return within {limit:g} s on the case '{case.name}': is there an "
            "infinite loop (a `while` whose condition never becomes false)? If the function is only slow, "
            f"allow more time with course_utils.checks.engine.TIME_LIMIT_S = {4 * limit:g}."
        ) from None
    finally:
        sandbox.changed += [name for name in restore_state(saved) if name not in sandbox.changed]
    for name, before, after in zip(_argument_names(fn, len(args)), case.args, args):
        if not same_value(before, after):
            raise CheckFailure(
                f"{exercise.name} changed its input `{name}` in place on the case '{case.name}'. In the lesson "
                f"that changes your own variable too, so re-running a cell gives other numbers. Work on new "
                f"values instead (x = x - m, not x -= m; or x = x.copy() first)."
            )
    return result


def _dtype_kind(value: Any) -> str | None:
    """``"b"`` (booleans), ``"i"`` (integers), ``"f"`` (floats) of an array or tensor, else None."""
    torch = _torch()
    if torch is not None and isinstance(value, torch.Tensor):
        return "b" if value.dtype == torch.bool else "f" if value.is_floating_point() or value.is_complex() else "i"
    if isinstance(value, np.ndarray):
        return {"b": "b", "i": "i", "u": "i", "f": "f", "c": "f"}.get(value.dtype.kind)
    return None


KINDS = {"b": "booleans", "i": "integers", "f": "floats"}


def kind_name(value: Any) -> str:
    """What a value is, in words, for a type problem: ``"a list"``, ``"a str"``, ``"a numpy array"``,
    ``"a torch tensor"``, ``"a float"``, ``"a numpy float32"``."""
    torch = _torch()
    if torch is not None and isinstance(value, torch.Tensor):
        return "a torch tensor"
    if isinstance(value, np.ndarray):
        return "a numpy array"
    if isinstance(value, np.generic):
        return f"a numpy {value.dtype}"
    name = type(value).__name__
    return f"an {name}" if name[0] in "aeiou" else f"a {name}"


def returned(value: Any, wanted: str, why: str = "") -> str:
    """The words of a type problem: ``"returned a str; return a float (why)"``."""
    return f"returned {kind_name(value)}; return {wanted}" + (f" ({why})" if why else "")


def torch_for_torch(result: Any, case: Case, why: str = "the next cells use torch operations on it") -> str | None:
    """A type problem when the case's first argument is a torch tensor and ``result`` is not one
    (a numpy array back for a torch input: ``np.repeat``, ``np.asarray``); None otherwise."""
    torch = _torch()
    if torch is None or not case.args or not isinstance(case.args[0], torch.Tensor):
        return None
    if isinstance(result, torch.Tensor):
        return None
    return returned(result, "a torch tensor", f"the input is a torch tensor, and {why}")


def _is_number(value: Any) -> bool:
    """A single real number the next cells can use as one: a Python or numpy int or float (not a bool)."""
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def type_problem(result: Any, expected: Any) -> str | None:
    """What is wrong with the *type* of ``result`` for the next cells, given the reference's
    ``expected``, else None: the engine's own rules, asked before the values are compared.

    Where the reference returns an array or tensor of at least one axis, a list or tuple is refused
    (the next cells' ``.shape``, ``@`` or ``~`` would break); where it returns an int, anything but
    a number is refused (a float is refused later, by :func:`kind_problem`, once the value is
    known); where it returns a float, anything but a number or a float array or tensor (whose
    shape the comparison names). Tuples of
    results (``(output, weights)``) are checked item by item.
    """
    if isinstance(expected, tuple) and isinstance(result, (tuple, list)) and len(result) == len(expected):
        return next((p for r, e in zip(result, expected) if (p := type_problem(r, e))), None)
    if _dtype_kind(expected) is not None and np.ndim(expected) >= 1:
        if isinstance(result, (list, tuple)):
            return returned(result, "an array (numpy or torch)",
                            "np.asarray(...) of it: the next cells use array operations, .shape, @")
        return None
    if isinstance(expected, numbers.Integral) and not isinstance(expected, (bool, np.bool_)):
        return None if _is_number(result) else returned(result, "an int")
    if isinstance(expected, numbers.Real) and not isinstance(expected, (bool, np.bool_)):
        if _is_number(result) or _dtype_kind(result) == "f":
            return None  # an array of another shape is the comparison's to name
        return returned(result, "a float", "one number, not a list or a string")
    return None


def kind_problem(result: Any, expected: Any) -> str | None:
    """What is wrong with the *kind* of ``result``, given the reference's ``expected``, else None.

    Asked once the values are right. Where the reference returns an array or tensor of at least
    one axis, a Python list or tuple is refused (:func:`type_problem` says so first); where it
    returns booleans (a mask), the result must be booleans (``~`` of the integer 1 is -2, not
    False); where it returns integers (ids, indices, counts), floats are refused. Tuples of results
    (``(output, weights)``) and lists of integers are checked item by item.
    """
    if isinstance(expected, tuple) and isinstance(result, (tuple, list)) and len(result) == len(expected):
        return next((p for r, e in zip(result, expected) if (p := kind_problem(r, e))), None)
    wanted = _dtype_kind(expected)
    if wanted is not None and np.ndim(expected) >= 1:
        if isinstance(result, (list, tuple)):
            return type_problem(result, expected)
        got = _dtype_kind(result)
        if got is not None and got != wanted and (wanted == "b" or (wanted == "i" and got == "f")):
            return (f"the dtype is wrong: expected {KINDS[wanted]} (dtype {expected.dtype}), got {KINDS[got]} "
                    f"(dtype {result.dtype}); the values may print alike, but the next cells need {KINDS[wanted]}")
    if isinstance(expected, numbers.Integral) and not isinstance(expected, bool):
        if isinstance(result, numbers.Real) and not isinstance(result, numbers.Integral):
            return (f"expected an integer, got the {type(result).__name__} {result!r}: use integer arithmetic "
                    "(//, not /) or int(...)")
    if isinstance(expected, list) and isinstance(result, (list, tuple)) and len(result) == len(expected):
        return next((p for r, e in zip(result, expected)
                     if isinstance(e, numbers.Integral) and (p := kind_problem(r, e))), None)
    return None


def dtype_hint(result: Any, expected: Any) -> str | None:
    """A hint when the dtype alone makes a result wrong: the same values (at float32 precision) in
    another dtype than the reference's (``float32`` where ``float64`` is expected, floats where
    integers are)."""
    if isinstance(expected, tuple) and isinstance(result, (tuple, list)) and len(result) == len(expected):
        return next((h for r, e in zip(result, expected) if (h := dtype_hint(r, e))), None)
    if _dtype_kind(result) is None or _dtype_kind(expected) is None:
        return None
    if str(result.dtype).removeprefix("torch.") == str(expected.dtype).removeprefix("torch."):
        return None  # the same dtype: the values differ
    try:
        values = np.asarray(result.detach().cpu() if hasattr(result, "detach") else result, dtype=np.float64)
        close = values.shape == np.shape(expected) and np.allclose(values, np.asarray(expected, np.float64),
                                                                   rtol=1e-5, atol=1e-6)
    except (TypeError, ValueError):
        return None
    got, wanted = (str(x.dtype).removeprefix("torch.") for x in (result, expected))
    return (f"the numbers look right, but the result has dtype {got} where the reference has {wanted}: "
            f"compute in {wanted} (convert with .astype / .to) so they match to the last digit") if close else None


def diagnose(exercise: Exercise, result: Any, case: Case) -> str:
    """The most likely mistake behind a wrong ``result``: a matching :class:`Mistake`, else a present
    :class:`Symptom`, else the exercise's fallback hint.

    A mistake whose wrong version gives the right answer on this case says nothing about it, and
    is passed over (the result matched it, but it matches the reference too)."""
    for mistake in exercise.mistakes:
        try:
            wrong = mistake.wrong(*_fresh(case.args))
            if exercise.compare(wrong, case.expected) is None:
                continue  # this mistake is harmless here: it cannot be the one
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


def _type_failure(exercise: Exercise, case: Case, problem: str) -> AssertionError:
    """A result of the wrong type: said as such, with no hint from the known mistakes (they are about
    values, and a right value in the wrong type would match the one that equals the answer)."""
    return AssertionError(f"{exercise.name} is not right yet on the case '{case.name}': {problem}.")


def run_checks(exercise: Exercise, fn: Callable[..., Any], cases: Sequence[Case], *,
               time_limit: float | None = None, learner: Tracked | None = None) -> bool:
    """Run ``fn`` on every case and report: the engine of every checker.

    Returns ``True`` when all cases pass (after printing :func:`success_message`), ``False`` when
    ``fn`` raises ``NotImplementedError`` before it ever returned (the stub, after printing
    :func:`not_attempted_message`). Raises ``AssertionError`` on the first failing case, with the
    case, what differs and a hint: a half-written function (``NotImplementedError`` after returning,
    :func:`not_finished_message`), a result of the wrong type (:func:`type_problem`,
    ``exercise.returns``, :func:`kind_problem`: no hint), a wrong value, a failure of what the
    lesson runs next (``exercise.follow``), inputs changed in place, or no return within
    ``time_limit`` seconds (default :data:`TIME_LIMIT_S`); ``TypeError`` when ``fn`` is not
    callable. Each call runs in the sandbox of :func:`call_learner`; what the function printed, and
    the global settings it changed, are reported at the end, whatever the outcome.

    ``learner``: when ``fn`` is an observer that calls the learner's function itself (several
    times a case), that function wrapped in :class:`Tracked`, so that its returns are counted.
    """
    require_callable(exercise.name, fn)
    sandbox = Sandbox()
    try:
        for index, case in enumerate(cases):
            try:
                result = call_learner(exercise, fn, case, sandbox, time_limit)
            except NotImplementedError as error:
                returns = learner.returned if learner is not None else index
                if not returns:
                    print(not_attempted_message(exercise.name))
                    return False
                raise AssertionError(not_finished_message(exercise.name, case, returns, error)) from error
            except CheckFailure:
                raise
            except Exception as error:
                hint = exercise.error_hint(error)
                hint = f"\nHint: {hint}" if hint else ""
                raise AssertionError(
                    f"{exercise.name} raised {type(error).__name__} on the case '{case.name}': {error}\n"
                    f"The checker calls {exercise.call}.{hint}"
                ) from error
            if result is None:
                raise AssertionError(
                    f"{exercise.name} returned None on the case '{case.name}': did you forget the `return`?"
                )
            problem = (exercise.returns(result, case) if exercise.returns is not None else None) \
                or type_problem(result, case.expected)
            if problem is not None:
                raise _type_failure(exercise, case, problem)
            problem = exercise.compare(result, case.expected)
            if problem is None:  # right values: are they of the kind the next cells need?
                kind = kind_problem(result, case.expected)
                if kind is not None:
                    raise _type_failure(exercise, case, kind)
            if problem is not None:
                hint = diagnose(exercise, result, case)
                if hint == exercise.fallback:  # no known mistake: is the dtype alone wrong?
                    hint = dtype_hint(result, case.expected) or hint
                raise AssertionError(
                    f"{exercise.name} is not right yet on the case '{case.name}': {problem}."
                    + (f"\nHint: {hint}" if hint else "")
                )
            if exercise.follow is not None:
                problem = exercise.follow(result, case, sandbox.args)
                if problem is not None:
                    raise AssertionError(f"{exercise.name} is not right yet on the case '{case.name}': {problem}")
    finally:
        sandbox.report(exercise.name)
    print(success_message(exercise.name, len(cases)))
    return True


def close_arrays(axes: Sequence[str], *, atol: float = 1e-4, rtol: float = 1e-4) -> Comparison:
    """A comparison of numeric arrays (numpy, torch, nested lists) whose axes are named ``axes``.

    The default tolerance accepts float32 arithmetic and rejects every real mistake; the messages
    are :func:`values.close_values`'s, about "the result".
    """

    def compare(result: Any, expected: Any) -> str | None:
        return values.close_values(result, expected, "the result", axes, atol=atol, rtol=rtol)

    return compare


def equal_integers(what: str) -> Comparison:
    """An exact comparison of whole numbers; ``what`` names the quantity (``"parameters"``).

    Integers of any type pass (a float is turned away before, by :func:`kind_problem`). The
    message does not give the right answer away.
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
