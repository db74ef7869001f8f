"""Lesson 03's figure and explorer in course_utils.figures: the figure draws the package's encoding,
bad values are refused, and the explorer's kernel-free twin replays the figure at every position
(storing only what changes, keeping the layout and making room for its slider).
"""

from __future__ import annotations

import numpy as np
import pytest

from course_utils import figures, plots, positional, widgets
from tests.explorer_cases import assert_twin_replays_draw, drawn, plain, prune

# --------------------------------------------------------------------------------------------
# The twin


def test_positional_twin_slider_steps_reproduce_the_drawn_figures():
    explorer = figures.positional_explorer(max_position=6, d_model=8, position=2, n_dims=8)
    twin = explorer.static()
    (slider,) = twin.layout.sliders
    assert_twin_replays_draw(explorer, [step.to_plotly_json() for step in slider.steps])
    assert slider.active == 2 and slider.currentvalue.prefix == "position: "


def test_twin_starts_at_the_default_value():
    explorer = figures.positional_explorer(max_position=6, d_model=8, position=4, n_dims=4)
    twin = explorer.static()
    assert ([prune(plain(t)) for t in twin.data], twin.layout.title.text) == drawn(explorer.figure(position=4))


def test_twin_stores_only_what_changes_with_the_value():
    explorer = figures.positional_explorer(max_position=6, d_model=8)
    twin = explorer.static()
    assert len(twin.data) == len(explorer.figure().data) == 4  # heatmap, line, sine bars, cosine bars
    for step in twin.layout.sliders[0].steps:
        data_update, _, indices = step.args
        assert list(indices) == [1, 2, 3]  # the heatmap (trace 0) never changes
        assert set(data_update) == {"x", "y", "name"}  # the line's x and name, the bars' heights


def test_twin_keeps_the_layout_of_draw_and_makes_room_for_the_slider():
    explorer = figures.positional_explorer(max_position=6, d_model=8)
    twin, figure = explorer.static(), explorer.figure()
    assert twin.layout.height == figure.layout.height + widgets.SLIDER_ROOM_PX
    assert twin.layout.margin.b == figure.layout.margin.b + widgets.SLIDER_ROOM_PX
    assert twin.layout.yaxis.range == figure.layout.yaxis.range and twin.layout.xaxis2 == figure.layout.xaxis2


# --------------------------------------------------------------------------------------------
# The figure


def test_the_positional_figure_draws_the_package_encoding():
    fig = figures.positional_encoding_figure(7, 6, max_position=20, d_model=10)
    heatmap, line, sines, cosines = fig.data
    table = positional.sinusoidal_encoding(21, 10)[:, :6]
    np.testing.assert_array_equal(heatmap.z, plots.significant(table.T))
    np.testing.assert_array_equal(line.x, [7, 7])
    np.testing.assert_array_equal(sines.y, plots.significant(table[7, 0::2], digits=4))
    np.testing.assert_array_equal(cosines.y, plots.significant(table[7, 1::2], digits=4))
    assert (sines.x0, sines.dx, cosines.x0, cosines.dx) == (0, 2, 1, 2)  # dimensions 0, 2, 4 and 1, 3, 5
    assert fig.layout.title.text == "Position 7: its sinusoidal encoding (first 6 of 10 dimensions)"


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(position=51), r"expected position to be an integer in 0 \.\. max_position=50, got 51"),
        (dict(position=-1), "expected position to be an integer in 0"),
        (dict(position=2.0), "expected position to be an integer in 0"),
        (dict(n_dims=80), "expected n_dims <= d_model=64, got n_dims=80"),
        (dict(n_dims=0), "expected n_dims to be a positive integer, got 0"),
        (dict(d_model=True), "expected d_model to be a positive integer, got True"),
    ],
)
def test_the_positional_figure_rejects_bad_values(kwargs, message):
    with pytest.raises(ValueError, match=message):
        figures.positional_encoding_figure(**{"position": 3, "n_dims": 8, **kwargs})


def test_positional_explorer_offers_dimension_counts_up_to_d_model():
    assert figures.positional_explorer(d_model=20).control("n_dims").values == (4, 8, 16, 20)
    assert figures.positional_explorer(d_model=20).control("n_dims").default == 20
    assert figures.positional_explorer().control("n_dims").default == 32
