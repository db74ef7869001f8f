"""Lesson 06's measured pictures: the gradient's norm at each depth of a stack, on a log axis and,
for the curves that stay alive, on a linear one (:func:`gradient_depth_figure`); how often each
degree adverb stands before each held-out adjective in the pre-training text, the semantic prosody
pre-training learns (:func:`prosody_figure`); where a model's parameters sit, part by part
(:func:`parameter_figure`); every head's behaviours, layer by layer (:func:`behaviours_figure`)."""

from __future__ import annotations

import html
from typing import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .. import plots

__all__ = ["behaviours_figure", "gradient_depth_figure", "parameter_figure", "prosody_figure"]

GRADIENT_TITLE = "Gradient norm at each depth of a {layers}-layer stack, at initialisation"
PROSODY_TITLE = "How often each degree adverb stands right before a held-out adjective"
PARAMETER_TITLE = "Where the parameters sit"


def _named_arrays(mapping, name: str, values: str) -> dict[str, np.ndarray]:
    """``mapping``, a non-empty dict of a ``name`` (a curve, a behaviour) to its ``values`` (numbers),
    as float arrays; a clear error for anything else. Shapes are the caller's to check."""
    if not isinstance(mapping, Mapping) or not mapping:
        raise TypeError(f"expected a non-empty dict of {name} name -> {values}, got {type(mapping).__name__}")
    arrays = {}
    for key, given in mapping.items():
        plots.require_text(f"a {name}'s name", key)
        try:
            arrays[key] = np.asarray(given, dtype=float)
        except (TypeError, ValueError):
            raise TypeError(f"expected the {values} of {key!r} to be numbers, got {type(given).__name__}") from None
    return arrays


def _curves(norms) -> tuple[dict[str, np.ndarray], int]:
    """``norms``: a non-empty mapping of a curve's name to its ``(L + 1,)`` positive finite norms."""
    curves = {}
    for name, array in _named_arrays(norms, "curve", "gradient norms").items():
        if array.ndim != 1 or array.size < 2 or not np.all(np.isfinite(array)) or np.any(array < 0):
            raise ValueError(f"expected the norms of {name!r} to be a finite, non-negative vector (L + 1,) with "
                             f"L >= 1, got shape {array.shape}")  # fmt: skip
        curves[name] = array
    sizes = {a.size for a in curves.values()}
    if len(sizes) != 1:
        raise ValueError(f"expected every curve to have the same number of depths, got {sorted(sizes)}")
    return curves, sizes.pop()


