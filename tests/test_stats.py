"""course_utils.stats: paired differences over seeds, their tests and intervals, Holm, equivalence, AUC."""

from __future__ import annotations

import math

import numpy as np
import pytest

from course_utils import stats

# R's "sleep" data (Student 1908, as R ships it): extra hours of sleep under two drugs, ten patients.
# R's t.test(extra ~ group, data = sleep, paired = TRUE) prints t = -4.0621, df = 9,
# p-value = 0.002833, 95 percent confidence interval -2.4598858 -0.7001142, mean difference -1.58.
SLEEP_1 = [0.7, -1.6, -0.2, -1.2, -0.1, 3.4, 3.7, 0.8, 0.0, 2.0]
SLEEP_2 = [1.9, 0.8, 1.1, 0.1, -0.1, 4.4, 5.5, 1.6, 4.6, 3.4]


def test_paired_gives_rs_t_test_of_the_sleep_data():
    result = stats.paired(SLEEP_1, SLEEP_2)
    assert result.mean == pytest.approx(-1.58) and result.n == 10
    assert result.t == pytest.approx(-4.0621, abs=5e-5) and result.p == pytest.approx(0.002833, abs=5e-7)
    assert result.interval == pytest.approx((-2.4598858, -0.7001142), abs=5e-8)
    assert result.significant and "p = 0.00283" in str(result) and "-2.4599 to -0.7001" in str(result)


def test_paired_differences_against_numpy_and_scipy():
    from scipy import stats as scipy_stats

    a, b = [0.91, 0.95, 0.90, 0.93, 0.94], [0.88, 0.94, 0.86, 0.90, 0.93]
    result = stats.paired(a, b)
    differences = np.subtract(a, b)
    assert result.mean == pytest.approx(differences.mean()) and result.std == pytest.approx(differences.std(ddof=1))
    reference = scipy_stats.ttest_rel(a, b)
    assert result.t == pytest.approx(reference.statistic) and result.p == pytest.approx(reference.pvalue)
    low, high = reference.confidence_interval(0.95)
    assert result.interval == pytest.approx((low, high))
    noisy = stats.paired([0.9, 0.8, 0.95, 0.7, 0.92], [0.85, 0.9, 0.9, 0.8, 0.9])
    assert not noisy.significant and noisy.interval[0] < 0 < noisy.interval[1]
    same = stats.paired([1, 1], [1, 1])
    assert same.t == 0 and same.p == 1 and same.interval == (0, 0)
    shifted = stats.paired([1, 2], [0, 1])  # every seed one higher: no spread, a certain difference
    assert shifted.t == math.inf and shifted.p == 0 and shifted.significant


@pytest.mark.parametrize("a, b, match", [
    ([1, 2, 3], [1, 2], "of the same length"),
    ([[1, 2]], [[1, 2]], "1-D"),
    ([1], [2], "at least 2 seeds"),
    ([1, float("nan")], [1, 2], "finite"),
])
def test_paired_rejects_what_is_not_one_value_per_seed(a, b, match):
    with pytest.raises(ValueError, match=match):
        stats.paired(a, b)
    with pytest.raises(ValueError, match=match):
        stats.equivalence(a, b, margin=1.0)


def test_holm_gives_rs_p_adjust():
    # R: p.adjust(c(0.01, 0.02, 0.03, 0.04, 0.05), "holm") -> 0.05 0.08 0.09 0.09 0.09
    assert stats.holm([0.01, 0.02, 0.03, 0.04, 0.05]) == pytest.approx([0.05, 0.08, 0.09, 0.09, 0.09])
    # in the order given, not sorted; capped at 1; one test is left as it is
    assert stats.holm([0.04, 0.001, 0.6]) == pytest.approx([0.08, 0.003, 0.6])
    assert stats.holm([0.5, 0.9]) == [1.0, 1.0] and stats.holm([0.03]) == [0.03]
    for bad in ([], [0.1, 1.5], [float("nan")], [[0.1]]):
        with pytest.raises(ValueError, match="p-values"):
            stats.holm(bad)


