"""Tests of course_utils.widgets: the kernel-free twin replays the drawing function exactly, the live
app redraws through it, the choice between them, and validation.

"Exactly" is checked on the figure's JSON: after applying a slider step's update to the twin (the
``visible`` flags and the title), its visible traces, in order, are the traces that the drawing
function returns for that step's value, and its title is that figure's title.
"""

from __future__ import annotations

import json
import types

import numpy as np
import plotly.graph_objects as go
import pytest
from plotly.utils import PlotlyJSONEncoder

from course_utils import plots, positional, widgets
from course_utils.widgets import Choice, Explorer, Slider


def _plain(fig_or_trace) -> dict:
    return json.loads(json.dumps(fig_or_trace.to_plotly_json(), cls=PlotlyJSONEncoder))


def _set(tree: dict, path: str, value) -> None:
    """What plotly.js's restyle does with one attribute path: set it, or delete it for None."""
    *parents, leaf = path.split(".")
    for key in parents:
        tree = tree.setdefault(key, {})
    if value is None:
        tree.pop(leaf, None)
    else:
        tree[leaf] = value


def _prune(tree):
    """Drop the containers left empty by deletions (plotly.js ignores them too)."""
    if isinstance(tree, dict):
        return {k: _prune(v) for k, v in tree.items() if not (isinstance(v, dict) and not _prune(v))}
    return tree


def _step_view(twin: go.Figure, step: dict) -> tuple[list[dict], str]:
    """The twin after plotly.js applies ``step`` (method "update"): its traces and title."""
    assert step["method"] == "update"
    data_update, layout_update, indices = step["args"]
    traces = [_plain(trace) for trace in twin.data]
    for path, values in data_update.items():
        assert len(values) == len(indices), path
        for index, value in zip(indices, values):
            _set(traces[index], path, value)
    return [_prune(t) for t in traces], layout_update["title.text"]


def _drawn(fig: go.Figure) -> tuple[list[dict], str]:
    return [_prune(_plain(trace)) for trace in fig.data], fig.layout.title.text


def _assert_twin_replays_draw(explorer: Explorer, steps) -> None:
    control = explorer.control(explorer.twin)
    twin = explorer.static()
    assert [step["label"] for step in steps] == control.labels()
    assert len(steps) == len(control.values)
    for value, step in zip(control.values, steps):
        assert _step_view(twin, step) == _drawn(explorer.figure(**{control.name: value})), f"step {value!r}"


# --------------------------------------------------------------------------------------------
# A toy explorer whose number of traces changes with the value, with a dropdown too


def _toy_draw(n: int, colour: str = "blue", scale: float = 1.0) -> go.Figure:
    """Three lines: the first fixed, the second moves with n and scale, the third changes colour."""
    fig = go.Figure(
        [
            go.Scatter(x=[0, 1], y=[0, 1], name="fixed"),
            go.Scatter(x=[0, 1], y=[0, scale * n], name=f"slope {scale * n}"),
            go.Scatter(x=[0, 1], y=[1, 0], name="coloured", line=dict(color=colour)),
        ]
    )
    fig.update_layout(title=f"n = {n}, {colour}, scale {scale}", xaxis_range=[0, 1], yaxis_range=[0, 10])
    return fig


def _toy(twin: str = "n") -> Explorer:
    return Explorer(
        _toy_draw,
        [
            Slider("n", [1, 2, 3], default=2),
            Choice("colour", {"Blue": "blue", "Orange": "orange"}),
            Slider("scale", [0.5, 1.0, 2.0]),
        ],
        twin=twin,
    )


# --------------------------------------------------------------------------------------------
# The twin


def test_positional_twin_slider_steps_reproduce_the_drawn_figures():
    explorer = widgets.positional_explorer(max_position=6, d_model=8, position=2, n_dims=8)
    twin = explorer.static()
    (slider,) = twin.layout.sliders
    _assert_twin_replays_draw(explorer, [step.to_plotly_json() for step in slider.steps])
    assert slider.active == 2 and slider.currentvalue.prefix == "position: "


