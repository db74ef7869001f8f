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
    assert len(twin.data) == len(explorer.figure().data) == 5  # heatmap, line, ghost, sine bars, cosine bars
    for step in twin.layout.sliders[0].steps:
        data_update, _, indices = step.args
        assert list(indices) == [1, 2, 3, 4]  # the heatmap (trace 0) never changes
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
    heatmap, line, ghost, sines, cosines = fig.data
    table = positional.sinusoidal_encoding(21, 10)[:, :6]
    np.testing.assert_array_equal(heatmap.z, plots.significant(table.T))
    np.testing.assert_array_equal(line.x, [7, 7])
    # the position before, behind the bars: every dimension's value one position earlier
    np.testing.assert_array_equal(ghost.y, plots.significant(table[6], digits=4))
    np.testing.assert_array_equal(ghost.x, np.arange(6))
    assert ghost.name == "position 6" and fig.layout.barmode == "overlay" and ghost.width > sines.width
    first = figures.positional_encoding_figure(0, 6, max_position=20, d_model=10)
    assert not np.any(first.data[2].y)  # position 0 has none before it
    assert fig.layout.yaxis.ticks == "outside" and fig.layout.yaxis.ticklen > 0  # tick labels off the cells
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


# --------------------------------------------------------------------------------------------
# A few positions' vectors, and where they differ from the first one's


def test_pair_distances_are_the_chords_between_the_pairs_points_on_the_circle():
    encoding = positional.sinusoidal_encoding(64, 32)  # (T, d_model)
    distances = figures.pair_distances(encoding, [0, 1, 10, 40])
    assert distances.shape == (3, 16)
    omegas = positional.frequencies(32)[0::2]  # (16,): one frequency per pair
    for k, p in enumerate([1, 10, 40]):  # two points at angles 0 and w p: a chord of 2 |sin(w p / 2)|
        np.testing.assert_allclose(distances[k], 2 * np.abs(np.sin(omegas * p / 2)), atol=1e-12)
    shifted = figures.pair_distances(encoding, [3, 3 + 7])[0]  # only how far apart the positions are counts
    np.testing.assert_allclose(shifted, 2 * np.abs(np.sin(omegas * 7 / 2)), atol=1e-12)


def test_the_position_vectors_figure_outlines_the_pairs_that_differ():
    encoding = positional.sinusoidal_encoding(64, 32)
    fig = figures.position_vectors_figure(encoding, [0, 1, 10, 40], within=0.1)
    vectors, *lines = fig.data
    np.testing.assert_allclose(np.array(vectors.z, dtype=float), encoding[[0, 1, 10, 40]], atol=5e-4)
    distances = figures.pair_distances(encoding, [0, 1, 10, 40])
    assert [t.name for t in lines] == ["position 1", "position 10", "position 40", "0.1: they agree below"]
    for trace, row in zip(lines, distances):
        np.testing.assert_allclose(np.array(trace.y, dtype=float), row, atol=5e-4)
    assert list(lines[-1].y) == [0.1, 0.1]
    # each later row outlined from dimension 0 to the end of its last pair more than 0.1 away:
    # pairs 3, 7, 10, so dimensions 7, 15, 21 (the numbers lesson 03's prose states)
    shapes = fig.layout.shapes
    assert [(s.x0, s.x1, s.y0, s.y1) for s in shapes] == [
        (-0.5, 7.5, 0.5, 1.5), (-0.5, 15.5, 1.5, 2.5), (-0.5, 21.5, 2.5, 3.5)
    ]  # fmt: skip
    assert fig.layout.yaxis.ticktext == ("pos 0", "pos 1", "pos 10", "pos 40")
    assert fig.layout.title.text == "Encoding vectors of 4 positions (d_model = 32)"


@pytest.mark.parametrize(
    "args, kwargs, message",
    [
        ((np.ones((4, 3)), [0, 1]), {}, "even d_model"),
        ((np.ones((4, 4)), [0]), {}, "at least two distinct positions"),
        ((np.ones((4, 4)), [0, 0]), {}, "at least two distinct positions"),
        ((np.ones((4, 4)), [0, 4]), {}, r"in 0 \.\. 3"),
        ((np.ones((4, 4)), [0, True]), {}, "at least two distinct positions"),
        ((np.ones((8, 4)), list(range(7))), {}, "2 to 6 positions"),
        ((np.ones((4, 4)), [0, 1]), {"within": 2.5}, r"within, a distance between pairs, in \(0, 2\)"),
    ],
)
def test_the_position_vectors_figure_rejects_bad_values(args, kwargs, message):
    with pytest.raises(ValueError, match=message):
        figures.position_vectors_figure(*args, **kwargs)


# --------------------------------------------------------------------------------------------
# The table with its wavelengths, and the dot products against the distance


def test_the_table_figure_draws_the_encoding_and_each_labelled_rows_wavelength():
    encoding = positional.sinusoidal_encoding(64, 32)
    fig = figures.sinusoidal_table_figure(encoding)
    heatmap = fig.data[0]
    np.testing.assert_array_equal(heatmap.z, plots.significant(encoding.T))  # dimensions down, positions across
    rows = figures.wavelength_rows(32)
    assert list(rows) == [0, 8, 16, 24]
    np.testing.assert_allclose(list(rows.values()), 2 * np.pi * np.array([1, 10, 100, 1000]), rtol=1e-12)
    # the right axis writes each labelled row's wavelength: a full turn of its sine, in positions
    assert list(fig.layout.yaxis2.tickvals) == [0, 8, 16, 24]
    assert list(fig.layout.yaxis2.ticktext) == ["6.3", "63", "628", "6,283"]
    for row, text in zip(fig.layout.yaxis2.tickvals, fig.layout.yaxis2.ticktext):
        wavelength = float(text.replace(",", ""))
        assert np.isclose(np.sin(wavelength * positional.frequencies(32)[row]), 0, atol=0.02)
    # the x ticks every 10 positions: far enough apart on a phone
    assert list(fig.layout.xaxis.tickvals) == [0, 10, 20, 30, 40, 50, 60]
    with pytest.raises(ValueError, match="d_model even"):
        figures.sinusoidal_table_figure(encoding[:, :31])


def test_the_distance_figure_draws_the_sinusoids_in_colour_and_the_random_table_in_grey():
    distances = np.arange(11)
    table = positional.sinusoidal_encoding(40, 8)
    random_table = np.random.default_rng(0).standard_normal((40, 8))
    sinusoidal = {f"from position {p}": positional.dots_by_distance(table, p, 10) for p in (0, 20)}
    random = {f"random table, from {p}": positional.dots_by_distance(random_table, p, 10) for p in (0, 20)}
    fig = figures.dots_by_distance_figure(distances, sinusoidal, random, d_model=8)
    by_name = {trace.name: trace for trace in fig.data}
    for name, ys in {**sinusoidal, **random}.items():
        np.testing.assert_allclose(by_name[name].y, ys, rtol=5e-4)
    greys = [t for t in fig.data if t.line.color == plots.REFERENCE_COLOR]
    assert {t.name for t in greys} == set(random)  # only the random table's curves are grey
    assert fig.data[0].name in random  # drawn first: under the sinusoids
    assert "d_model = 8" in fig.layout.title.text
    with pytest.raises(ValueError, match="like distances"):
        figures.dots_by_distance_figure(distances[:5], sinusoidal, random)
