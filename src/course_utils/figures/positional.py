"""Lesson 03's figure and explorer: the sinusoidal encoding of one position, in its table.

:func:`positional_encoding_figure` draws the table of encodings (positions by dimensions) with a
line at one position, and that position's vector below; :func:`positional_explorer` puts it behind
a slider for the position and one for the number of dimensions shown (a
:class:`course_utils.widgets.Explorer`: live in a running notebook, a kernel-free twin on the site).
"""

from __future__ import annotations

import functools

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .. import plots
from ..positional import sinusoidal_encoding
from ..validation import positive_int
from ..widgets import Explorer, Slider

__all__ = ["positional_encoding_figure", "positional_explorer"]


def positional_encoding_figure(position: int, n_dims: int, *, max_position: int = 50, d_model: int = 64) -> go.Figure:
    """The sinusoidal encoding of one position, in context (lesson 03's explorer).

    Top: the table of positions ``0 .. max_position`` (x axis) by dimensions ``0 .. n_dims-1``
    (y axis), with a line at ``position``. Bottom: the encoding vector of ``position``, one bar per
    dimension, sines (even dimensions) and cosines (odd dimensions) told apart by colour and hatching.
    ``d_model`` is the size of the encoding, of which the first ``n_dims`` dimensions are drawn.
    """
    max_position = positive_int("max_position", max_position)
    d_model = positive_int("d_model", d_model)
    n_dims = positive_int("n_dims", n_dims)
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