def test_equivalence_is_two_one_sided_t_tests():
    from scipy import stats as scipy_stats

    differences = np.subtract(SLEEP_1, SLEEP_2)
    for margin in (1.0, 2.0, 3.0):
        result = stats.equivalence(SLEEP_1, SLEEP_2, margin)
        lower = scipy_stats.ttest_1samp(differences, -margin, alternative="greater").pvalue
        upper = scipy_stats.ttest_1samp(differences, margin, alternative="less").pvalue
        assert result.p == pytest.approx(max(lower, upper)) and result.margin == margin
        low, high = result.interval  # the 90% interval: inside the margins exactly when p < 0.05
        assert result.equivalent == (-margin < low and high < margin)
    assert not stats.equivalence(SLEEP_1, SLEEP_2, 1.0).equivalent  # -1.58 is beyond 1
    assert stats.equivalence(SLEEP_1, SLEEP_2, 3.0).equivalent  # and well within 3
    assert stats.equivalence([1, 2], [1, 2], 0.5).equivalent  # no difference at all, no spread
    for margin in (0, -1, True, "1"):
        with pytest.raises(ValueError, match="expected margin"):
            stats.equivalence([1, 2], [1, 2], margin)


def test_auc_counts_the_pairs_ranked_right():
    assert stats.auc([0.1, 0.4, 0.35, 0.8], [0, 0, 1, 1]) == 0.75  # scikit-learn's roc_auc_score example
    assert stats.auc([1, 2, 3], [0, 1, 1]) == 1.0 and stats.auc([3, 2, 1], [0, 1, 1]) == 0.0
    assert stats.auc([1, 1, 1, 1], [0, 1, 0, 1]) == 0.5  # ties count half
    rng = np.random.default_rng(0)
    scores, labels = rng.normal(size=40), rng.integers(0, 2, size=40)
    pairs = [(p, n) for p in scores[labels == 1] for n in scores[labels == 0]]
    assert stats.auc(scores, labels) == pytest.approx(np.mean([p > n for p, n in pairs]))
    for scores, labels, match in (([1, 2], [1, 1], "each at least once"), ([1, 2], [0, 2], "labels 0 and 1"),
                                  ([1, 2, 3], [0, 1], "one score per label"), ([np.nan, 1], [0, 1], "finite")):
        with pytest.raises(ValueError, match=match):
            stats.auc(scores, labels)


def test_auc_chance_p_is_the_mann_whitney_test():
    """Nine positives above fourteen negatives: chance ranks them so in one of C(23, 9) orders; an AUC
    of 0.71 is about the 95th percentile under chance for these sizes (issue 50's threshold)."""
    labels = [1] * 9 + [0] * 14
    perfect = stats.auc_chance_p(list(range(23, 0, -1)), labels)
    assert perfect == pytest.approx(1 / math.comb(23, 9))
    rng = np.random.default_rng(1)
    ps = [stats.auc_chance_p(rng.permutation(23), labels) for _ in range(2000)]
    assert 0.03 < np.mean(np.array(ps) < 0.05) < 0.07  # calibrated: about 5% of random rankings


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


# --- power of the paired t-test (issue 58: the rerun's seeds come from a power calculation) ---------


def test_power_agrees_with_scipys_paired_test_on_simulated_seeds():
    """The noncentral-t power is how often scipy's own paired t-test rejects on normal data."""
    from scipy import stats as scipy_stats

    rng = np.random.default_rng(0)
    for difference, std, n in ((5.0, 3.1, 6), (2.0, 3.1, 5), (7.0, 7.0, 5)):
        draws = rng.normal(difference, std, size=(20_000, n))
        rejected = scipy_stats.ttest_1samp(draws, 0.0, axis=1).pvalue < 0.05
        assert abs(rejected.mean() - stats.power(difference, std, n)) < 0.012, (difference, std, n)


def test_power_is_alpha_at_no_difference_and_grows_with_seeds_and_difference():
    assert stats.power(0.0, 3.1, 6) == pytest.approx(0.05, abs=1e-9)
    assert stats.power(0.0, 3.1, 6, alpha=0.05 / 3) == pytest.approx(0.05 / 3, abs=1e-9)
    assert stats.power(4.0, 3.1, 5) < stats.power(4.0, 3.1, 8) < stats.power(6.0, 3.1, 8)


def test_detectable_and_seeds_for_invert_power():
    d = stats.detectable(3.1, 6)
    assert stats.power(d, 3.1, 6) == pytest.approx(0.8, abs=1e-6)
    n = stats.seeds_for(d, 3.1)
    assert n == 6 and stats.power(d, 3.1, n - 1) < 0.8
    # a sign-flip-free fact: five seeds and a 7-point spread cannot find 5 points at 80%
    assert stats.power(5.0, 7.0, 5) < 0.5


