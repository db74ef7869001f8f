"""Explorers: one figure-drawing function, shown live with ipywidgets and kernel-free with plotly.

The pattern
-----------
An explorer is a function that draws a plotly figure from a few values, and the controls that
choose those values::

    def draw(position, n_dims):  # -> plotly.graph_objects.Figure
        ...

    explorer = Explorer(
        draw,
        [Slider("position", range(51), default=10), Slider("n_dims", [8, 16, 32], default=16)],
        twin="position",
    )

The same ``draw`` is used twice:

- :meth:`Explorer.live` is an **ipywidgets app**: one widget per control (a slider, or a dropdown
  for a :class:`Choice`); every change calls ``draw`` again, in the kernel, and shows the new
  figure. It needs a running kernel.
- :meth:`Explorer.static` is its **kernel-free twin**: ``draw`` is called once for every value of
  one control (``twin``; the other controls keep their defaults). The twin is the figure drawn at
  the default value, plus a plotly slider (a dropdown menu for a :class:`Choice`) whose step for
  each value is a plotly ``update``: the trace attributes that change between values (the ``y`` of
  some bars, the ``x`` of a marker line), set to what ``draw`` drew for that value, and the title.
  Only what changes is stored, so the twin stays small; a background that never changes is stored
  once. plotly.js alone runs it: on the book's site, in Colab's output, with no kernel. So ``draw``
  must draw the same traces, of the same kinds, for every value, and keep its layout apart from
  the title (fix the axis ranges; draw what moves as traces, not as layout shapes);
  :meth:`Explorer.static` checks this and says what changed.
- :meth:`Explorer.show` shows the live app when a person is running the notebook (see
  :func:`course_utils.env.interactive_frontend`) and the twin otherwise.

How it renders, where
---------------------
A displayed ipywidget leaves, in the saved notebook, a reference to widget state that the lesson
executor strips (its ids are random) and that the static site cannot run without fetching the
widget libraries: the page would show a broken placeholder ("Loading widget..."). So lessons call
``explorer.show()``. Run by a person (JupyterLab, Notebook, VS Code, Colab), it shows the live app;
run by the lesson executor, by ``jupyter-book`` or by ``nbval``, it shows the twin, a plain plotly
figure: that is what the committed notebook and the site hold. The two can be told apart because a
person's front end lets the kernel ask for keyboard input (``allow_stdin``) and the executors do not.

This module is the machinery only; the lessons' explorers live in :mod:`course_utils.figures`,
one module per lesson. Adding an explorer to a lesson: write a ``draw(**values)`` that returns a
figure, pick its controls, and expose a small factory in that lesson's module of
:mod:`course_utils.figures` (as :func:`course_utils.figures.positional_explorer` does); test that
the twin's steps reproduce ``draw`` (see ``tests/test_figures_positional.py``).
"""

from __future__ import annotations

import inspect
import json
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.utils import PlotlyJSONEncoder

from .env import enable_colab_widgets, interactive_frontend

__all__ = ["Choice", "Explorer", "Slider"]

SLIDER_ROOM_PX = 90  # extra height under the plot for the twin's slider and its label


# --------------------------------------------------------------------------------------------
# Controls


def _check_name(name: str) -> str:
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(f"expected a control name that is a Python identifier (an argument of draw), got {name!r}")
    return name


def _check_values(name: str, values: Sequence[Any]) -> tuple:
    if isinstance(values, (str, bytes)) or not isinstance(values, (Sequence, range, np.ndarray)):
        raise TypeError(f"expected the values of control {name!r} as a sequence, got {type(values).__name__}")
    values = tuple(v.item() if isinstance(v, np.generic) else v for v in values)
    if not values:
        raise ValueError(f"expected at least one value for control {name!r}, got none")
    if len(set(map(repr, values))) != len(values):
        raise ValueError(f"expected distinct values for control {name!r}, got {list(values)}")
    return values


def _check_default(name: str, values: tuple, default: Any) -> Any:
    if default is None:
        return values[0]
    if default not in values:
        raise ValueError(
            f"expected the default of control {name!r} to be one of its values {_show(values)}, got {default!r}"
        )
    return default