def test_twin_starts_at_the_default_value():
    explorer = widgets.positional_explorer(max_position=6, d_model=8, position=4, n_dims=4)
    twin = explorer.static()
    assert ([_prune(_plain(t)) for t in twin.data], twin.layout.title.text) == _drawn(explorer.figure(position=4))


def test_twin_stores_only_what_changes_with_the_value():
    explorer = widgets.positional_explorer(max_position=6, d_model=8)
    twin = explorer.static()
    assert len(twin.data) == len(explorer.figure().data) == 4  # heatmap, line, sine bars, cosine bars
    for step in twin.layout.sliders[0].steps:
        data_update, _, indices = step.args
        assert list(indices) == [1, 2, 3]  # the heatmap (trace 0) never changes
        assert set(data_update) == {"x", "y", "name"}  # the line's x and name, the bars' heights


def test_twin_keeps_the_layout_of_draw_and_makes_room_for_the_slider():
    explorer = widgets.positional_explorer(max_position=6, d_model=8)
    twin, drawn = explorer.static(), explorer.figure()
    assert twin.layout.height == drawn.layout.height + widgets.SLIDER_ROOM_PX
    assert twin.layout.margin.b == drawn.layout.margin.b + widgets.SLIDER_ROOM_PX
    assert twin.layout.yaxis.range == drawn.layout.yaxis.range and twin.layout.xaxis2 == drawn.layout.xaxis2


def test_twin_of_the_toy_changes_only_the_moving_trace():
    explorer = _toy()
    slider = explorer.static().layout.sliders[0]
    _assert_twin_replays_draw(explorer, [step.to_plotly_json() for step in slider.steps])
    assert all(list(step.args[2]) == [1] for step in slider.steps)


def test_twin_of_a_choice_is_a_dropdown_replaying_draw():
    explorer = _toy(twin="colour")
    twin = explorer.static()
    (menu,) = twin.layout.updatemenus
    assert menu.type == "dropdown" and not twin.layout.sliders
    _assert_twin_replays_draw(explorer, [button.to_plotly_json() for button in menu.buttons])
    assert [b.label for b in menu.buttons] == ["Blue", "Orange"]
    assert all(set(b.args[0]) == {"line.color"} and list(b.args[2]) == [2] for b in menu.buttons)


def test_twin_of_a_float_slider_replays_draw():
    explorer = _toy(twin="scale")
    _assert_twin_replays_draw(explorer, [s.to_plotly_json() for s in explorer.static().layout.sliders[0].steps])


def test_twin_unsets_an_attribute_that_a_step_does_not_draw():
    def draw(n):
        marker = dict(color="red") if n == 2 else None
        return go.Figure([go.Scatter(x=[0, 1], y=[0, n], marker=marker)], layout=dict(title=f"n = {n}"))

    explorer = Explorer(draw, [Slider("n", [1, 2, 3])])
    steps = [s.to_plotly_json() for s in explorer.static().layout.sliders[0].steps]
    assert steps[0]["args"][0]["marker.color"] == [None]
    _assert_twin_replays_draw(explorer, steps)


def test_twin_leaves_the_figures_of_draw_untouched():
    figures = []

    def draw(n):
        figures.append(_toy_draw(n))
        return figures[-1]

    explorer = Explorer(draw, [Slider("n", [1, 2])])
    explorer.static()
    assert all(json.dumps(_plain(fig)) == json.dumps(_plain(_toy_draw(n))) for n, fig in zip([1, 2], figures))


def test_twin_refuses_a_draw_whose_number_of_traces_changes():
    def draw(n):
        return go.Figure([go.Scatter(x=[0], y=[k]) for k in range(n)])

    with pytest.raises(
        ValueError, match="draw draws 1 traces at n=1 and 2 at n=2: the twin changes the data of a fixed set"
    ):
        Explorer(draw, [Slider("n", [1, 2])]).static()


def test_twin_refuses_a_draw_whose_traces_change_kind():
    def draw(n):
        return go.Figure([go.Scatter(x=[0], y=[n]) if n == 1 else go.Bar(x=[0], y=[n])])

    with pytest.raises(ValueError, match="trace 0 is a scatter at first and a bar at n=2: keep its kind"):
        Explorer(draw, [Slider("n", [1, 2])]).static()