def gradient_depth_figure(norms, *, linear: Sequence[str], floor: float = 1e-30,
                          title: str | None = None) -> go.Figure:  # fmt: skip
    """The norm of the loss's gradient with respect to the hidden state after each layer, two panels.

    ``norms``: ``{arrangement: (L + 1,)}``, the norm at the input (depth 0) and after each of the
    ``L`` layers; ``title`` (default: one naming ``L``). Left: every curve on a log axis (a norm under ``floor`` is drawn at ``floor``).
    Right: the curves named in ``linear`` on a linear axis from 0, each with its input-to-top ratio
    written at its input (where a log axis makes 3× and two-thirds look the same). Each curve has
    its palette colour and dash in both panels and one legend entry.
    """
    curves, size = _curves(norms)
    if isinstance(linear, str) or not linear or any(name not in curves for name in linear):
        raise ValueError(f"expected linear to name some of the curves {list(curves)}, got {linear!r}")
    if not (isinstance(floor, (int, float)) and floor > 0):
        raise ValueError(f"expected a positive floor for the log axis, got {floor!r}")
    title = GRADIENT_TITLE.format(layers=size - 1) if title is None else title
    plots.require_text("title", title)
    depths = np.arange(size)
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.12, subplot_titles=[
        "every arrangement, log scale", "the residual ones, linear scale"])  # fmt: skip
    for i, (name, values) in enumerate(curves.items()):
        style = dict(line=dict(color=plots.color(i), dash=plots.DASHES[i % len(plots.DASHES)], width=2.5),
                     marker=dict(size=6), mode="lines+markers", legendgroup=name, name=name)  # fmt: skip
        fig.add_trace(go.Scatter(x=depths, y=plots.significant(np.maximum(values, floor)), **style,
                                 hovertemplate="after layer %{x}: %{y:.3g}<extra>" + html.escape(name) + "</extra>"),
                      row=1, col=1)  # fmt: skip
        if name in linear:
            ratio = values[0] / values[-1] if values[-1] > 0 else float("inf")
            fig.add_trace(go.Scatter(x=depths, y=plots.significant(values), **style, showlegend=False,
                                     hovertemplate="after layer %{x}: %{y:.3f}<extra>" + html.escape(name) + "</extra>"),
                          row=1, col=2)  # fmt: skip
            fig.add_annotation(x=0, y=float(plots.significant(values[0])), xref="x2", yref="y2", showarrow=False,
                               text=f"input: {ratio:.2f} × the top's", xanchor="left", yanchor="bottom", yshift=6,
                               xshift=4, font=dict(size=12), name=f"ratio {name}")  # fmt: skip
    reach = max(float(curves[name].max()) for name in linear)
    fig.update_yaxes(type="log", exponentformat="power", title_text="‖∂L/∂h<sub>l</sub>‖", row=1, col=1)
    fig.update_yaxes(range=[0, 1.2 * reach], rangemode="tozero", row=1, col=2)
    fig.update_xaxes(title_text="hidden state after layer l (0 = the input)", row=1, col=1)
    fig.update_xaxes(title_text="after layer l", row=1, col=2)
    fig.update_layout(
        title=dict(text=title, x=0.02, xanchor="left"),
        template=plots.TEMPLATE,
        height=440,
        margin=dict(l=70, r=30, t=100, b=60),
        font=dict(size=13),
        legend=dict(orientation="h", yanchor="top", y=-0.2, xanchor="left", x=0),
    )
    return fig


def _counts(name: str, values, shape: tuple[int, ...]) -> np.ndarray:
    try:
        array = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"expected {name} to be numbers, got {type(values).__name__}") from None
    if array.shape != shape or not np.all(np.isfinite(array)) or np.any(array < 0) or np.any(array != np.round(array)):
        raise ValueError(f"expected {name} to be non-negative whole numbers of shape {shape}, got shape {array.shape}")
    return array.astype(int)


EMPTY = "rgba(255, 255, 255, 0)"  # a count of 0: no colour, no text, the page shows through (light or dark)