def _show(values: tuple) -> str:
    if len(values) > 6 and all(isinstance(v, int) for v in values):
        return f"{values[0]}, {values[1]}, ..., {values[-1]}"
    return ", ".join(map(repr, values))


@dataclass(frozen=True, init=False)
class Slider:
    """A control that slides through ``values`` (numbers, in order), for the argument ``name``.

    ``label`` is shown next to the slider (default: ``name`` with spaces); ``default`` is the value
    shown first (default: the first value). Live, evenly spaced integers get an ``IntSlider``, other
    values a ``SelectionSlider``; in the twin, a plotly slider.
    """

    name: str
    values: tuple
    default: Any
    label: str

    def __init__(self, name: str, values: Sequence[Any], *, default: Any = None, label: str | None = None):
        name = _check_name(name)
        values = _check_values(name, values)
        for value in values:
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise TypeError(f"expected numbers as the values of slider {name!r}, got {value!r}")
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "values", values)
        object.__setattr__(self, "default", _check_default(name, values, default))
        object.__setattr__(self, "label", label or name.replace("_", " "))

    def labels(self) -> list[str]:
        """The text of each value, as the twin's slider shows it."""
        return [str(value) for value in self.values]

    def widget(self):
        """A fresh ipywidgets slider for this control (``continuous_update=False``: redraw on release)."""
        import ipywidgets

        common = dict(description=self.label, continuous_update=False, style={"description_width": "initial"})
        v = self.values
        steps = {b - a for a, b in zip(v, v[1:])}
        if all(isinstance(x, int) for x in v) and len(steps) <= 1 and (not steps or steps.pop() > 0):
            step = v[1] - v[0] if len(v) > 1 else 1
            return ipywidgets.IntSlider(value=self.default, min=v[0], max=v[-1], step=step, **common)
        return ipywidgets.SelectionSlider(options=list(zip(self.labels(), v)), value=self.default, **common)


@dataclass(frozen=True, init=False)
class Choice:
    """A control that picks one of ``options`` for the argument ``name``: a dropdown.

    ``options`` is a sequence of values (shown with ``str``) or a mapping ``{text shown: value}``.
    """

    name: str
    values: tuple
    default: Any
    label: str
    texts: tuple

    def __init__(
        self, name: str, options: Sequence[Any] | Mapping[str, Any], *, default: Any = None, label: str | None = None
    ):
        name = _check_name(name)
        if isinstance(options, Mapping):
            texts, values = tuple(str(t) for t in options), _check_values(name, list(options.values()))
        else:
            values = _check_values(name, options)
            texts = tuple(str(v) for v in values)
        if len(set(texts)) != len(texts):
            raise ValueError(f"expected distinct texts for the options of {name!r}, got {list(texts)}")
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "values", values)
        object.__setattr__(self, "default", _check_default(name, values, default))
        object.__setattr__(self, "label", label or name.replace("_", " "))
        object.__setattr__(self, "texts", texts)

    def labels(self) -> list[str]:
        """The text of each option, as the dropdowns show it."""
        return list(self.texts)

    def widget(self):
        """A fresh ipywidgets dropdown for this control."""
        import ipywidgets

        return ipywidgets.Dropdown(
            options=list(zip(self.texts, self.values)),
            value=self.default,
            description=self.label,
            style={"description_width": "initial"},
        )


Control = Slider | Choice


# --------------------------------------------------------------------------------------------
# The explorer


def _json(plotly_object) -> str:
    return json.dumps(plotly_object.to_plotly_json(), cls=PlotlyJSONEncoder, sort_keys=True)


def _plain(plotly_object) -> dict:
    """A plotly object as plain JSON data (lists, not numpy arrays)."""
    return json.loads(_json(plotly_object))


def _flatten(tree: dict, prefix: str = "") -> dict[str, Any]:
    """``{"marker": {"color": "red"}, "y": [1]}`` -> ``{"marker.color": "red", "y": [1]}``: plotly's attribute paths."""
    flat = {}
    for key, value in tree.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            flat.update(_flatten(value, f"{path}."))
        else:
            flat[path] = value
    return flat


