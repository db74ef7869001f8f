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
  :func:`interactive_frontend`) and the twin otherwise.

How it renders, where
---------------------
A displayed ipywidget leaves, in the saved notebook, a reference to widget state that the lesson
executor strips (its ids are random) and that the static site cannot run without fetching the
widget libraries: the page would show a broken placeholder ("Loading widget..."). So lessons call
``explorer.show()``. Run by a person (JupyterLab, Notebook, VS Code, Colab), it shows the live app;
run by the lesson executor, by ``jupyter-book`` or by ``nbval``, it shows the twin, a plain plotly
figure: that is what the committed notebook and the site hold. The two can be told apart because a
person's front end lets the kernel ask for keyboard input (``allow_stdin``) and the executors do not.

Adding an explorer to a later lesson (a masking explorer, an attention explorer with dropdowns, a
temperature slider): write a ``draw(**values)`` that returns a figure, pick its controls, and
expose a small factory like :func:`positional_explorer`; test that the twin's steps reproduce
``draw`` (see ``tests/test_widgets.py``).
"""

from __future__ import annotations

import functools
import inspect
import json
import os
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots
from plotly.utils import PlotlyJSONEncoder

from . import plots

__all__ = [
    "LIVE_WIDGETS_ENV",
    "Choice",
    "Explorer",
    "Slider",
    "interactive_frontend",
    "positional_encoding_figure",
    "positional_explorer",
    "MASK_KINDS",
    "mask_of_kind",
    "masked_attention_figure",
    "masking_explorer",
    "entropy",
    "softened",
    "temperature_figure",
    "temperature_explorer",
    "qkv_token_figure",
    "qkv_explorer",
]

LIVE_WIDGETS_ENV = "COURSE_UTILS_LIVE_WIDGETS"  # "1": always the live app, "0": always the twin
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
# Where the notebook runs


def interactive_frontend() -> bool:
    """Whether a person is running this notebook in a front end that shows ipywidgets.

    True inside a Jupyter kernel whose current cell was sent by a front end that accepts keyboard
    input (JupyterLab, Notebook, VS Code, Colab send ``allow_stdin=True``); False in plain Python and
    when an executor runs the notebook (nbclient, hence the lesson executor and ``jupyter-book``,
    and ``nbval`` send ``allow_stdin=False``). The environment variable ``COURSE_UTILS_LIVE_WIDGETS``
    overrides it: ``1`` forces the live app, ``0`` the kernel-free twin.
    """
    override = os.environ.get(LIVE_WIDGETS_ENV, "").strip()
    if override:
        if override not in ("0", "1"):
            raise ValueError(f"expected {LIVE_WIDGETS_ENV} to be 0 or 1 (or unset), got {override!r}")
        return override == "1"
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython comes with ipywidgets
        return False
    kernel = getattr(get_ipython(), "kernel", None)  # None outside a Jupyter kernel
    return bool(getattr(kernel, "_allow_stdin", False))


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

        from .env import in_colab

        if in_colab():  # pragma: no cover - Colab needs its widget manager for ipywidgets 8
            from google.colab import output

            output.enable_custom_widget_manager()
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
                    dict(type="dropdown", active=active, buttons=steps, x=1.0, xanchor="right", y=1.0, yanchor="bottom")
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
        """Display the live app when a person runs the notebook (:func:`interactive_frontend`),
        else the kernel-free twin."""
        from IPython.display import display

        display(self.live() if interactive_frontend() else self.static())


# --------------------------------------------------------------------------------------------
# Lesson 03: the positional-encoding explorer


def positional_encoding_figure(position: int, n_dims: int, *, max_position: int = 50, d_model: int = 64) -> go.Figure:
    """The sinusoidal encoding of one position, in context (lesson 03's explorer).

    Top: the table of positions ``0 .. max_position`` (x axis) by dimensions ``0 .. n_dims-1``
    (y axis), with a line at ``position``. Bottom: the encoding vector of ``position``, one bar per
    dimension, sines (even dimensions) and cosines (odd dimensions) told apart by colour and hatching.
    ``d_model`` is the size of the encoding, of which the first ``n_dims`` dimensions are drawn.
    """
    from .positional import sinusoidal_encoding

    for name, value in (("max_position", max_position), ("d_model", d_model), ("n_dims", n_dims)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"expected {name} to be a positive integer, got {value!r}")
    if isinstance(position, bool) or not isinstance(position, (int, np.integer)) or not 0 <= position <= max_position:
        raise ValueError(f"expected position to be an integer in 0 .. max_position={max_position}, got {position!r}")
    if n_dims > d_model:
        raise ValueError(f"expected n_dims <= d_model={d_model}, got n_dims={n_dims}")
    table = sinusoidal_encoding(max_position + 1, d_model)[:, :n_dims]  # (positions, n_dims)
    dims = np.arange(n_dims)
    fig = make_subplots(
        rows=2,
        cols=1,
        row_heights=[0.55, 0.45],
        vertical_spacing=0.16,
        subplot_titles=(
            "the table: every position's encoding (black line: the chosen position)",
            "the chosen position's vector: sin at even dimensions (blue), cos at odd ones (hatched)",
        ),
    )
    fig.add_trace(
        go.Heatmap(
            z=plots.significant(table.T),
            x=np.arange(max_position + 1),
            y=dims,
            colorscale=plots.DIVERGING,
            zmin=-1,
            zmax=1,
            colorbar=dict(thickness=14, len=0.5, y=0.78),
            hovertemplate="position %{x}<br>dimension %{y}<br>value %{z:.3f}<extra></extra>",
        ),
        row=1,
        col=1,
    )
    fig.add_trace(
        go.Scatter(
            x=[position, position],
            y=[-0.5, n_dims - 0.5],
            mode="lines",
            line=dict(color="black", width=3),
            name=f"position {position}",
            showlegend=False,
            hoverinfo="name",
        ),
        row=1,
        col=1,
    )
    vector = plots.significant(table[position], digits=4)  # (n_dims,): 4 digits keep the twin small
    for parity, name, pattern in ((0, "sin (even dimensions)", ""), (1, "cos (odd dimensions)", "/")):
        fig.add_trace(
            go.Bar(
                x0=parity,
                dx=2,
                y=vector[parity::2],
                name=name,  # dimensions parity, parity + 2, ...
                showlegend=False,  # named in the subplot title: a legend would crowd the axis titles
                marker=dict(color=plots.color(parity), pattern_shape=pattern, line=dict(color="black", width=0.5)),
            ),
            row=2,
            col=1,
        )
    fig.update_xaxes(title_text="position", range=[-0.5, max_position + 0.5], row=1, col=1)
    fig.update_yaxes(title_text="dimension", range=[n_dims - 0.5, -0.5], row=1, col=1)
    fig.update_xaxes(title_text="dimension", range=[-0.5, n_dims - 0.5], row=2, col=1)
    fig.update_yaxes(title_text="value", range=[-1.1, 1.1], row=2, col=1)
    fig.update_layout(
        title=dict(
            text=f"Position {position}: its sinusoidal encoding (first {n_dims} of {d_model} dimensions)",
            x=0.02,
            xanchor="left",
        ),
        template=plots.TEMPLATE,
        height=640,
        margin=dict(l=70, r=30, t=80, b=60),
        font=dict(size=13),
        bargap=0.15,
    )
    return fig


def positional_explorer(
    *, max_position: int = 50, d_model: int = 64, position: int | None = None, n_dims: int | None = None
) -> Explorer:
    """The explorer of lesson 03: a slider for the position and one for the number of dimensions shown.

    Draws :func:`positional_encoding_figure`; the kernel-free twin slides over the position, with
    ``n_dims`` dimensions shown. Shown first: ``position`` (default 10, or ``max_position`` if smaller)
    and ``n_dims`` dimensions (default 32, or all of a smaller ``d_model``).
    """
    draw = functools.partial(positional_encoding_figure, max_position=max_position, d_model=d_model)
    dims = sorted({d for d in (4, 8, 16, 32, 64, 128) if d <= d_model} | {d_model})
    n_dims = min(32, d_model) if n_dims is None else n_dims
    position = min(10, max_position) if position is None else position
    return Explorer(
        draw,
        [
            Slider("position", range(max_position + 1), default=position),
            Slider("n_dims", dims, default=n_dims, label="dimensions shown"),
        ],
        twin="position",
    )


# --------------------------------------------------------------------------------------------
# Lesson 05: masked attention scores and weights, and the masking explorer

MASK_KINDS = ("none", "padding", "causal", "padding & causal")
_PANELS = ("scores", "masked scores", "weights")


def mask_of_kind(kind: str, attention_mask) -> np.ndarray:
    """The ``(T, T)`` boolean mask (``True`` = may attend) of one sentence for a kind of :data:`MASK_KINDS`.

    ``attention_mask (T,)`` is the sentence's row of Hugging Face's attention mask (1 = real token,
    0 = padding). ``"none"``: everything allowed; ``"padding"``: no query may attend to padding keys
    (:func:`course_utils.masking.padding_mask`); ``"causal"``: no query may attend to a later key
    (:func:`course_utils.masking.causal_mask`); ``"padding & causal"``: both.
    """
    from . import masking

    if kind not in MASK_KINDS:
        raise ValueError(f"expected a mask kind among {MASK_KINDS}, got {kind!r}")
    row = np.asarray(attention_mask)
    if row.ndim != 1 or row.size == 0:
        raise ValueError(f"expected one sentence's attention_mask of shape (T,), got shape {row.shape}")
    allowed = np.ones((row.size, row.size), dtype=bool)
    if "padding" in kind:
        allowed &= masking.padding_mask(row[None, :])[0, 0]  # (1, T): the same keys blocked for every query
    if "causal" in kind:
        allowed &= masking.causal_mask(row.size)
    return allowed


def masked_attention_figure(
    scores,
    mask,
    tokens: Sequence[str],
    *,
    title: str,
    panels: Sequence[str] = _PANELS,
    side_by_side: bool = True,
    decimals: int = 2,
    blocked_text: str = "blocked",
) -> go.Figure:
    """Attention scores before and after masking, and the weights, as heatmaps (lesson 05).

    ``scores (T, T)``: query ``i`` (row, ``tokens[i]``) against key ``j`` (column); ``mask``
    boolean, broadcastable to ``(T, T)``, ``True`` = may attend. ``panels``, in the order given, any of:
    ``"scores"`` (the raw scores), ``"masked scores"`` (blocked cells drawn grey with
    ``blocked_text``, not as huge negative numbers), ``"weights"`` (the softmax of the masked scores,
    blocked scores set to the dtype's minimum as :func:`course_utils.attention.scaled_dot_product_attention`
    does, on a fixed 0..1 colour scale). Panels side by side, or one above the other.
    Values are rounded to ``decimals`` decimals (what the cells show), which keeps an explorer's twin small.
    """
    from .attention import softmax

    scores = np.asarray(scores, dtype=float)
    if scores.ndim != 2 or scores.shape[0] != scores.shape[1] or scores.shape[0] != len(tokens):
        raise ValueError(f"expected scores of shape (T, T) with T = len(tokens) = {len(tokens)}, got {scores.shape}")
    mask = np.asarray(mask)
    if mask.dtype != np.bool_:
        raise TypeError(f"expected a boolean mask (True = may attend), got dtype {mask.dtype}")
    try:
        allowed = np.broadcast_to(mask, scores.shape)
    except ValueError:
        raise ValueError(f"expected a mask broadcastable to the scores {scores.shape}, got {mask.shape}") from None
    panels = tuple(panels)
    if not panels or len(set(panels)) != len(panels) or not set(panels) <= set(_PANELS):
        raise ValueError(f"expected distinct panels among {_PANELS}, got {panels}")
    _require_title(title)
    weights = softmax(np.where(allowed, scores, np.finfo(scores.dtype).min), axis=-1)  # (T, T)
    drawn = {
        "scores": dict(values=scores, blocked=None, zmin=None, zmax=None),
        "masked scores": dict(values=np.where(allowed, scores, 0.0), blocked=~allowed, zmin=None, zmax=None),
        "weights": dict(values=weights, blocked=None, zmin=0.0, zmax=1.0),
    }
    n = len(panels)
    rows, cols = (1, n) if side_by_side else (n, 1)
    fig = make_subplots(
        rows=rows,
        cols=cols,
        subplot_titles=[f"{p} (grey: {blocked_text})" if p == "masked scores" else p for p in panels],
        horizontal_spacing=0.12 if side_by_side else 0.0,
        vertical_spacing=0.0 if side_by_side else 0.12,
    )
    for k, panel in enumerate(panels):
        spec = drawn[panel]
        row, col = (1, k + 1) if side_by_side else (k + 1, 1)
        axis = "" if k == 0 else str(k + 1)
        domain_x, domain_y = fig.layout[f"xaxis{axis}"].domain, fig.layout[f"yaxis{axis}"].domain
        fig.layout.annotations[k].update(x=domain_x[0], xanchor="left")  # the panel's title, left-aligned
        colorbar = (
            dict(thickness=12, x=domain_x[1] + 0.01, len=0.9, y=0.5)
            if side_by_side
            else dict(thickness=12, x=1.01, len=domain_y[1] - domain_y[0], y=(domain_y[0] + domain_y[1]) / 2)
        )
        panel_fig = plots.heatmap(
            np.round(spec["values"], decimals),
            tokens,
            tokens,
            title=panel,
            x_title="key",
            y_title="query",
            decimals=decimals,
            zmin=spec["zmin"],
            zmax=spec["zmax"],
            blocked=spec["blocked"],
            blocked_text=blocked_text,
        )
        for trace in panel_fig.data:
            if trace.showscale is not False:
                trace.update(colorbar=colorbar)
            fig.add_trace(trace, row=row, col=col)
        fig.update_xaxes(type="category", row=row, col=col)
        fig.update_yaxes(type="category", autorange="reversed", row=row, col=col)
        if side_by_side or k == n - 1:
            fig.update_xaxes(title_text="key (attended to)", row=row, col=col)
        if not side_by_side or k == 0:
            fig.update_yaxes(title_text="query (attending)", row=row, col=col)
    cell = 44 if side_by_side else 36
    panel_height = max(260, cell * len(tokens))
    fig.update_layout(
        title=dict(text=title, x=0.02, xanchor="left"),
        template=plots.TEMPLATE,
        height=110 + panel_height * rows + (60 * (rows - 1)),
        margin=dict(l=90, r=40, t=100, b=70),
        font=dict(size=13),
    )
    return fig


def _require_title(title: str) -> None:
    if not isinstance(title, str) or not title.strip():
        raise ValueError(f"expected a non-empty string for title, got {title!r}")


def masking_explorer(
    tokens: Sequence[Sequence[str]], scores, attention_mask, *, default: tuple[int, str] = (0, "padding")
) -> Explorer:
    """The explorer of lesson 05: pick a sentence of a padded batch and a kind of mask.

    ``tokens``: ``B`` lists of ``T`` token strings (padding included); ``scores (B, T, T)``: each
    sentence's attention scores; ``attention_mask (B, T)``: 1 = real token, 0 = padding. One dropdown
    offers every pair (sentence, kind of :data:`MASK_KINDS`), so that the kernel-free twin, which
    replays one control, offers them all too. Draws the masked scores above the weights
    (:func:`masked_attention_figure`) for :func:`mask_of_kind`.
    """
    scores = np.asarray(scores, dtype=float)
    attention_mask = np.asarray(attention_mask)
    if attention_mask.ndim != 2:
        raise ValueError(f"expected attention_mask of shape (B, T), got {attention_mask.shape}")
    batch, seq_len = attention_mask.shape
    if scores.shape != (batch, seq_len, seq_len):
        raise ValueError(f"expected scores of shape (B, T, T) = {(batch, seq_len, seq_len)}, got {scores.shape}")
    if len(tokens) != batch or any(len(row) != seq_len for row in tokens):
        raise ValueError(f"expected B={batch} lists of T={seq_len} tokens, got lengths {[len(r) for r in tokens]}")

    def draw(view: tuple[int, str]) -> go.Figure:
        b, kind = view
        mask = mask_of_kind(kind, attention_mask[b])
        blocked = int((~mask).sum())
        return masked_attention_figure(
            scores[b],
            mask,
            tokens[b],
            title=f"Sentence {b + 1}, mask: {kind} ({blocked} of {mask.size} scores blocked)",
            panels=("masked scores", "weights"),
            side_by_side=False,
        )

    options = {f"sentence {b + 1} · {kind}": (b, kind) for b in range(batch) for kind in MASK_KINDS}
    return Explorer(draw, [Choice("view", options, default=tuple(default), label="sentence · mask")])


# --------------------------------------------------------------------------------------------
# Lesson 07: a distribution softened by a temperature, and the temperature explorer


def _check_logits_row(logits, labels: Sequence[str]) -> np.ndarray:
    row = np.asarray(logits, dtype=float)
    if row.ndim != 1 or row.size < 2:
        raise ValueError(f"expected the logits of one position, shape (V,) with V >= 2, got shape {row.shape}")
    if not np.all(np.isfinite(row)):
        raise ValueError("expected finite logits (no inf or nan)")
    if isinstance(labels, str) or len(labels) != row.size:
        raise ValueError(f"expected one label per logit: {row.size} logits, got {len(labels)} labels")
    return row


def _check_positive(name: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) or not value > 0:
        raise ValueError(f"expected {name} > 0 (a number), got {value!r}")
    if not np.isfinite(value):
        raise ValueError(f"expected a finite {name}, got {value!r}")
    return float(value)


def softened(logits, temperature: float) -> np.ndarray:
    """``softmax(logits / T)`` of one position: ``(V,)`` logits -> ``(V,)`` probabilities (computed stably)."""
    from .attention import softmax

    row = np.asarray(logits, dtype=float)
    return softmax(row / _check_positive("temperature", temperature), axis=-1)


def entropy(probabilities) -> float:
    """``-Σ p ln p`` in nats of a distribution ``(V,)`` (terms with ``p = 0`` count 0); at most ``ln V``."""
    p = np.asarray(probabilities, dtype=float)
    positive = p[p > 0]
    return float(-(positive * np.log(positive)).sum())


def temperature_figure(logits, labels: Sequence[str], temperature: float, *, top_k: int = 12) -> go.Figure:
    """One position's predicted distribution, softened by a temperature (lesson 07's explorer).

    ``logits (V,)``: a model's logits at one position; ``labels (V,)``: the token of each logit.
    Bars: ``softmax(logits / T)`` for the ``top_k`` tokens of highest logit (the same tokens, in the
    same order, at every ``T``: a temperature never changes the ranking), then one bar for the
    probability of all the other ``V - top_k`` tokens together (the bar "``V - top_k`` others"). Hollow markers: the same at
    ``T = 1``, for reference. The title gives the top token's probability and the entropy, in nats
    and as a share of its maximum ``ln V`` (the uniform distribution). The y axis is fixed to
    ``[0, 1]``, so the bars move and the axes do not.
    """
    row = _check_logits_row(logits, labels)
    temperature = _check_positive("temperature", temperature)
    if isinstance(top_k, bool) or not isinstance(top_k, (int, np.integer)) or not 1 <= top_k < row.size:
        raise ValueError(f"expected top_k to be an integer in 1 .. V-1 = {row.size - 1}, got {top_k!r}")
    order = np.argsort(-row, kind="stable")[:top_k]  # the top_k tokens, highest logit first
    names = plots._unique_labels([str(labels[i]) for i in order]) + [f"{row.size - top_k} others"]

    def bars(p: np.ndarray) -> np.ndarray:  # (V,) -> (top_k + 1,): the top tokens, then the rest
        return plots.significant(np.append(p[order], max(0.0, 1.0 - p[order].sum())), digits=4)

    probabilities, reference = softened(row, temperature), softened(row, 1.0)
    fig = go.Figure(
        [
            go.Bar(
                x=names,
                y=bars(probabilities),
                name=f"probability at T = {temperature:g}",
                marker=dict(color=plots.color(0), line=dict(color="black", width=0.5)),
                hovertemplate="%{x}<br>probability %{y:.4f}<extra></extra>",
            ),
            go.Scatter(
                x=names,
                y=bars(reference),
                name="at T = 1 (the model's own probabilities)",
                mode="markers",
                marker=dict(symbol="diamond-open", size=11, color=plots.color(1), line=dict(width=2)),
                hovertemplate="%{x}<br>at T = 1: %{y:.4f}<extra></extra>",
            ),
        ]
    )
    h, h_max = entropy(probabilities), np.log(row.size)
    title = (
        f"T = {temperature:g}: top token {probabilities[order[0]]:.2f}, "
        f"entropy {h:.2f} nats ({h / h_max:.0%} of the maximum ln {row.size} = {h_max:.2f})"
    )
    fig.update_layout(
        title=dict(text=title, x=0.02, xanchor="left"),
        template=plots.TEMPLATE,
        height=460,
        margin=dict(l=70, r=30, t=90, b=110),
        font=dict(size=13),
        bargap=0.2,
        legend=dict(orientation="h", yanchor="bottom", y=1.0, xanchor="right", x=1.0),
    )
    fig.update_xaxes(title_text="token (highest logit first)", type="category", tickangle=-35)
    fig.update_yaxes(title_text="probability", range=[0, 1.02])
    return fig


def temperature_explorer(
    logits,
    labels: Sequence[str],
    *,
    temperatures: Sequence[float] = (0.5, 1.0, 2.0, 3.0, 4.0, 6.0, 10.0),
    default: float = 1.0,
    top_k: int = 12,
) -> Explorer:
    """The explorer of lesson 07: a slider for the temperature ``T`` of :func:`temperature_figure`.

    ``logits (V,)`` and ``labels (V,)`` as there; ``temperatures``, increasing, the slider's values
    (the kernel-free twin offers the same), shown first at ``default``.
    """
    row = _check_logits_row(logits, labels)
    values = [_check_positive("temperature", t) for t in temperatures]
    if any(b <= a for a, b in zip(values, values[1:])):
        raise ValueError(f"expected increasing temperatures, got {list(temperatures)}")
    draw = functools.partial(temperature_figure, row, list(labels), top_k=top_k)
    return Explorer(draw, [Slider("temperature", values, default=float(default), label="temperature T")])


# --------------------------------------------------------------------------------------------
# Lesson 04: queries, keys and values for one token, and its explorer


def _check_qkv(queries, keys, values, tokens: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    q, k, v = (np.asarray(a, dtype=float) for a in (queries, keys, values))
    if q.ndim != 2 or k.ndim != 2 or v.ndim != 2:
        raise ValueError(f"expected queries (T, d_k), keys (T, d_k), values (T, d_v), got {q.shape}, {k.shape}, {v.shape}")
    if not (q.shape[0] == k.shape[0] == v.shape[0] == len(tokens)) or q.shape[1] != k.shape[1]:
        raise ValueError(
            f"expected queries (T, d_k), keys (T, d_k), values (T, d_v) and T tokens, got {q.shape}, {k.shape}, "
            f"{v.shape} and {len(tokens)} tokens"
        )
    return q, k, v


def _qkv_of(q: np.ndarray, k: np.ndarray, v: np.ndarray, query: int):
    """One query's scaled scores ``(T,)``, weights ``(T,)`` and weighted values ``(T, d_v)``."""
    scores = k @ q[query] / np.sqrt(q.shape[1])  # (T,)
    weights = np.exp(scores - scores.max())
    weights /= weights.sum()  # (T,), sums to 1
    return scores, weights, weights[:, None] * v  # (T, d_v): row j = w_j v_j