def prosody_figure(counts, words: Sequence[str], adverbs: Sequence[str], polarities: Sequence[int], *,
                   title: str = PROSODY_TITLE) -> go.Figure:  # fmt: skip
    """A co-occurrence matrix: ``counts (W, A)``, how often adverb ``adverbs[a]`` stands right before
    word ``words[w]``; ``polarities (W,)``, each word's polarity, ``+1`` or ``-1``.

    One row per word (a column per adverb, so it stays narrow on a phone), the positive words first
    then the negative ones, each row's label starting with its sign (+ or −) and a line between the
    two groups; every cell has its count written on it, and a pair that never occurs (0) is an
    empty cell, so the block each adverb fills shows its polarity at a glance.
    """
    words, adverbs = list(words), list(adverbs)
    for name, labels in (("words", words), ("adverbs", adverbs)):
        if not labels:
            raise ValueError(f"expected at least one of the {name}, got none")
        for label in labels:
            plots.require_text(f"each of the {name}", label)
    try:
        signs = np.asarray(polarities, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"expected polarities to be numbers, got {type(polarities).__name__}") from None
    if signs.shape != (len(words),) or not np.all(np.isin(signs, (-1, 1))):
        raise ValueError(f"expected one polarity, +1 or -1, for each of the {len(words)} words, got {polarities!r}")
    table = _counts("counts", counts, (len(words), len(adverbs)))
    plots.require_text("title", title)
    order = [i for i in range(len(words)) if signs[i] > 0] + [i for i in range(len(words)) if signs[i] < 0]
    rows = [f"{'+' if signs[i] > 0 else '−'} {words[i]}" for i in order]
    z = table[order]
    fig = go.Figure(go.Heatmap(
        z=z, x=[f"{a} ___" for a in adverbs], y=rows, zmin=0, zmax=max(1, int(z.max())),
        colorscale=[[0, EMPTY], [1e-6, "#DCEBF5"], [1, plots.color(0)]], showscale=False, xgap=2, ygap=2,
        text=[[f"{n:,}" if n else "" for n in row] for row in z], texttemplate="%{text}", textfont=dict(size=12),
        hovertemplate="“%{x}” before %{y}: %{z} times<extra></extra>",
    ))  # fmt: skip
    n_positive = int(np.sum(signs > 0))
    if 0 < n_positive < len(words):
        fig.add_shape(type="line", xref="paper", x0=0, x1=1, yref="y", y0=n_positive - 0.5, y1=n_positive - 0.5,
                      line=dict(color=plots.REFERENCE_COLOR, width=2), name="positive | negative")  # fmt: skip
    fig.update_yaxes(autorange="reversed", type="category", title_text="held-out word (+ positive, − negative)")
    fig.update_xaxes(type="category", side="top")
    fig.update_layout(
        title=dict(text=title, x=0.02, xanchor="left"),
        template=plots.TEMPLATE,
        height=130 + 26 * len(words),
        margin=dict(l=70, r=20, t=110, b=20),
        font=dict(size=13),
    )
    return fig


def _millions(n: int) -> str:
    """A count as a figure writes it: millions with one decimal from 100,000 on, else in full."""
    return f"{n / 1e6:.1f}M" if n >= 100_000 else f"{n:,}"


def _share(n: int, total: int) -> str:
    """A part's bar label: its count and its share of the model ("none" where the model lacks it)."""
    if n == 0:
        return "none"
    return f"{_millions(n)} ({n / total:.0%})" if n >= 0.01 * total else f"{_millions(n)} (<1%)"


def parameter_figure(models: Mapping[str, Mapping[str, int]], *, title: str = PARAMETER_TITLE) -> go.Figure:
    """Where each model's parameters sit: one row per part (say word embeddings, attention,
    feed-forward, LayerNorms), a bar per model in each row, top to bottom in the order the parts
    first appear. ``models`` maps a model's name to ``{part: number of parameters}``; a part a model
    lacks is 0 or absent. Each bar has its count written at its end (millions from 100,000 on) and
    its share of its model's total; each model's total is in its legend entry. The models differ by
    colour and by pattern, so the figure reads without colour.
    """
    if not isinstance(models, Mapping) or not models:
        raise TypeError(f"expected a non-empty dict of model name -> {{part: count}}, got {type(models).__name__}")
    parts: list[str] = []
    for model, counts in models.items():
        plots.require_text("a model's name", model)
        if not isinstance(counts, Mapping) or not counts:
            raise TypeError(f"expected the parts of {model!r} as a non-empty dict of part -> count, got "
                            f"{type(counts).__name__}")  # fmt: skip
        for part, n in counts.items():
            plots.require_text("a part's name", part)
            if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
                raise ValueError(f"expected the count of {part!r} in {model!r} to be a non-negative int, got {n!r}")
            if part not in parts:
                parts.append(part)
    plots.require_text("title", title)
    totals = {m: int(sum(counts.values())) for m, counts in models.items()}
    if not all(totals.values()):
        raise ValueError(f"expected every model to have some parameters, got totals {totals}")
    largest = max(int(n) for counts in models.values() for n in counts.values())
    fig = go.Figure()
    for i, (model, counts) in enumerate(models.items()):
        values = [int(counts.get(part, 0)) for part in parts]
        fig.add_trace(go.Bar(
            y=parts, x=values, orientation="h", name=f"{html.escape(model)}: {totals[model]:,} in all",
            marker=dict(color=plots.color(i), pattern=dict(shape="" if i == 0 else "/", fgcolor="white")),
            text=[_share(v, totals[model]) for v in values],
            textposition="outside", cliponaxis=False, textfont=dict(size=12),
            hovertemplate=f"{html.escape(model)}, %{{y}}: %{{x:,}}<extra></extra>",
        ))  # fmt: skip
    fig.update_layout(
        barmode="group",
        bargap=0.25,
        title=dict(text=title, x=0.02, xanchor="left"),
        template=plots.TEMPLATE,
        height=150 + 22 * len(models) * len(parts),
        margin=dict(l=70, r=30, t=60, b=50),
        font=dict(size=13),
        legend=dict(orientation="h", yanchor="bottom", y=1.0, xanchor="left", x=0, traceorder="normal"),
    )
    fig.update_yaxes(autorange="reversed", type="category")
    fig.update_xaxes(title_text="parameters", range=[0, 1.5 * largest], exponentformat="SI")
    return fig