def _differs(flat: list[list[dict]], index: int, path: str) -> bool:
    """Whether attribute ``path`` of trace ``index`` takes more than one value over the steps."""
    return len({json.dumps(step[index].get(path), sort_keys=True) for step in flat}) > 1


def _title(fig: go.Figure) -> str:
    return fig.layout.title.text or ""


def _layout_without_title(fig: go.Figure) -> dict:
    layout = json.loads(_json(fig.layout))
    layout.get("title", {}).pop("text", None)
    return layout


def _first_difference(a: Any, b: Any, path: str = "layout") -> str | None:
    """The path of the first place where two JSON-like values differ (``layout.annotations[1].text``)."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b)):
            found = _first_difference(a.get(key), b.get(key), f"{path}.{key}")
            if found:
                return found
        return None
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for index, (x, y) in enumerate(zip(a, b)):
            found = _first_difference(x, y, f"{path}[{index}]")
            if found:
                return found
        return None
    return None if a == b else path


class Explorer:
    """A figure-drawing function ``draw(**values) -> go.Figure`` and the controls of its arguments.

    ``controls``: :class:`Slider` s and :class:`Choice` s, one per argument of ``draw`` that the
    reader can change (``draw`` may have more arguments, with defaults). ``twin`` names the control
    that the kernel-free twin moves (default: the first). See the module's docstring for the pattern.
    """

    def __init__(self, draw: Callable[..., go.Figure], controls: Sequence[Control], *, twin: str | None = None):
        if not callable(draw):
            raise TypeError(f"expected draw to be a function returning a plotly figure, got {type(draw).__name__}")
        controls = tuple(controls)
        if not controls:
            raise ValueError("expected at least one control (a Slider or a Choice), got none")
        for control in controls:
            if not isinstance(control, (Slider, Choice)):
                raise TypeError(f"expected Slider or Choice controls, got {type(control).__name__}")
        names = [c.name for c in controls]
        if len(set(names)) != len(names):
            raise ValueError(f"expected one control per argument, got the names {names}")
        parameters = inspect.signature(draw).parameters
        takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())
        missing = [n for n in names if n not in parameters and not takes_any]
        if missing:
            raise ValueError(f"expected every control to name an argument of draw {list(parameters)}, got {missing}")
        twin = names[0] if twin is None else twin
        if twin not in names:
            raise ValueError(f"expected twin to be the name of a control, one of {names}, got {twin!r}")
        self.draw, self.controls, self.twin = draw, controls, twin

    def control(self, name: str) -> Control:
        """The control of the argument ``name``."""
        for control in self.controls:
            if control.name == name:
                return control
        raise KeyError(f"no control named {name!r}; the controls are {[c.name for c in self.controls]}")

    def values(self, **values: Any) -> dict[str, Any]:
        """Every control's value: the defaults, updated with ``values`` (each checked)."""
        result = {c.name: c.default for c in self.controls}
        for name, value in values.items():
            if name not in result:
                raise ValueError(f"expected values for the controls {list(result)}, got {name!r}")
            allowed = self.control(name).values
            if value not in allowed:
                raise ValueError(f"expected {name} to be one of {_show(allowed)}, got {value!r}")
            result[name] = value
        return result

    def figure(self, **values: Any) -> go.Figure:
        """``draw`` at these values (the other controls at their defaults)."""
        fig = self.draw(**self.values(**values))
        if not isinstance(fig, go.Figure):
            raise TypeError(f"expected draw to return a plotly.graph_objects.Figure, got {type(fig).__name__}")
        return fig

    # ---------------------------------------------------------------------------- live

    def live(self):
        """The ipywidgets app: the controls' widgets above the figure, redrawn by ``draw`` on every change.

        Needs a running kernel (Jupyter, VS Code, Colab) to redraw. Returns an ``ipywidgets.VBox``.
        """
        import ipywidgets
        from IPython.display import display

        enable_colab_widgets()
        widgets = {c.name: c.widget() for c in self.controls}
        shown = ipywidgets.interactive_output(lambda **values: display(self.figure(**values)), widgets)
        return ipywidgets.VBox([ipywidgets.HBox(list(widgets.values())), shown])

    # ---------------------------------------------------------------------------- kernel-free twin

    def static(self) -> go.Figure:
        """The kernel-free twin: one figure whose plotly slider (or dropdown) replays ``draw``.

        The figure is ``draw`` at the defaults. Step ``j`` of the slider gives every trace the data
        that ``draw`` drew at the ``j``-th value of the ``twin`` control (every other control at its
        default), and the title: only what changes from one value to another is stored, as a plotly
        ``update`` of those traces. Raises ``ValueError`` when ``draw`` changes the number or the
        kind of its traces, or its layout beyond the title, with the value.
        """
        control = self.control(self.twin)
        figures = [self.figure(**{control.name: value}) for value in control.values]
        self._check_steps_can_be_replayed(control, figures)
        flat = [[_flatten(_plain(trace)) for trace in fig.data] for fig in figures]  # [step][trace] {path: value}
        changing = sorted(
            (index, path)
            for index in range(len(flat[0]))
            for path in set().union(*(step[index] for step in flat))
            if _differs(flat, index, path)
        )
        indices = sorted({index for index, _ in changing})
        paths = sorted({path for _, path in changing})
        steps = []
        for text, step_flat, fig in zip(control.labels(), flat, figures):
            # One list per path, one value per trace of `indices` (None: the trace has no such attribute).
            data_update = {path: [step_flat[index].get(path) for index in indices] for path in paths}
            steps.append(dict(label=text, method="update", args=[data_update, {"title.text": _title(fig)}, indices]))
        active = control.values.index(control.default)
        twin = go.Figure(figures[active])  # a copy: draw's figures stay untouched
        margin_b = twin.layout.margin.b if twin.layout.margin.b is not None else 80
        height = twin.layout.height or 450
        if isinstance(control, Slider):
            twin.update_layout(
                sliders=[
                    dict(active=active, steps=steps, currentvalue=dict(prefix=f"{control.label}: "), pad=dict(t=50))
                ],
                height=height + SLIDER_ROOM_PX,
                margin_b=margin_b + SLIDER_ROOM_PX,
            )
        else:
            twin.update_layout(
                updatemenus=[
                    # pad: clear of the plot's top edge (it touched lesson 05's first heatmap)
                    dict(type="dropdown", active=active, buttons=steps, x=1.0, xanchor="right", y=1.0, yanchor="bottom",
                         pad=dict(b=6))
                ]
            )
        return twin

    @staticmethod
    def _check_steps_can_be_replayed(control: Control, figures: list[go.Figure]) -> None:
        """The twin changes the data of a fixed set of traces and the title: nothing else may change."""
        first = figures[0]
        for value, fig in zip(control.values[1:], figures[1:]):
            at = f"{control.name}={value!r}"
            if len(fig.data) != len(first.data):
                raise ValueError(
                    f"draw draws {len(first.data)} traces at {control.name}={control.values[0]!r} and {len(fig.data)} "
                    f"at {at}: the twin changes the data of a fixed set of traces. Draw the same traces for every "
                    "value (a trace with empty x and y where there is nothing to show)."
                )
            for index, (a, b) in enumerate(zip(first.data, fig.data)):
                if a.type != b.type:
                    raise ValueError(f"trace {index} is a {a.type} at first and a {b.type} at {at}: keep its kind")
            where = _first_difference(_layout_without_title(first), _layout_without_title(fig))
            if where:
                raise ValueError(
                    f"the layout drawn by draw changes with {control.name} beyond the title ({where} differs at "
                    f"{at}): the twin can only change traces and titles. Fix the axis ranges and draw what moves "
                    "as traces, not as shapes or annotations."
                )

    def show(self) -> None:
        """Display the live app when a person runs the notebook (:func:`course_utils.env.interactive_frontend`),
        else the kernel-free twin."""
        from IPython.display import display

        display(self.live() if interactive_frontend() else self.static())