def test_twin_refuses_a_draw_whose_layout_moves_and_says_where():
    def draw(n):
        fig = go.Figure([go.Scatter(x=[0], y=[n])])
        fig.add_vline(x=n)
        return fig

    with pytest.raises(ValueError, match=r"beyond the title \(layout\.shapes\[0\]\.x0 differs at n=2\)"):
        Explorer(draw, [Slider("n", [1, 2])]).static()


# --------------------------------------------------------------------------------------------
# The figure


def test_the_positional_figure_draws_the_package_encoding():
    fig = widgets.positional_encoding_figure(7, 6, max_position=20, d_model=10)
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
        widgets.positional_encoding_figure(**{"position": 3, "n_dims": 8, **kwargs})


def test_positional_explorer_offers_dimension_counts_up_to_d_model():
    assert widgets.positional_explorer(d_model=20).control("n_dims").values == (4, 8, 16, 20)
    assert widgets.positional_explorer(d_model=20).control("n_dims").default == 20
    assert widgets.positional_explorer().control("n_dims").default == 32


# --------------------------------------------------------------------------------------------
# The live app


def test_live_app_redraws_through_draw_on_every_change(monkeypatch):
    import ipywidgets

    calls = []

    def draw(n, colour="blue", scale=1.0):
        calls.append((n, colour, scale))
        return _toy_draw(n, colour, scale)

    monkeypatch.setattr("IPython.display.display", lambda *objects, **kwargs: None)  # no front end here
    app = Explorer(draw, [Slider("n", [1, 2, 3], default=2), Choice("colour", ["blue", "orange"])]).live()
    assert isinstance(app, ipywidgets.VBox)
    controls, output = app.children
    slider, dropdown = controls.children
    assert isinstance(slider, ipywidgets.IntSlider) and isinstance(dropdown, ipywidgets.Dropdown)
    assert isinstance(output, ipywidgets.Output)
    assert calls == [(2, "blue", 1.0)]
    slider.value = 3
    dropdown.value = "orange"
    assert calls[-2:] == [(3, "blue", 1.0), (3, "orange", 1.0)]


def test_slider_widgets_match_their_values():
    import ipywidgets

    int_slider = Slider("position", range(0, 51, 5), default=10).widget()
    assert isinstance(int_slider, ipywidgets.IntSlider)
    assert (int_slider.min, int_slider.max, int_slider.step, int_slider.value) == (0, 50, 5, 10)
    assert not int_slider.continuous_update
    uneven = Slider("n_dims", [4, 8, 16, 32], default=16, label="dimensions shown").widget()
    assert isinstance(uneven, ipywidgets.SelectionSlider) and uneven.value == 16
    assert uneven.description == "dimensions shown"
    floats = Slider("temperature", [0.5, 1.0, 2.0]).widget()
    assert isinstance(floats, ipywidgets.SelectionSlider) and floats.options[floats.index] == ("0.5", 0.5)


# --------------------------------------------------------------------------------------------
# Live or twin


def test_interactive_frontend_is_false_outside_a_kernel(monkeypatch):
    monkeypatch.delenv(widgets.LIVE_WIDGETS_ENV, raising=False)
    assert widgets.interactive_frontend() is False


@pytest.mark.parametrize("allow_stdin, expected", [(True, True), (False, False)])
def test_interactive_frontend_follows_the_front_ends_allow_stdin(monkeypatch, allow_stdin, expected):
    monkeypatch.delenv(widgets.LIVE_WIDGETS_ENV, raising=False)
    shell = types.SimpleNamespace(kernel=types.SimpleNamespace(_allow_stdin=allow_stdin))
    monkeypatch.setattr("IPython.get_ipython", lambda: shell)
    assert widgets.interactive_frontend() is expected


@pytest.mark.parametrize("value, expected", [("1", True), ("0", False)])
def test_the_environment_can_force_live_or_twin(monkeypatch, value, expected):
    monkeypatch.setenv(widgets.LIVE_WIDGETS_ENV, value)
    assert widgets.interactive_frontend() is expected


