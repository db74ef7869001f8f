"""Lesson 06's attention explorer: every head's attention map, for examples or a typed sentence.

:func:`heads_figure` draws every head of one layer, :func:`head_figure` one head.
:class:`AttentionExplorer` is a live ipywidgets app (choose an example or type a sentence, choose
a layer and a head, see the heatmap and the head's strongest behaviour, from
:mod:`course_utils.figures.pattern_finder`) and its kernel-free twin
(:meth:`AttentionExplorer.static`), a plotly figure with a dropdown for the example sentences and
a slider for the layer that shows every head of that layer, from weights computed in advance.

Why not :class:`course_utils.widgets.Explorer`? Its twin replays one control. This twin needs two
that combine, sentence and layer; plotly can combine them when they change different things. The
twin holds one heatmap per (layer, head): the sentence dropdown rewrites the data of all of them
(``update``), the layer slider only changes which are visible (``restyle`` of ``visible``). So
every pair (sentence, layer) works, with no kernel and no JavaScript of our own.

Axes: ``L`` layers, ``H`` heads, ``T`` tokens (queries along the rows, keys along the columns).
"""

from __future__ import annotations

import html
import math
from typing import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .. import plots
from ..env import enable_colab_widgets, interactive_frontend
from .pattern_finder import (
    PreparedText,
    attention_maps,
    head_behaviours,
    max_positions,
    prepare_text,
    strongest_behaviour,
    uniform_behaviours,
)

__all__ = ["AttentionExplorer", "head_figure", "heads_figure"]

MENU_SHIFT_PX = 34  # room between the panels' titles and the twin's dropdown
MENU_LABEL_PX = 76  # the dropdown's label ("sentence:") and a gap, left of the dropdown
SLIDER_PX = 84  # the layer slider, between the dropdown and the panels: both controls at the top, where a
# phone's reader starts (below the panels, stacked on a phone, the slider was three screens down)


def _check_text(name: str, value: str) -> None:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"expected a non-empty string for {name}, got {value!r}")


def _grid(n_heads: int) -> tuple[int, int]:
    cols = 1 if n_heads == 1 else 2
    return math.ceil(n_heads / cols), cols


def _heads_subplots(n_heads: int) -> tuple[go.Figure, int]:
    """One panel per head, titled "head 1", "head 2", ..., two columns; the figure and its columns."""
    rows, cols = _grid(n_heads)
    fig = make_subplots(
        rows=rows, cols=cols, subplot_titles=[f"head {h + 1}" for h in range(n_heads)],
        horizontal_spacing=0.14, vertical_spacing=0.16,
    )
    return fig, cols


def _heatmap_trace(weights: np.ndarray, tokens: Sequence[str], visible: bool = True) -> go.Heatmap:
    labels = plots.unique_labels(tokens)  # repeated tokens ("the ... the") need distinct categories
    return go.Heatmap(
        z=plots.significant(np.round(weights, 3), digits=3),
        x=labels,
        y=labels,
        coloraxis="coloraxis",
        visible=visible,
        hovertemplate="query %{y} → key %{x}<br>weight %{z:.3f}<extra></extra>",
    )


READING_HINT = "rows: the token attending (query) · columns: the token attended to (key)"


def _with_reading_hint(title: str) -> str:
    return f"{title}<br><sup>{READING_HINT}</sup>"


def _heads_layout(fig: go.Figure, n_heads: int, n_tokens: int, title: str) -> None:
    rows, _ = _grid(n_heads)
    fig.update_xaxes(type="category", tickangle=-60, tickfont=dict(size=10))
    fig.update_yaxes(type="category", autorange="reversed", tickfont=dict(size=10))
    for k in range(n_heads):
        fig.layout.annotations[k].update(font=dict(size=13))
    panel = max(300, min(420, 22 * n_tokens + 110))
    fig.update_layout(
        title=dict(  # pinned to the top: the twin's dropdown sits below it
            text=_with_reading_hint(title), x=0.02, xanchor="left", y=1.0, yref="container", yanchor="top", pad_t=14
        ),
        template=plots.TEMPLATE,
        height=170 + rows * panel,
        margin=dict(l=90, r=40, t=150, b=70),  # t: the two-line title, then the twin's dropdown below it
        font=dict(size=12),
        coloraxis=dict(
            colorscale=plots.SEQUENTIAL, cmin=0, cmax=1, colorbar=dict(title=dict(text="weight"), thickness=12)
        ),
    )


