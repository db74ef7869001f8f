"""One class of learner's version, through every checker (tests/checker_registry.py).

Each checker's own tests try the mistakes of its exercise; these try what every exercise shares:
the stub, the reference, the right values as lists, a half-written function, float32 results.
Where a class does not apply, the registry says why (``NOT_APPLICABLE``), and a test checks that
every checker of the package is in the registry, and every pair (checker, class) is either
expected or explained.
"""

from __future__ import annotations

import re
import warnings

import pytest

from course_utils import checks
from tests.checker_registry import CHECKERS, CLASSES, NOT_APPLICABLE, PASSES, stub

CASES = [(name, cls) for name, entry in CHECKERS.items() for cls in entry.expect]


def run(checker, fn, capsys):
    """``checker(fn)``: the failure's message (None when it passed) and what it printed."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # float32 casts, torch's own notices
        try:
            checker(fn)
        except AssertionError as error:
            return str(error), capsys.readouterr().out
    return None, capsys.readouterr().out


def test_every_checker_of_the_package_is_in_the_registry():
    exported = {name.removeprefix("check_") for name in checks.__all__ if name.startswith("check_")}
    assert exported == set(CHECKERS)
    for name, entry in CHECKERS.items():
        for cls in CLASSES:
            assert cls in entry.expect or (name, cls) in NOT_APPLICABLE, (name, cls)


@pytest.mark.parametrize("name", CHECKERS)
def test_the_stub_is_not_attempted_and_the_reference_passes(name, capsys):
    entry = CHECKERS[name]
    message, printed = run(entry.checker, stub, capsys)
    notices = "".join(line for line in printed.splitlines(keepends=True) if line.startswith("…"))  # a busy machine
    assert message is None and printed == notices + checks.not_attempted_message(name) + "\n", (message, printed)
    message, printed = run(entry.checker, entry.reference, capsys)
    assert message is None, message
    assert re.search(rf"✓ {name}: all \d+ cases pass\.\n$", printed), printed


@pytest.mark.parametrize(("name", "cls"), CASES, ids=[f"{n}-{c}" for n, c in CASES])
def test_each_class_gets_its_message_from_every_checker(name, cls, capsys):
    entry = CHECKERS[name]
    expected = entry.expect[cls]
    message, printed = run(entry.checker, CLASSES[cls](entry.reference), capsys)
    if expected == PASSES:
        assert message is None, message
        assert re.fullmatch(rf"([⚠…][^\n]*\n)*✓ {name}: all \d+ cases pass\.\n", printed), printed
        return
    assert message is not None, f"{name} accepted the class {cls!r}"
    assert re.search(expected, message), message
    assert name in message and "not attempted" not in printed, (message, printed)
    hint = message.partition("\nHint: ")[2]
    if cls == "float32":  # a dtype the next cells cannot use: at most the engine's hint about the dtype
        assert not hint or hint.startswith("the numbers look right, but the result has dtype float32"), message
    else:  # a type problem or a half-written function: no hint from the known mistakes
        assert not hint, message
