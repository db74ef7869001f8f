"""The checks of arguments that every module shares, one line each at the top of a function.

Each returns the value in its plain Python type, or raises ``ValueError`` with a message that names
the argument, what was expected and what was given::

    seq_len = positive_int("seq_len", seq_len)
    p = probability("mask_prob", p)
    W_xh = array_with_axes("W_xh", W_xh, ("D_in", "D_h"), sizes)  # sizes: {"D_in": 3, ...}
    input_ids = token_ids("input_ids", input_ids, vocab_size)  # numpy or torch, as given

A ``bool`` is never accepted as a number (``True`` would pass as 1 otherwise), and numpy's integers
and floats are accepted like Python's. The checks of arrays (:func:`token_ids`, :func:`zeros_and_ones`,
:func:`boolean_array`, :func:`same_shape`, :func:`with_axes`) take numpy arrays and torch tensors
alike and return them as given (a list becomes a numpy array); a wrong dtype is a ``TypeError``.
"""

from __future__ import annotations

import math
import numbers
from typing import Any, Sequence

import numpy as np


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def positive_int(name: str, value: Any) -> int:
    """``value`` as an ``int`` if it is a whole number >= 1 (a count, a size, a length)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"expected {name} to be a positive integer, got {value!r}")
    return int(value)


def non_negative_int(name: str, value: Any) -> int:
    """``value`` as an ``int`` if it is a whole number >= 0 (a seed, a number of decimals)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
        raise ValueError(f"expected {name} to be a non-negative integer, got {value!r}")
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


# Arrays whose axes have names: a size seen once is enforced on every later array


def shape_text(axes: Sequence[str], sizes: dict[str, int]) -> str:
    """``(D_h, D_h)=(4, 4)``; an axis whose size is not known yet is shown by its name."""
    comma = "," if len(axes) == 1 else ""
    names = ", ".join(axes) + comma
    known = ", ".join(str(_expected_size(axis, sizes) or axis) for axis in axes) + comma
    return f"({names})" if names == known else f"({names})=({known})"


def _factor(axis: str) -> tuple[int, str]:
    """``"4*D_h"`` -> ``(4, "D_h")``; ``"D_h"`` -> ``(1, "D_h")``."""
    head, star, tail = axis.partition("*")
    return (int(head), tail) if star else (1, axis)


def _expected_size(axis: str, sizes: dict[str, int]) -> int | None:
    factor, base = _factor(axis)
    return factor * sizes[base] if base in sizes else None


def array_with_axes(name: str, value, axes: Sequence[str], sizes: dict[str, int]) -> np.ndarray:
    """``value`` as a float64 array with one axis per name in ``axes``.

    Sizes already in ``sizes`` are enforced; the others are learned from ``value`` and added to
    ``sizes``. An axis named like ``"4*D_h"`` is ``4`` times the size of ``D_h``.
    """
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"expected {name} to be a numeric array, got {type(value).__name__}") from None
    expected = f"expected {name} of shape {shape_text(axes, sizes)}"
    if array.ndim != len(axes):
        raise ValueError(f"{expected}, a {len(axes)}-D array, got shape {array.shape}")
    for axis, actual in zip(axes, array.shape):
        size = _expected_size(axis, sizes)
        if size is None:
            factor, base = _factor(axis)
            if actual % factor:
                raise ValueError(f"{expected}, got {array.shape}: {actual} is not a multiple of {factor}")
            sizes[base] = actual // factor
        elif size != actual:
            raise ValueError(f"{expected}, got {array.shape}")
    return array


# Arrays of a model's inputs: numpy arrays or torch tensors, returned as given (a list becomes a
# numpy array), so that torch in gives torch out


def _array(name: str, value: Any) -> Any:
    if hasattr(value, "dtype") and hasattr(value, "shape"):
        return value
    try:
        return np.asarray(value)
    except (TypeError, ValueError):  # ragged lists
        raise TypeError(f"expected {name} to be an array, got {type(value).__name__}") from None


def _kind(value: Any) -> str:
    """numpy's dtype kind of ``value`` (``"b"`` booleans, ``"i"``/``"u"`` integers, ``"f"`` floats, ...),
    for numpy arrays and torch tensors alike (without importing torch)."""
    dtype = value.dtype
    if hasattr(dtype, "is_floating_point"):  # a torch dtype
        return "b" if str(dtype) == "torch.bool" else "f" if dtype.is_floating_point else "c" if dtype.is_complex else "i"
    return np.dtype(dtype).kind


def with_axes(name: str, value: Any, axes: Sequence[str]) -> Any:
    """``value`` if it has one axis per name in ``axes`` (``("B", "T")``), else a ``ValueError``."""
    if len(value.shape) != len(axes):
        raise ValueError(f"expected {name} of shape ({', '.join(axes)}{',' * (len(axes) == 1)}), got {tuple(value.shape)}")
    return value


def same_shape(name: str, value: Any, like_name: str, like: Any) -> Any:
    """``value`` if it has the shape of ``like`` (named ``like_name``), else a ``ValueError``."""
    if tuple(value.shape) != tuple(like.shape):
        raise ValueError(f"expected {name} of the shape of {like_name} {tuple(like.shape)}, got {tuple(value.shape)}")
    return value


def boolean_array(name: str, value: Any, meaning: str) -> Any:
    """``value`` if it holds booleans; ``meaning`` says what ``True`` means, for the message."""
    value = _array(name, value)
    if _kind(value) != "b":
        raise TypeError(f"expected {name} to be boolean ({meaning}), got dtype {value.dtype}")
    return value


def zeros_and_ones(name: str, value: Any, meaning: str) -> Any:
    """``value`` if it holds only 0 and 1 (integers, booleans or floats); ``meaning`` names them:
    ``"0 (padding) and 1 (real token)"``."""
    value = _array(name, value)
    if _kind(value) not in "biuf":
        raise TypeError(f"expected {name} to be an array of 0/1, got dtype {value.dtype}")
    if not bool(((value == 0) | (value == 1)).all()):
        raise ValueError(f"expected {name} to hold only {meaning}")
    return value


def token_ids(name: str, value: Any, vocab_size: int) -> Any:
    """``value`` if it holds integer token ids in ``[0, vocab_size)``; the message names the first id
    outside, and where it is."""
    value = _array(name, value)
    if _kind(value) not in "iu":
        raise TypeError(f"expected {name} to hold integer token ids, got dtype {value.dtype}")
    outside = (value < 0) | (value >= vocab_size)
    if bool(outside.any()):
        outside = outside.cpu().numpy() if hasattr(outside, "cpu") else np.asarray(outside)
        where = tuple(int(i) for i in np.argwhere(outside)[0])
        raise ValueError(
            f"expected {name} in [0, vocab_size={vocab_size}), got {int(value[where])} at {name}"
            f"[{', '.join(map(str, where))}]: were they made by a tokenizer with a larger vocabulary "
            "(vocab_size is len(tokenizer))?"
        )
    return value


def index_in(name: str, value: Any, size: int, size_name: str) -> int:
    """``value`` as an ``int`` if it is a whole number in ``[0, size)``; ``size_name`` names the size."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or not 0 <= value < size:
        raise ValueError(f"expected {name} to be an integer in [0, {size_name}={size}), got {value!r}")
    return int(value)
