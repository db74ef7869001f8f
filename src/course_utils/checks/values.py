"""Comparisons of whatever a learner's function returns, that never raise: a numeric array or not,
described in words, its shape with named axes, close to the reference or how far from it."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .. import attention


def as_float_array(value: Any) -> np.ndarray | None:
    """``value`` (numpy, torch, nested lists) as a float64 array, or ``None`` when it is not numeric."""
    try:
        if attention.is_torch(value):
            value = value.detach().cpu().double().numpy()
        array = np.asarray(value, dtype=np.float64)
    except Exception:  # ragged lists, strings, objects: not a numeric array
        return None
    return array


def has_non_finite(value: Any) -> bool:
    """Whether ``value`` is numeric and holds a nan or an infinity (a symptom checkers name)."""
    array = as_float_array(value)
    return array is not None and not np.all(np.isfinite(array))


def describe(value: Any) -> str:
    """``"a tuple"``, ``"an array of shape (2, 3)"``: what the learner returned, in words."""
    shape = getattr(value, "shape", None)
    if shape is not None:
        return f"an array of shape {tuple(shape)}"
    name = type(value).__name__
    return f"an {name}" if name[0] in "aeiou" else f"a {name}"


def named_shape(axes: Sequence[str], shape: tuple[int, ...]) -> str:
    """``(..., T_q, d_v)=(2, 4, 3)``: named axes and sizes; leading batch axes are shown as ``...``."""
    names = list(axes)
    if names and names[0] == "..." and len(shape) == len(names) - 1:
        names = names[1:]  # no batch axes in this case
    comma = "," if len(shape) == 1 else ""
    return f"({', '.join(names)}{comma})={tuple(shape)}"


def close_values(result: Any, expected: np.ndarray, what: str, axes: Sequence[str], *, tol: float = 1e-4,
                 atol: float | None = None, rtol: float | None = None) -> str | None:
    """None when ``result`` equals ``expected`` within ``tol`` (float32 arithmetic passes), else what differs.

    ``atol`` and ``rtol``, when given, replace ``tol`` as ``np.allclose``'s absolute and relative tolerance.
    """
    array = as_float_array(result)
    if array is None:
        return f"expected {what} to be a numeric array, got {describe(result)}"
    expected = np.asarray(expected, dtype=np.float64)
    if array.shape != expected.shape:
        return f"expected {what} of shape {named_shape(axes, expected.shape)}, got {array.shape}"
    if not np.all(np.isfinite(array)):
        return f"{what} contains nan or inf"
    if not np.allclose(array, expected, atol=tol if atol is None else atol, rtol=tol if rtol is None else rtol):
        largest = np.max(np.abs(array - expected))
        return f"{what} differs from the reference (largest difference {largest:.3g})"
    return None


def shape_of(value: Any) -> tuple[int, ...] | None:
    """The shape of ``value`` as a numeric array, or ``None`` when it is not one."""
    array = as_float_array(value)
    return None if array is None else array.shape