def qkv_token_figure(queries, keys, values, tokens: Sequence[str], query: int) -> go.Figure:
    """Scaled dot-product attention for one query token, step by step (lesson 04's explorer).

    ``queries (T, d_k)``, ``keys (T, d_k)``, ``values (T, d_v)``, ``tokens (T,)``; ``query`` the
    index of the token that attends. Three panels: its scaled scores ``q . k_j / sqrt(d_k)`` for
    every key ``j``; its weights, their softmax; and its output, ``sum_j w_j v_j``, one bar per
    output number, each stacked from the ``T`` weighted values ``w_j v_j`` (one colour and hatch
    per key token, negative parts stacked below zero), with a diamond at the sum. The axis ranges
    cover every query, so that they stay put while the query changes.
    """
    tokens = plots._unique_labels([str(t) for t in tokens])
    q, k, v = _check_qkv(queries, keys, values, tokens)
    if isinstance(query, bool) or not isinstance(query, (int, np.integer)) or not 0 <= query < len(tokens):
        raise ValueError(f"expected query to be a token index in 0 .. {len(tokens) - 1}, got {query!r}")
    every = [_qkv_of(q, k, v, i) for i in range(len(tokens))]
    scores, weights, weighted = every[query]
    dims = [f"out[{j}]" for j in range(v.shape[1])]
    fig = make_subplots(
        rows=3, cols=1, vertical_spacing=0.13
    )  # fmt: skip, stacked: readable at phone width too
    fig.add_trace(
        go.Bar(x=tokens, y=plots.significant(scores), name="score", showlegend=False,
               marker=dict(color="#777777", line=dict(color="black", width=0.5)),
               hovertemplate="key %{x}<br>score %{y:.3f}<extra></extra>"),
        row=1, col=1,
    )  # fmt: skip
    fig.add_trace(
        go.Bar(x=tokens, y=plots.significant(weights), name="weight", showlegend=False,
               marker=dict(color="#777777", line=dict(color="black", width=0.5)),
               hovertemplate="key %{x}<br>weight %{y:.3f}<extra></extra>"),
        row=2, col=1,
    )  # fmt: skip
    hatches = ["", "/", ".", "x", "-", "|", "+", "\\"]
    for j, token in enumerate(tokens):
        fig.add_trace(
            go.Bar(x=dims, y=plots.significant(weighted[j]), name=f"weight × value of {token}",
                   marker=dict(color=plots.color(j), pattern_shape=hatches[j % len(hatches)],
                               line=dict(color="black", width=0.5)),
                   hovertemplate=f"{token}: " + "%{y:.3f}<extra></extra>"),
            row=3, col=1,
        )  # fmt: skip
    fig.add_trace(
        go.Scatter(x=dims, y=plots.significant(weighted.sum(axis=0)), name="output (the sum)",
                   mode="markers", marker=dict(symbol="diamond", size=12, color="black"),
                   hovertemplate="%{x} = %{y:.3f}<extra></extra>"),
        row=3, col=1,
    )  # fmt: skip
    all_scores = np.array([s for s, _, _ in every])
    low = min(0.0, float(all_scores.min()))
    high = max(0.0, float(all_scores.max()))
    pad = 0.05 * (high - low or 1.0)
    stacked = np.array([[np.where(w > 0, w, 0).sum(0), np.where(w < 0, w, 0).sum(0)] for _, _, w in every])
    top, bottom = max(0.0, float(stacked[:, 0].max())), min(0.0, float(stacked[:, 1].min()))
    margin = 0.05 * (top - bottom or 1.0)
    fig.update_yaxes(range=[low - pad, high + pad], title_text="score", row=1, col=1)
    fig.update_yaxes(range=[0, 1.02], title_text="weight", row=2, col=1)
    fig.update_yaxes(range=[bottom - margin, top + margin], title_text="value", row=3, col=1)
    fig.update_xaxes(type="category", title_text="1. scores q·k / √d_k, one per key token", row=1, col=1)
    fig.update_xaxes(type="category", title_text="2. weights: the softmax of the scores", row=2, col=1)
    fig.update_xaxes(type="category", title_text="3. output: Σ weight × value, number by number", row=3, col=1)
    best = int(np.argmax(weights))
    title = f"Query {tokens[query]}:<br>largest weight {weights[best]:.2f}, on {tokens[best]}"
    fig.update_layout(
        title=dict(text=title, x=0.02, xanchor="left", y=0.975, yanchor="top"),
        template=plots.TEMPLATE,
        barmode="relative",
        height=940,
        margin=dict(l=60, r=30, t=140, b=150),  # the title, then the twin's menu below it
        font=dict(size=13),
        legend=dict(orientation="h", yanchor="top", y=-0.07, xanchor="left", x=0.0),
    )
    return fig


def qkv_explorer(queries, keys, values, tokens: Sequence[str], *, default: int = 0) -> Explorer:
    """The explorer of lesson 04: pick the query token of :func:`qkv_token_figure` in a dropdown.

    Shapes as there; ``default`` the index of the token shown first.
    """
    tokens = [str(t) for t in tokens]
    q, k, v = _check_qkv(queries, keys, values, tokens)
    draw = functools.partial(qkv_token_figure, q, k, v, tokens)
    options = {f"{i}: {token}": i for i, token in enumerate(tokens)}
    return Explorer(draw, [Choice("query", options, default=default, label="query token")])