BEHAVIOURS_TITLE = "Each head's behaviours"


def behaviours_figure(scores: Mapping[str, object], *, title: str = BEHAVIOURS_TITLE) -> go.Figure:
    """Every head's score for every behaviour, as one heatmap: ``scores`` maps a behaviour to its
    ``(L, H)`` scores in ``[0, 1]`` (say :func:`course_utils.figures.average_behaviours`' first
    result). One row per behaviour, one column per head, the ``H`` heads of a layer side by side and
    a thin gap between layers; the x axis names the layers ("L1" ...), so it stays legible on a
    phone, and hovering a cell names its head ("L3H3"). One colour scale, 0 to 1.
    """
    grids = {}
    for name, grid in _named_arrays(scores, "behaviour", "(L, H) scores").items():
        if grid.ndim != 2 or grid.size == 0 or not np.all(np.isfinite(grid)) or grid.min() < 0 or grid.max() > 1:
            raise ValueError(f"expected the scores of {name!r} to be an (L, H) grid of values in [0, 1], got shape "
                             f"{grid.shape}")  # fmt: skip
        grids[name] = grid
    shapes = {g.shape for g in grids.values()}
    if len(shapes) != 1:
        raise ValueError(f"expected every behaviour to have the same (L, H) scores, got shapes {sorted(shapes)}")
    plots.require_text("title", title)
    (L, H), gap = shapes.pop(), 0.35
    names = list(grids)
    fig = go.Figure()
    for layer in range(L):
        xs = layer * (H + gap) + np.arange(H)  # this layer's columns; the gap shows the page between layers
        fig.add_trace(go.Heatmap(
            z=plots.significant([grids[name][layer] for name in names]), x=xs, y=names, zmin=0, zmax=1,
            colorscale=plots.SEQUENTIAL, showscale=layer == 0, colorbar=dict(thickness=14),
            customdata=[[f"L{layer + 1}H{h + 1}" for h in range(H)] for _ in names], name=f"layer {layer + 1}",
            hovertemplate="%{customdata}, %{y}: %{z:.2f}<extra></extra>",
        ))  # fmt: skip
    centres = [layer * (H + gap) + (H - 1) / 2 for layer in range(L)]
    fig.update_xaxes(tickmode="array", tickvals=centres, ticktext=[f"L{layer + 1}" for layer in range(L)],
                     range=[-0.5, (L - 1) * (H + gap) + H - 0.5], showgrid=False, zeroline=False,
                     title_text=f"layer ({H} heads each, left to right)")  # fmt: skip
    fig.update_yaxes(autorange="reversed", type="category", title_text="behaviour", showgrid=False)
    fig.update_layout(
        title=dict(text=title, x=0.02, xanchor="left"),
        template=plots.TEMPLATE,
        height=max(320, 140 + 40 * len(names)),
        margin=dict(l=70, r=30, t=60, b=60),
        font=dict(size=13),
    )
    return fig
