"""course_utils.validation: each check accepts what it names, in any numeric type, and refuses the
rest with a message naming the argument and the value given."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from course_utils import validation


@pytest.mark.parametrize(
    "check, good, expected",
    [
        (validation.positive_int, [1, np.int64(7), 10**12], [1, 7, 10**12]),
        (validation.positive_number, [0.5, 2, np.float32(1.5), np.int8(3)], [0.5, 2.0, 1.5, 3.0]),
        (validation.non_negative_number, [0, 0.0, np.float64(2.5)], [0.0, 0.0, 2.5]),
        (validation.probability, [0, 1, 0.15, np.float32(0.5)], [0.0, 1.0, 0.15, 0.5]),
    ],
)
def test_good_values_come_back_in_python_types(check, good, expected):
    results = [check("x", value) for value in good]
    assert results == expected
    assert all(type(r) is type(e) for r, e in zip(results, expected))


@pytest.mark.parametrize(
    "check, bad",
    [
        (validation.positive_int, [0, -3, 2.0, 1.5, True, "3", None, np.float64(2.0)]),
        (validation.positive_number, [0, -1e-9, math.inf, math.nan, True, "1", None, [1.0]]),
        (validation.non_negative_number, [-0.5, math.inf, math.nan, False, "0", None]),
        (validation.probability, [-0.01, 1.01, math.nan, True, "0.5", None, math.inf]),
    ],
)
def test_bad_values_are_named_in_the_error(check, bad):
    for value in bad:
        with pytest.raises(ValueError, match=rf"^expected mask_prob to be .*, got {re.escape(repr(value))}$"):
            check("mask_prob", value)





def test_array_with_axes_learns_sizes_then_enforces_them():
    sizes: dict[str, int] = {}
    W = validation.array_with_axes("W_xh", np.ones((3, 4)), ("D_in", "D_h"), sizes)
    assert W.dtype == np.float64 and sizes == {"D_in": 3, "D_h": 4}
    validation.array_with_axes("b_h", np.ones(16), ("4*D_h",), sizes)  # 4 gates of D_h
    with pytest.raises(ValueError, match=r"^expected W_hh of shape \(D_h, D_h\)=\(4, 4\), got \(4, 5\)$"):
        validation.array_with_axes("W_hh", np.ones((4, 5)), ("D_h", "D_h"), sizes)
    with pytest.raises(ValueError, match=r"a 1-D array, got shape \(2, 2\)"):
        validation.array_with_axes("b", np.ones((2, 2)), ("D_h",), sizes)
    with pytest.raises(ValueError, match="6 is not a multiple of 4"):
        validation.array_with_axes("b", np.ones(6), ("4*H",), {})
    with pytest.raises(TypeError, match="expected x to be a numeric array, got dict"):
        validation.array_with_axes("x", {}, ("T",), {})
