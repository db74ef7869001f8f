"""course_utils.stats: paired differences over seeds, and the paired t-test's critical values."""

from __future__ import annotations

import math

import numpy as np
import pytest

from course_utils import stats


def _t_cdf(x: float, df: int) -> float:
    """Student's t CDF by integrating its density (trapezoids on a fine grid): a reference written
    from the formula, not from the table."""
    grid = np.linspace(0.0, x, 400_001)  # symmetric about 0: the CDF is 1/2 + the integral from 0
    density = (math.gamma((df + 1) / 2) / (math.sqrt(df * math.pi) * math.gamma(df / 2))
               * (1 + grid**2 / df) ** (-(df + 1) / 2))
    return 0.5 + float(np.trapezoid(density, grid))


@pytest.mark.parametrize("df", sorted(stats.T_CRITICAL_95))
def test_the_critical_values_leave_two_and_a_half_percent_in_each_tail(df):
    tail = 1 - _t_cdf(stats.T_CRITICAL_95[df], df)
    assert tail == pytest.approx(0.025, abs=2e-5)  # the table's 3 decimals


def test_paired_differences_against_numpy():
    a, b = [0.91, 0.95, 0.90, 0.93, 0.94], [0.88, 0.94, 0.86, 0.90, 0.93]
    result = stats.paired(a, b)
    differences = np.subtract(a, b)
    assert result.mean == pytest.approx(differences.mean()) and result.std == pytest.approx(differences.std(ddof=1))
    assert result.t == pytest.approx(differences.mean() / (differences.std(ddof=1) / math.sqrt(5)))
    assert result.n == 5 and result.critical == 2.776 and result.significant
    assert "real" in str(result) and "n = 5" in str(result)
    noisy = stats.paired([0.9, 0.8, 0.95, 0.7, 0.92], [0.85, 0.9, 0.9, 0.8, 0.9])
    assert not noisy.significant and "not beyond" in str(noisy)
    assert stats.paired([1, 1], [1, 1]).t == 0 and stats.paired([1, 2], [0, 1]).t == math.inf


@pytest.mark.parametrize("a, b, match", [
    ([1, 2, 3], [1, 2], "of the same length"),
    ([[1, 2]], [[1, 2]], "1-D"),
    ([1], [2], "between 2 and 11 seeds"),
    ([1, float("nan")], [1, 2], "finite"),
])
def test_paired_rejects_what_is_not_one_value_per_seed(a, b, match):
    with pytest.raises(ValueError, match=match):
        stats.paired(a, b)


def test_retention_pairs_each_student_with_its_teacher_and_measures_above_the_majority_class():
    student, teacher = [0.80, 0.85, 0.70], [0.90, 0.95, 0.80]
    kept = stats.retention(student, teacher, majority=0.6, seeds=[4, 5, 6])
    assert kept.seeds == (4, 5, 6) and kept.majority == 0.6
    assert kept.ratio == pytest.approx([0.8 / 0.9, 0.85 / 0.95, 0.7 / 0.8])
    assert kept.above_majority == pytest.approx([0.2 / 0.3, 0.25 / 0.35, 0.1 / 0.2])
    assert kept.mean["ratio"] == pytest.approx(np.mean(kept.ratio))
    assert kept.std["above_majority"] == pytest.approx(np.std(kept.above_majority, ddof=1))
    # a student as good as its teacher keeps everything; one at the majority class keeps nothing above it
    same = stats.retention([0.9, 0.6], [0.9, 0.8], majority=0.6)
    assert same.ratio[0] == 1.0 and same.above_majority == pytest.approx((1.0, 0.0)) and same.seeds == (0, 1)
    assert stats.retention([0.7], [0.8], majority=0.5).std == {"ratio": 0.0, "above_majority": 0.0}


@pytest.mark.parametrize("args, message", [
    (([0.8, 0.9], [0.9], 0.5), "of the same non-zero length"),
    (([], [], 0.5), "of the same non-zero length"),
    (([[0.8]], [[0.9]], 0.5), "1-D"),
    (([80.0], [90.0], 0.5), r"student accuracies in \[0, 1\]"),
    (([0.8], [float("nan")], 0.5), r"teacher accuracies in \[0, 1\]"),
    (([0.8], [0.9], 1.0), r"majority, the majority class's share, a number in \[0, 1\)"),
    (([0.8], [0.9], True), "majority"),
    (([0.5, 0.8], [0.9, 0.55], 0.6), "every teacher above the majority class"),
])
def test_retention_rejects_what_it_cannot_pair(args, message):
    with pytest.raises(ValueError, match=message):
        stats.retention(*args)
    with pytest.raises(ValueError, match="one distinct seed per accuracy"):
        stats.retention([0.8, 0.7], [0.9, 0.9], 0.5, seeds=[1, 1])