def heads_figure(weights, tokens: Sequence[str], *, title: str) -> go.Figure:
    """Every head of one layer: ``weights (H, T, T)``, one heatmap per head (two per row).

    Rows are the queries (the token attending), columns the keys (the token attended to), on one
    colour scale from 0 to 1.
    """
    weights = np.asarray(weights, dtype=float)
    if weights.ndim != 3 or weights.shape[1:] != (len(tokens), len(tokens)):
        raise ValueError(
            f"expected weights of shape (H, T, T) with T = len(tokens) = {len(tokens)}, got {weights.shape}"
        )
    _check_text("title", title)
    n_heads = weights.shape[0]
    fig, cols = _heads_subplots(n_heads)
    for h in range(n_heads):
        fig.add_trace(_heatmap_trace(weights[h], tokens), row=h // cols + 1, col=h % cols + 1)
    _heads_layout(fig, n_heads, len(tokens), title)
    return fig


def head_figure(weights, tokens: Sequence[str], *, title: str) -> go.Figure:
    """One head's map ``(T, T)`` as a heatmap (queries down, keys across, weights 0 to 1)."""
    return plots.heatmap(
        np.round(np.asarray(weights, dtype=float), 3),
        tokens,
        tokens,
        title=title,
        x_title="key (attended to)",
        y_title="query (attending)",
        annotate=len(tokens) <= 12,
        zmin=0,
        zmax=1,
        height=max(420, 34 * len(tokens) + 160),
    )


class AttentionExplorer:
    """Explore the attention maps of ``model`` (see the module docstring).

    ``model``: a :class:`course_utils.encoder.DistilBertEncoder` or an eager Hugging Face encoder;
    ``tokenizer``: its tokenizer; ``examples``: ``{name shown: sentence}``, the sentences offered
    (and precomputed for the twin); ``model_name``: how titles call the model.
    """

    def __init__(self, model, tokenizer, examples: Mapping[str, str], *, model_name: str):
        if not examples:
            raise ValueError("expected at least one example sentence, got none")
        _check_text("model_name", model_name)
        self.model, self.tokenizer, self.model_name = model, tokenizer, model_name
        self.max_length = max_positions(model)
        self.examples = {str(name): text for name, text in examples.items()}
        self._cache: dict[str, tuple[PreparedText, np.ndarray]] = {}

    def analyse(self, text: str) -> tuple[PreparedText, np.ndarray]:
        """The prepared text and its maps ``(L, H, T, T)`` (``ValueError`` for an empty text); cached."""
        if text not in self._cache:
            prepared = prepare_text(text, self.tokenizer, self.max_length)
            self._cache[text] = (prepared, attention_maps(self.model, prepared.input_ids))
        return self._cache[text]

    # ---------------------------------------------------------------------------- one head

    def head_view(self, text: str, layer: int, head: int) -> tuple[go.Figure, str]:
        """The heatmap of one head (1-based ``layer``, ``head``) for ``text``, and the head's verdict."""
        prepared, weights = self.analyse(text)
        n_layers, n_heads = weights.shape[:2]
        if not (1 <= layer <= n_layers and 1 <= head <= n_heads):
            raise ValueError(f"expected layer in 1..{n_layers} and head in 1..{n_heads}, got {layer}, {head}")
        scores = head_behaviours(weights, prepared.tokens)
        behaviour, reason = strongest_behaviour(scores, uniform_behaviours(prepared.tokens), layer, head)
        title = f"{self.model_name}, layer {layer}, head {head}: {behaviour}"
        verdict = f"Layer {layer}, head {head} in this sentence: {reason}."
        return head_figure(weights[layer - 1, head - 1], prepared.tokens, title=title), verdict

    # ---------------------------------------------------------------------------- live

    def live(self):
        """The ipywidgets app: example or typed sentence, layer and head dropdowns, heatmap and verdict."""
        import ipywidgets
        from IPython.display import display

        enable_colab_widgets()
        first_text = next(iter(self.examples.values()))
        _, weights = self.analyse(first_text)
        n_layers, n_heads = weights.shape[:2]
        style = {"description_width": "initial"}
        example = ipywidgets.Dropdown(options=list(self.examples.items()), description="example", style=style)
        text = ipywidgets.Text(value=first_text, description="or type a sentence", style=style, continuous_update=False)
        text.layout.width = "60%"
        layer = ipywidgets.Dropdown(options=list(range(1, n_layers + 1)), description="layer", style=style)
        head = ipywidgets.Dropdown(options=list(range(1, n_heads + 1)), description="head", style=style)
        message = ipywidgets.HTML()  # the verdict, the notices, or what is wrong with the text
        shown = ipywidgets.Output()  # the heatmap

        def redraw(*_):
            lines = []
            try:
                fig, verdict = self.head_view(text.value, layer.value, head.value)
            except ValueError as error:
                fig, lines = None, [f"Cannot explore this text: {error}"]
            else:
                lines = [f"Note: {notice}" for notice in self.analyse(text.value)[0].notices] + [verdict]
            message.value = "<br>".join(html.escape(line) for line in lines)
            with shown:
                shown.clear_output(wait=True)
                if fig is not None:
                    display(fig)

        example.observe(lambda change: setattr(text, "value", change["new"]), names="value")
        for widget in (text, layer, head):
            widget.observe(redraw, names="value")
        redraw()
        return ipywidgets.VBox([ipywidgets.HBox([example, layer, head]), text, message, shown])

    # ---------------------------------------------------------------------------- kernel-free twin

    def static(self, *, layer: int = 1) -> go.Figure:
        """The kernel-free twin: every head of a layer, a dropdown for the example, a slider for the layer.

        One heatmap trace per (layer, head), in layer-major order; only those of the chosen layer are
        visible. The dropdown's buttons (plotly ``update``) set ``z``, ``x`` and ``y`` of every trace
        to that example's maps, and the title; the slider's steps (plotly ``restyle``) set only
        ``visible``. Starts at the first example and ``layer`` (1-based).
        """
        analysed = {name: self.analyse(text) for name, text in self.examples.items()}
        first_prepared, first_weights = next(iter(analysed.values()))
        n_layers, n_heads = first_weights.shape[:2]
        if not 1 <= layer <= n_layers:
            raise ValueError(f"expected layer in 1..{n_layers}, got {layer!r}")
        fig, cols = _heads_subplots(n_heads)
        for i in range(n_layers):
            for h in range(n_heads):
                trace = _heatmap_trace(first_weights[i, h], first_prepared.tokens, visible=i == layer - 1)
                fig.add_trace(trace, row=h // cols + 1, col=h % cols + 1)
        longest = max(len(p.tokens) for p, _ in analysed.values())
        _heads_layout(fig, n_heads, longest, self._title(next(iter(analysed))))
        buttons = []
        for name, (prepared, weights) in analysed.items():
            traces = [_heatmap_trace(weights[i, h], prepared.tokens) for i in range(n_layers) for h in range(n_heads)]
            # Plain lists: plotly.js decodes the typed arrays of a figure's data, not those of a button's update.
            data = {key: [np.asarray(getattr(t, key)).tolist() for t in traces] for key in ("z", "x", "y")}
            title = _with_reading_hint(self._title(name))
            buttons.append(dict(label=name, method="update", args=[data, {"title.text": title}]))
        steps = [
            dict(
                label=str(i + 1),
                method="restyle",
                args=[{"visible": [k // n_heads == i for k in range(n_layers * n_heads)]}],
            )
            for i in range(n_layers)
        ]
        fig.add_annotation(  # the dropdown's label, in the band between the title and the panels
            text="sentence:",
            x=0.0,
            y=1.0,
            xref="paper",
            yref="paper",
            xanchor="left",
            yanchor="bottom",
            yshift=MENU_SHIFT_PX + SLIDER_PX + 6,
            showarrow=False,
            font=dict(size=13),
        )
        fig.update_layout(
            updatemenus=[
                dict(
                    type="dropdown",
                    active=0,
                    buttons=buttons,
                    x=0.0,
                    xanchor="left",
                    y=1.0,
                    yanchor="bottom",
                    pad=dict(b=MENU_SHIFT_PX + SLIDER_PX, l=MENU_LABEL_PX),  # right of its label, at any width
                )
            ],
            sliders=[dict(  # under the dropdown, above the panels' titles
                active=layer - 1, steps=steps, currentvalue=dict(prefix="layer: "), x=0.0, len=1.0, y=1.0,
                yanchor="bottom", pad=dict(t=0, b=MENU_SHIFT_PX),
            )],
            height=fig.layout.height + MENU_SHIFT_PX + SLIDER_PX,
            margin_t=fig.layout.margin.t + MENU_SHIFT_PX + SLIDER_PX,
        )  # fmt: skip
        return fig

    def _title(self, name: str) -> str:
        return f"Attention of the {self.model_name}: {name}"

    def show(self, *, layer: int = 1) -> None:
        """The live app when a person runs the notebook (:func:`course_utils.env.interactive_frontend`),
        else the kernel-free twin."""
        from IPython.display import display

        display(self.live() if interactive_frontend() else self.static(layer=layer))
