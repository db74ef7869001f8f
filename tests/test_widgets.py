"""Tests of course_utils.widgets, on a toy explorer: the kernel-free twin replays the drawing function
exactly (see tests/explorer_cases.py), the live app redraws through it, the choice between them,
and validation. The lessons' explorers are tested in tests/test_figures_*.py.
"""
from __future__ import annotations

import json

import numpy as np
import plotly.graph_objects as go
import pytest

from course_utils import env
from course_utils.widgets import Choice, Explorer, Slider
from tests.explorer_cases import assert_twin_replays_draw, plain

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


def test_twin_of_the_toy_changes_only_the_moving_trace():
    explorer = _toy()
    slider = explorer.static().layout.sliders[0]
    assert_twin_replays_draw(explorer, [step.to_plotly_json() for step in slider.steps])
    assert all(list(step.args[2]) == [1] for step in slider.steps)


def test_twin_of_a_choice_is_a_dropdown_replaying_draw():
    explorer = _toy(twin="colour")
    twin = explorer.static()
    (menu,) = twin.layout.updatemenus
    assert menu.type == "dropdown" and not twin.layout.sliders
    assert_twin_replays_draw(explorer, [button.to_plotly_json() for button in menu.buttons])
    assert [b.label for b in menu.buttons] == ["Blue", "Orange"]
    assert all(set(b.args[0]) == {"line.color"} and list(b.args[2]) == [2] for b in menu.buttons)


def test_twin_of_a_float_slider_replays_draw():
    explorer = _toy(twin="scale")
    assert_twin_replays_draw(explorer, [s.to_plotly_json() for s in explorer.static().layout.sliders[0].steps])


def test_twin_unsets_an_attribute_that_a_step_does_not_draw():
    def draw(n):
        marker = dict(color="red") if n == 2 else None
        return go.Figure([go.Scatter(x=[0, 1], y=[0, n], marker=marker)], layout=dict(title=f"n = {n}"))

    explorer = Explorer(draw, [Slider("n", [1, 2, 3])])
    steps = [s.to_plotly_json() for s in explorer.static().layout.sliders[0].steps]
    assert steps[0]["args"][0]["marker.color"] == [None]
    assert_twin_replays_draw(explorer, steps)


def test_twin_leaves_the_figures_of_draw_untouched():
    figures = []

    def draw(n):
        figures.append(_toy_draw(n))
        return figures[-1]

    explorer = Explorer(draw, [Slider("n", [1, 2])])
    explorer.static()
    assert all(json.dumps(plain(fig)) == json.dumps(plain(_toy_draw(n))) for n, fig in zip([1, 2], figures))


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


@pytest.mark.parametrize("live", ["0", "1"])
def test_show_displays_the_twin_or_the_live_app(monkeypatch, live):
    import ipywidgets

    shown = []
    monkeypatch.setenv(env.LIVE_WIDGETS_ENV, live)
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
