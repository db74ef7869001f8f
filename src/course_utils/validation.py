"""The checks of arguments that every module shares, one line each at the top of a function.

Each returns the value in its plain Python type, or raises ``ValueError`` with a message that names
the argument, what was expected and what was given::

    seq_len = positive_int("seq_len", seq_len)
    p = probability("mask_prob", p)

A ``bool`` is never accepted as a number (``True`` would pass as 1 otherwise), and numpy's integers
and floats are accepted like Python's.
"""

from __future__ import annotations

import math
import numbers
from typing import Any


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def positive_int(name: str, value: Any) -> int:
    """``value`` as an ``int`` if it is a whole number >= 1 (a count, a size, a length)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"expected {name} to be a positive integer, got {value!r}")
    return int(value)


def positive_number(name: str, value: Any) -> float:
    """``value`` as a ``float`` if it is a finite number > 0 (a temperature, a learning rate)."""
    if not _is_number(value) or not math.isfinite(value) or not value > 0:
        raise ValueError(f"expected {name} to be a finite number > 0, got {value!r}")
    return float(value)


def non_negative_number(name: str, value: Any) -> float:
    """``value`` as a ``float`` if it is a finite number >= 0 (a weight of a loss, a number of steps)."""
    if not _is_number(value) or not math.isfinite(value) or value < 0:
        raise ValueError(f"expected {name} to be a finite number >= 0, got {value!r}")
    return float(value)


def probability(name: str, value: Any) -> float:
    """``value`` as a ``float`` if it is a number in [0, 1]."""
    if not _is_number(value) or not 0 <= value <= 1:
        raise ValueError(f"expected {name} to be a probability in [0, 1], got {value!r}")
    return float(value)
