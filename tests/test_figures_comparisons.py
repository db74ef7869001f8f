"""course_utils.figures.comparisons: every seed, the mean, the interval and the verdict; Holm's steps."""

from __future__ import annotations

import pytest

from course_utils import stats
from course_utils.figures import comparisons

ROW = comparisons.ComparisonRow("triple - MLM", (0.05, 0.08, 0.10, 0.07), (0.04, 0.11), 0.983, "higher")


def test_a_row_draws_each_seed_its_mean_and_its_interval_in_points():
    fig = comparisons.differences_figure([ROW, comparisons.ComparisonRow("L_ce", (0.2, -0.1), (-0.5, 0.6), 0.95,
                                                                         "exploratory")], title="Two rows")
    seeds = [t for t in fig.data if t.name == "each seed"]
    assert [list(t.x) for t in seeds][0] == pytest.approx([5, 8, 10, 7])
    intervals = [t for t in fig.data if t.name == "interval"]
    assert list(intervals[0].x) == pytest.approx([4, 11])
    # the verdict and the interval's level in the row's label: nothing written beside the interval
    assert intervals[0].y[0].endswith("<i>higher, 98.3% interval</i>")
    assert intervals[1].y[0].endswith("<i>exploratory, 95.0% interval</i>")
    means = [t for t in fig.data if t.name == "mean"]
    assert means[0].x[0] == pytest.approx(7.5)
    assert not fig.layout.annotations and fig.layout.xaxis.ticksuffix == " pts"
    assert fig.layout.xaxis.range[0] < -50 and fig.layout.height == 150 + 2 * 90
    long = comparisons.ComparisonRow("the teacher's outputs against twice the steps of masked words",
                                     (0.1, 0.2), (0, 0.3), 0.975, "lower")
    label = comparisons.differences_figure([long], title="t").data[0].y[0]
    assert all(len(line) <= 30 for line in label.split("<br>")[:-1])  # wrapped for a phone


@pytest.mark.parametrize("row, message", [
    (comparisons.ComparisonRow("x", (0.1,), (0, 1), 0.95, "higher"), "at least two"),
    (comparisons.ComparisonRow("x", (0.1, 0.2), (1, 0), 0.95, "higher"), "low <= high"),
    (comparisons.ComparisonRow("x", (0.1, 0.2), (0, 1), 0.95, "equivalent"), "verdict"),
    (comparisons.ComparisonRow("x", (0.1, 0.2), (0, 1), 95, "higher"), "level"),
])
def test_a_wrong_row_is_named(row, message):
    with pytest.raises(ValueError, match=message):
        comparisons.differences_figure([row], title="t")
    with pytest.raises(ValueError, match="at least one ComparisonRow"):
        comparisons.differences_figure([], title="t")


def test_holm_figure_fills_exactly_what_holm_rejects():
    p = [0.03, 0.001, 0.02]
    fig = comparisons.holm_figure(["a", "b", "c"], p, title="Holm")
    threshold, rejected, kept = fig.data
    assert list(threshold.y) == pytest.approx([0.05 / 3, 0.05 / 2, 0.05])
    assert list(rejected.x) == ["step 1: b", "step 2: c", "step 3: a"] and not kept.x
    adjusted = stats.holm(p)
    assert {x.split(": ")[1] for x in rejected.x} == {n for n, q in zip("abc", adjusted) if q < 0.05}
    stops = comparisons.holm_figure(["a", "b", "c"], [0.04, 0.001, 0.03], title="Holm")
    assert list(stops.data[2].x) == ["step 2: c", "step 3: a"]  # 0.03 > 0.025: the descent stops there
    with pytest.raises(ValueError, match="one name per p-value"):
        comparisons.holm_figure(["a"], [0.1, 0.2], title="Holm")


def test_budget_figure_draws_every_seed_the_means_the_target_band_and_the_crossing():
    curve = {250: [0.60, 0.62], 500: [0.70, 0.70], 1000: [0.80, 0.80]}
    worth = stats.steps_worth(curve, [0.74, 0.76], resamples=200)
    fig = comparisons.budget_figure(curve, [0.74, 0.76], "triple loss, 250 steps", worth=worth, title="Budget")
    target, seeds, means = fig.data
    assert target.name == "triple loss, 250 steps: mean" and list(target.y) == pytest.approx([0.75, 0.75])
    assert list(seeds.x) == [250, 250, 500, 500, 1000, 1000] and list(means.y) == pytest.approx([0.61, 0.70, 0.80])
    assert fig.layout.shapes[0].y0 == 0.74 and fig.layout.shapes[0].y1 == 0.76  # the target's seeds, a band
    # on a log axis the line takes the data value, its label the log10, and the axis spans the budgets only
    assert fig.layout.shapes[-1].x0 == pytest.approx(worth.estimate)
    assert 10 ** fig.layout.annotations[0].x == pytest.approx(worth.estimate)
    assert 10 ** fig.layout.xaxis.range[1] == pytest.approx(1200)
    assert fig.layout.xaxis.type == "log"
    with pytest.raises(ValueError, match="at least two budgets"):
        comparisons.budget_figure({250: [0.6]}, [0.7], "t", title="t")