def test_a_bad_environment_value_is_refused(monkeypatch):
    monkeypatch.setenv(widgets.LIVE_WIDGETS_ENV, "yes")
    with pytest.raises(ValueError, match="expected COURSE_UTILS_LIVE_WIDGETS to be 0 or 1"):
        widgets.interactive_frontend()


@pytest.mark.parametrize("live", ["0", "1"])
def test_show_displays_the_twin_or_the_live_app(monkeypatch, live):
    import ipywidgets

    shown = []
    monkeypatch.setenv(widgets.LIVE_WIDGETS_ENV, live)
    monkeypatch.setattr("IPython.display.display", lambda *objects, **kwargs: shown.extend(objects))
    _toy().show()
    expected = ipywidgets.VBox if live == "1" else go.Figure
    assert isinstance(shown[-1], expected)
    if live == "0":
        assert shown[-1].layout.sliders  # the kernel-free twin


# --------------------------------------------------------------------------------------------
# Validation


def _draw_n(n):
    return _toy_draw(n)


@pytest.mark.parametrize(
    "make, error, message",
    [
        (
            lambda: Explorer("draw", [Slider("n", [1])]),
            TypeError,
            "expected draw to be a function returning a plotly figure",
        ),
        (lambda: Explorer(_draw_n, []), ValueError, "expected at least one control"),
        (lambda: Explorer(_draw_n, [("n", [1, 2])]), TypeError, "expected Slider or Choice controls, got tuple"),
        (
            lambda: Explorer(_draw_n, [Slider("m", [1])]),
            ValueError,
            r"expected every control to name an argument of draw \['n'\], got \['m'\]",
        ),
        (
            lambda: Explorer(_draw_n, [Slider("n", [1]), Slider("n", [2])]),
            ValueError,
            "expected one control per argument",
        ),
        (
            lambda: Explorer(_draw_n, [Slider("n", [1])], twin="x"),
            ValueError,
            r"expected twin to be the name of a control, one of \['n'\], got 'x'",
        ),
        (lambda: Slider("n", []), ValueError, "expected at least one value for control 'n'"),
        (lambda: Slider("n", [1, 1]), ValueError, r"expected distinct values for control 'n', got \[1, 1\]"),
        (lambda: Slider("n", "123"), TypeError, "expected the values of control 'n' as a sequence, got str"),
        (lambda: Slider("n", [1, "a"]), TypeError, "expected numbers as the values of slider 'n', got 'a'"),
        (
            lambda: Slider("n", range(10), default=10),
            ValueError,
            r"expected the default of control 'n' to be one of its values 0, 1, \.\.\., 9, got 10",
        ),
        (lambda: Slider("n d", [1]), ValueError, "expected a control name that is a Python identifier"),
        (lambda: Choice("c", {"a": 1, "b": 1}), ValueError, "expected distinct values for control 'c'"),
        (
            lambda: Choice("c", ["x", "y"], default="z"),
            ValueError,
            "expected the default of control 'c' to be one of its values 'x', 'y', got 'z'",
        ),
    ],
)
def test_bad_explorers_and_controls_are_refused(make, error, message):
    with pytest.raises(error, match=message):
        make()


def test_figure_checks_the_values_it_is_given():
    explorer = _toy()
    with pytest.raises(ValueError, match=r"expected values for the controls \['n', 'colour', 'scale'\], got 'size'"):
        explorer.figure(size=3)
    with pytest.raises(ValueError, match="expected n to be one of 1, 2, 3, got 7"):
        explorer.figure(n=7)
    with pytest.raises(KeyError, match="no control named 'm'"):
        explorer.control("m")


def test_a_draw_that_returns_no_figure_is_reported():
    with pytest.raises(TypeError, match="expected draw to return a plotly.graph_objects.Figure, got dict"):
        Explorer(lambda n: {"data": []}, [Slider("n", [1])]).figure()


def test_numpy_values_become_python_values():
    slider = Slider("n", np.arange(3))
    assert slider.values == (0, 1, 2) and all(type(v) is int for v in slider.values)
