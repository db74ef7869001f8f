"""course_utils.plots.heatmap(..., blocked=...): cells without a value (masked attention scores)
drawn grey with a text, and the figure unchanged when ``blocked`` is not given."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from course_utils import plots

MASKED = np.array([[1.0, -np.inf, -np.inf], [0.5, 2.0, -np.inf], [0.1, 0.2, 0.3]])
LABELS = ["a", "b", "c"]


def masked_heatmap(**kwargs):
    return plots.heatmap(MASKED, LABELS, LABELS, title="T", x_title="key", y_title="query", **kwargs)


def test_without_blocked_the_figure_is_the_one_heatmap_trace_it_always_was():
    fig = masked_heatmap()
    assert len(fig.data) == 1 and fig.data[0].hoverongaps is None
    assert fig.data[0].texttemplate == "%{z:.2f}"


def test_blocked_cells_carry_no_value_and_are_covered_by_grey_cells_with_the_text():
    blocked = np.isinf(MASKED)
    fig = masked_heatmap(blocked=blocked)
    values, grey = fig.data
    z = np.array(values.z, dtype=float)
    assert np.isnan(z[blocked]).all()  # a gap: no colour, no text
    np.testing.assert_array_equal(z[~blocked], MASKED[~blocked])
    assert values.hoverongaps is False
    grey_z = np.array(grey.z, dtype=float)
    assert (grey_z[blocked] == 0).all() and np.isnan(grey_z[~blocked]).all()
    assert grey.showscale is False
    assert grey.colorscale[0][1] == grey.colorscale[-1][1] == plots.BLOCKED_COLOR
    np.testing.assert_array_equal(np.array(grey.text), np.where(blocked, "blocked", ""))
    assert grey.texttemplate == "%{text}"  # a constant template would write on the gaps too
    assert list(grey.x) == list(values.x) and list(grey.y) == list(values.y)


def test_the_colour_scale_spans_the_values_that_are_not_blocked():
    fig = masked_heatmap(blocked=np.isinf(MASKED))
    z = np.array(fig.data[0].z, dtype=float)
    assert np.nanmin(z) == 0.1 and np.nanmax(z) == 2.0  # -inf would have swamped the scale


def test_blocked_text_and_repeated_labels():
    fig = plots.heatmap(
        np.zeros((2, 2)),
        ["x", "x"],
        ["r", "s"],
        title="T",
        x_title="X",
        y_title="Y",
        blocked=np.array([[False, True], [False, False]]),
        blocked_text="masked",
    )
    grey = fig.data[1]
    assert np.array(grey.text)[0, 1] == "masked" and "masked" in grey.hovertemplate
    assert list(grey.x) == ["x (0)", "x (1)"]


def test_nothing_blocked_still_draws_the_grey_trace_so_explorer_steps_keep_their_traces():
    fig = masked_heatmap(blocked=np.zeros((3, 3), dtype=bool))
    assert len(fig.data) == 2 and np.isnan(np.array(fig.data[1].z, dtype=float)).all()


def test_a_torch_mask_is_accepted():
    fig = masked_heatmap(blocked=torch.from_numpy(np.isinf(MASKED)))
    assert np.isnan(np.array(fig.data[0].z, dtype=float)[0, 1])


def test_the_figure_serialises_without_nan_or_infinity_tokens():
    text = masked_heatmap(blocked=np.isinf(MASKED)).to_json()
    assert "NaN" not in text and "Infinity" not in text
    json.loads(text)


@pytest.mark.parametrize(
    "blocked, error, message",
    [
        (np.isinf(MASKED).astype(int), TypeError, "expected blocked to be a boolean array"),
        (
            np.zeros((2, 3), dtype=bool),
            ValueError,
            r"expected blocked of the shape of the values \(3, 3\), got \(2, 3\)",
        ),
    ],
)
def test_bad_blocked_is_refused_with_what_was_expected(blocked, error, message):
    with pytest.raises(error, match=message):
        masked_heatmap(blocked=blocked)


def test_blocked_cells_trace_checks_its_text():
    with pytest.raises(ValueError, match="non-empty string for text"):
        plots.blocked_cells_trace(np.ones((1, 1), dtype=bool), ["a"], ["b"], text=" ")
