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



