"""Helpers of the checker tests (``tests/test_checks_*.py``): a learner's untouched stub, and a
rejection that must name its hint."""

from __future__ import annotations

import pytest


def stub(*args):
    """The exercise cell as a learner first sees it."""
    raise NotImplementedError  # your code here


def rejects(checker, implementation, hint, capsys):
    """``checker(implementation)`` fails with ``hint`` (a regular expression) and prints nothing
    (but the warning that the function changed a random generator, which the checker restored)."""
    with pytest.raises(AssertionError, match=f"(?s){hint}") as error:
        checker(implementation)
    assert "on the case" in str(error.value)
    assert all(line.startswith("⚠") for line in capsys.readouterr().out.splitlines())
    return error