@pytest.mark.parametrize("call, message", [
    (lambda: stats.power(1.0, 0.0, 5), "std"),
    (lambda: stats.power(1.0, 1.0, 1), "n, a number of seeds"),
    (lambda: stats.power(1.0, 1.0, 5.5), "n, a number of seeds"),
    (lambda: stats.power(1.0, 1.0, 5, alpha=1.5), "alpha"),
    (lambda: stats.detectable(1.0, 5, target=1.0), "target"),
    (lambda: stats.seeds_for(0.0, 1.0), "other than 0"),
])
def test_power_functions_say_what_they_expected(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_paired_interval_at_another_level_is_scipys_t_interval():
    from scipy import stats as scipy_stats

    a, b = [0.80, 0.85, 0.78, 0.90, 0.83], [0.75, 0.80, 0.79, 0.84, 0.78]
    d = np.subtract(a, b)
    for level in (0.95, 1 - 0.05 / 3):
        low, high = scipy_stats.t.interval(level, len(d) - 1, loc=d.mean(), scale=scipy_stats.sem(d))
        result = stats.paired(a, b, level=level)
        assert result.interval == pytest.approx((low, high)) and result.level == level
    assert "98.3% interval" in str(stats.paired(a, b, level=1 - 0.05 / 3))
    with pytest.raises(ValueError, match="expected level"):
        stats.paired(a, b, level=95)


@pytest.mark.parametrize("p_values, levels", [
    ([0.001, 0.004, 0.03], [1 - 0.05 / 3, 1 - 0.05 / 2, 0.95]),  # every step rejects
    ([0.001, 0.04, 0.03], [1 - 0.05 / 3, 0.975, 0.975]),  # the second step fails: the third held to it
    ([0.2, 0.01, 0.03], [0.975, 1 - 0.05 / 3, 0.975]),  # in any order
    ([0.02, 0.03, 0.04], [1 - 0.05 / 3] * 3),  # the first step fails: nothing rejected
])
def test_holm_levels_are_bonferroni_at_each_step(p_values, levels):
    assert stats.holm_levels(p_values) == pytest.approx(levels)


def test_an_interval_at_its_holm_level_excludes_0_exactly_when_holm_rejects():
    rng = np.random.default_rng(0)
    for _ in range(300):
        arms = [(rng.normal(0.8 + rng.choice([0, 0.01, 0.03]), 0.02, 6), rng.normal(0.8, 0.02, 6)) for _ in range(3)]
        tests = [stats.paired(a, b) for a, b in arms]
        adjusted = stats.holm([t.p for t in tests])
        for (a, b), level, q in zip(arms, stats.holm_levels([t.p for t in tests]), adjusted):
            low, high = stats.paired(a, b, level=level).interval
            assert (low > 0 or high < 0) == (q < 0.05)


def test_bootstrap_paired_centres_on_the_difference_and_widens_with_fewer_sentences():
    rng = np.random.default_rng(1)
    a, b = rng.random((8, 800)) < 0.75, rng.random((8, 800)) < 0.68
    result = stats.bootstrap_paired(a, b, resamples=2000)
    assert result.mean == pytest.approx(a.mean() - b.mean())
    low, high = result.interval
    assert low < result.mean < high and 0 < low
    narrow = stats.bootstrap_paired(a[:, :100], b[:, :100], resamples=2000)
    assert narrow.interval[1] - narrow.interval[0] > high - low
    assert stats.bootstrap_paired(a, b, resamples=2000) == result  # seeded
    with pytest.raises(ValueError, match="booleans"):
        stats.bootstrap_paired(a.astype(int), b.astype(int))
    with pytest.raises(ValueError, match="same shape"):
        stats.bootstrap_paired(a, b[:, :10])


def test_steps_worth_interpolates_in_log_steps_and_says_when_the_curve_never_gets_there():
    curve = {250: [0.60, 0.62], 500: [0.70, 0.70], 1000: [0.80, 0.80], 2000: [0.90, 0.90]}
    assert stats.steps_worth(curve, [0.75, 0.75], resamples=200).estimate == pytest.approx(math.sqrt(500 * 1000))
    assert stats.steps_worth(curve, [0.55, 0.56], resamples=200).estimate == 250
    never = stats.steps_worth(curve, [0.95, 0.96], resamples=200)
    assert math.isinf(never.estimate) and "more than 2,000" in str(never)
    with pytest.raises(ValueError, match="at least two budgets"):
        stats.steps_worth({250: [0.6, 0.7]}, [0.7, 0.7])
