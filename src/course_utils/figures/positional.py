"""Lesson 03's figures and explorer: the sinusoidal encoding of one position, in its table; a token
embedding plus position encodings in two dimensions (:func:`embedding_plus_position_figure`); a few
positions' vectors, and the pairs of dimensions in which they differ (:func:`position_vectors_figure`).

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
from ..positional import frequencies, sinusoidal_encoding
from ..validation import positive_int
from ..widgets import Explorer, Slider

__all__ = [
    "dots_by_distance_figure",
    "embedding_plus_position_figure",
    "pair_distances",
    "position_vectors_figure",
    "positional_encoding_figure",
    "positional_explorer",
    "sinusoidal_table_figure",
    "wavelength_rows",
]


GHOST_COLOR = "rgba(128, 128, 128, 0.3)"  # the position before, behind the chosen one's bars

# a heatmap's tick labels stand clear of its cells: a short tick (pointing at its row) between them
TICKS_OFF_THE_CELLS = dict(ticks="outside", ticklen=5, tickcolor=plots.REFERENCE_COLOR)


def wavelength_rows(d_model: int, n_rows: int = 4) -> dict[int, float]:
    """A few even (sine) dimensions of a ``d_model`` table and their wavelengths in positions.

    ``{dimension: 2π / ω}`` for ``n_rows`` dimensions spread from 0 over the table (for
    ``d_model = 32``: 0, 8, 16, 24, whose wavelengths are 2π × 1, 10, 100, 1000 positions).
    """
    d_model, n_rows = positive_int("d_model", d_model), positive_int("n_rows", n_rows)
    if d_model % 2:
        raise ValueError(f"expected an even d_model (sin and cos pairs), got {d_model}")
    rows = sorted({2 * round(j * d_model / (2 * n_rows)) for j in range(n_rows)})
    omega = frequencies(d_model)
    return {row: float(2 * np.pi / omega[row]) for row in rows if row < d_model}


def _wavelength_text(wavelength: float) -> str:
    return f"{wavelength:.1f}" if wavelength < 10 else f"{wavelength:,.0f}"


def sinusoidal_table_figure(encoding) -> go.Figure:
    """The sinusoidal table ``encoding (T, d_model)`` as a heatmap: positions across, dimensions down.

    The left axis numbers the dimensions; the right one gives a few rows' wavelength, in positions
    (:func:`wavelength_rows`), which ties the colours' stripes to the formula's frequencies. The x
    ticks stand every 10 positions, so that they do not touch on a phone; the colour bar lies under
    the plot, leaving the width to the cells.
    """
    encoding = np.asarray(encoding, dtype=float)
    if encoding.ndim != 2 or encoding.shape[1] % 2 or 0 in encoding.shape or not np.all(np.isfinite(encoding)):
        raise ValueError(f"expected a finite sinusoidal table (T, d_model) with d_model even, got {encoding.shape}")
    T, d_model = encoding.shape
    rows = wavelength_rows(d_model)
    fig = go.Figure(go.Heatmap(
        z=plots.significant(encoding.T), x=np.arange(T), y=np.arange(d_model), colorscale=plots.DIVERGING,
        zmin=-1, zmax=1, hovertemplate="position %{x}<br>dimension %{y}<br>value %{z:.3f}<extra></extra>",
        colorbar=dict(orientation="h", thickness=10, len=0.6, x=0.5, xanchor="center", y=-0.2, yanchor="top",
                      tickvals=[-1, 0, 1]),
    ))  # fmt: skip
    step = 10 if T > 20 else 1
    fig.update_xaxes(title_text="position", tickvals=list(range(0, T, step)), range=[-0.5, T - 0.5], showgrid=False,
                     **TICKS_OFF_THE_CELLS)  # fmt: skip
    fig.update_yaxes(title_text="dimension (even: sin, odd: cos)", range=[d_model - 0.5, -0.5],
                     tickvals=list(range(0, d_model, 4)), showgrid=False, **TICKS_OFF_THE_CELLS)  # fmt: skip
    fig.update_layout(
        yaxis2=dict(overlaying="y", side="right", anchor="x", range=[d_model - 0.5, -0.5], showgrid=False,
                    tickvals=list(rows), ticktext=[_wavelength_text(w) for w in rows.values()],
                    title=dict(text="wavelength (positions)"), zeroline=False, **TICKS_OFF_THE_CELLS),
        title=dict(text=f"Sinusoidal encoding: {T} positions, d_model = {d_model}", x=0.02, xanchor="left"),
        template=plots.TEMPLATE, height=540, margin=dict(l=70, r=70, t=60, b=120), font=dict(size=13),
    )  # fmt: skip
    # the right axis shows only when a trace uses it: an invisible point on it
    fig.add_trace(go.Scatter(x=[0], y=[0], yaxis="y2", mode="markers", marker=dict(opacity=0), hoverinfo="skip",
                             showlegend=False, name="wavelength axis"))  # fmt: skip
    return fig


def dots_by_distance_figure(distances, sinusoidal: dict, random: dict, *, d_model: int | None = None) -> go.Figure:
    """Dot products of two positions' vectors against their distance ``k``: ``PE[p] · PE[p + k]``.

    ``distances (K,)`` the distances; ``sinusoidal`` and ``random``: ``{name: (K,) dot products}``,
    one curve per start ``p`` of the sinusoidal table and of a random table. The sinusoidal curves
    in colour and dash (they lie on one another), the random table's in grey, each a dash no sinusoid has:
    their spread shows that in a random table the start decides, where the sinusoids depend on ``k`` only.
    ``d_model``, if given, is named in the title.
    """
    xs = np.asarray(distances, dtype=float)
    if xs.ndim != 1 or xs.size == 0:
        raise ValueError(f"expected distances of shape (K,), got {xs.shape}")
    if not sinusoidal or not random:
        raise ValueError("expected at least one sinusoidal and one random curve")
    for name, ys in {**sinusoidal, **random}.items():
        if np.shape(ys) != xs.shape:
            raise ValueError(f"expected curve {name!r} to have {xs.size} values like distances, got {np.shape(ys)}")
    fig = go.Figure()
    for i, (name, ys) in enumerate(random.items()):  # first: under the sinusoids
        fig.add_trace(go.Scatter(
            x=plots.significant(xs), y=plots.significant(ys), name=name, mode="lines", legendgroup="random",
            line=dict(color=plots.REFERENCE_COLOR, dash=plots.DASHES[(i + 3) % len(plots.DASHES)], width=1.3),
            opacity=0.8, legendrank=2000,
        ))  # fmt: skip
    for i, (name, ys) in enumerate(sinusoidal.items()):
        fig.add_trace(go.Scatter(
            x=plots.significant(xs), y=plots.significant(ys), name=name, mode="lines", legendgroup="sinusoidal",
            line=dict(color=plots.color(i), dash=plots.DASHES[i % len(plots.DASHES)], width=2.5),
        ))  # fmt: skip
    fig.update_layout(
        title=dict(text="Dot product of two position encodings against their distance"
                   + (f" (d_model = {positive_int('d_model', d_model)})" if d_model is not None else ""),
                   x=0.02, xanchor="left"),
        template=plots.TEMPLATE, height=460, margin=dict(l=70, r=30, t=60, b=60), font=dict(size=13),
        legend=dict(orientation="h", yanchor="bottom", y=1.0, xanchor="right", x=1.0),
    )  # fmt: skip
    fig.update_xaxes(title_text="distance k (positions)")
    fig.update_yaxes(title_text="PE[p] · PE[p + k]")
    return fig


def positional_encoding_figure(position: int, n_dims: int, *, max_position: int = 50, d_model: int = 64) -> go.Figure:
    """The sinusoidal encoding of one position, in context (lesson 03's explorer).

    Top: the table of positions ``0 .. max_position`` (x axis) by dimensions ``0 .. n_dims-1``
    (y axis), with a line at ``position``. Bottom: the encoding vector of ``position``, one bar per
    dimension, sines (even dimensions) and cosines (odd dimensions) told apart by colour and hatching,
    in front of the vector of the position before (grey, wider), so that a step's swing shows at once.
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
            "the chosen position's vector (sin: blue, cos: hatched), over the position before (grey)",
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
    # the position before, ghosted behind (zeros at position 0, which has none): the swing shows in one look
    before = plots.significant(table[position - 1], digits=4) if position else np.zeros(n_dims)
    fig.add_trace(
        go.Bar(
            x=dims, y=before, width=0.9, name=f"position {position - 1}" if position else "no position before",
            showlegend=False, marker=dict(color=GHOST_COLOR, line=dict(color=plots.REFERENCE_COLOR, width=1)),
            hovertemplate="the position before<br>dimension %{x}<br>value %{y:.3f}<extra></extra>",
        ),
        row=2,
        col=1,
    )
    for parity, name, pattern in ((0, "sin (even dimensions)", ""), (1, "cos (odd dimensions)", "/")):
        fig.add_trace(
            go.Bar(
                x0=parity,
                dx=2,
                y=vector[parity::2],
                width=0.55,
                name=name,  # dimensions parity, parity + 2, ...
                showlegend=False,  # named in the subplot title: a legend would crowd the axis titles
                marker=dict(color=plots.color(parity), pattern_shape=pattern, line=dict(color="black", width=0.5)),
            ),
            row=2,
            col=1,
        )
    fig.update_xaxes(title_text="position", range=[-0.5, max_position + 0.5], row=1, col=1, **TICKS_OFF_THE_CELLS)
    fig.update_yaxes(title_text="dimension", range=[n_dims - 0.5, -0.5], row=1, col=1, **TICKS_OFF_THE_CELLS)
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
        barmode="overlay",  # the chosen position's bars in front of the ghost of the one before
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


MARKER_GAP_PX = 6  # an arrow that points at a marker stops this far short of it, so the marker shows


def _outward_text_position(direction) -> str:
    """A point label's plotly ``textposition`` on the side of ``direction`` ``(2,)``: the label of a
    point on a circle stands outside the circle, clear of the arrows that reach the point from inside."""
    dx, dy = direction
    vertical = "top" if dy > 0.38 else "bottom" if dy < -0.38 else "middle"
    horizontal = "right" if dx > 0.38 else "left" if dx < -0.38 else "center"
    return f"{vertical} {horizontal}" if (vertical, horizontal) != ("middle", "center") else "middle right"


def embedding_plus_position_figure(embedding, word: str, encodings, shown: tuple[int, int] = (1, 4)) -> go.Figure:
    """``E + P`` in two dimensions: the embedding ``E`` of ``word`` (shape ``(2,)``) as an arrow from
    the origin, the encodings ``P`` of every position (``encodings``, shape ``(L, 2)``, points on the
    unit circle) added to it, and for the two positions ``shown`` the arrows ``P`` and ``E + P``.

    Each ``E + P`` point is labelled outside the circle, and the arrows that reach it stop just short
    of its marker (:data:`MARKER_GAP_PX`). On a phone (``layout.meta["narrow_layout"]``) the figure is
    lower, so that the equal-scale axes do not pad the circle with empty height."""
    embedding, encodings = np.asarray(embedding, dtype=float), np.asarray(encodings, dtype=float)
    if embedding.shape != (2,) or encodings.ndim != 2 or encodings.shape[1] != 2:
        raise ValueError(f"expected an embedding of shape (2,) and encodings of shape (L, 2), got "
                         f"{embedding.shape} and {encodings.shape}")
    if len(shown) != 2 or not all(0 <= p < len(encodings) for p in shown):
        raise ValueError(f"expected two positions in 0 .. {len(encodings) - 1} to show, got {shown!r}")
    fig = go.Figure()
    circle = np.linspace(0, 2 * np.pi, 73)
    fig.add_trace(go.Scatter(
        x=plots.significant(embedding[0] + np.sin(circle)), y=plots.significant(embedding[1] + np.cos(circle)),
        mode="lines", line=dict(color="grey", dash="dot", width=1),
        name="E + P for every position: a circle around E",
    ))
    fig.add_trace(go.Scatter(
        x=plots.significant(embedding[0] + encodings[:, 0]), y=plots.significant(embedding[1] + encodings[:, 1]),
        mode="markers+text", text=[f"pos {p}" for p in range(len(encodings))],
        textposition=[_outward_text_position(direction) for direction in encodings],
        marker=dict(color="grey", size=7), name=f"E + P at positions 0 to {len(encodings) - 1}",
    ))
    plots.arrow(fig, [0, 0], embedding, plots.color(0), f"E ({word})", embedding + [0.1, -0.07], ("left", "top"))
    for p, colour, sign in [(shown[0], plots.color(1), 1), (shown[1], plots.color(2), -1)]:
        tip = embedding + encodings[p]
        middle = (embedding + tip) / 2
        plots.arrow(fig, embedding, tip, colour, f"P{p}", middle + [0.12, -0.04], ("left", "top"),
                    standoff=MARKER_GAP_PX)
        if sign > 0:  # above its arrow, half-way
            at, away = tip * 0.5 + [-0.05, 0.08], ("right", "bottom")
        else:  # left of the origin it starts from: half-way, it would sit on the tip's label or the P arrow
            at, away = np.array([-0.06, -0.06]), ("right", "top")
        plots.arrow(fig, [0, 0], tip, colour, f"E + P{p}", at, away, standoff=MARKER_GAP_PX)
    fig.update_layout(
        title=dict(text="Token embedding + position = input vector (d_model = 2)", x=0.02),
        template=plots.TEMPLATE, height=520, margin=dict(l=70, r=30, t=60, b=60),
        legend=dict(orientation="h", yanchor="bottom", y=1.0, xanchor="right", x=1.0),
        meta=dict(narrow_layout=dict(height=400)),  # a phone: the circle's height, not the screen's
    )
    x_range = [round(min(0.0, embedding[0]) - 0.7, 6), round(embedding[0] + 1.6, 6)]
    y_range = [round(embedding[1] - 1.3, 6), round(embedding[1] + 1.3, 6)]
    fig.update_xaxes(title_text="dimension 0", range=x_range, zeroline=True)
    fig.update_yaxes(title_text="dimension 1", range=y_range, zeroline=True, scaleanchor="x")
    return fig


# --------------------------------------------------------------------------------------------
# A few positions' vectors, and where they differ from the first one's


def _encoding_and_positions(encoding, positions) -> tuple[np.ndarray, list[int]]:
    encoding = np.asarray(encoding, dtype=float)
    if encoding.ndim != 2 or encoding.shape[1] % 2 or encoding.shape[1] == 0 or not np.all(np.isfinite(encoding)):
        raise ValueError(f"expected a finite encoding table (T, d_model) with an even d_model, got shape {encoding.shape}")
    T = encoding.shape[0]
    positions = list(positions)
    if len(positions) < 2 or len(set(positions)) != len(positions) or not all(
        isinstance(p, (int, np.integer)) and not isinstance(p, bool) and 0 <= p < T for p in positions
    ):
        raise ValueError(f"expected at least two distinct positions in 0 .. {T - 1}, got {positions!r}")
    return encoding, [int(p) for p in positions]


def pair_distances(encoding, positions) -> np.ndarray:
    """How far each pair of dimensions of ``positions[1:]`` is from that of ``positions[0]``.

    ``encoding (T, d_model)``, ``d_model`` even; ``positions`` at least two distinct rows of it.
    Returns ``(len(positions) - 1, d_model / 2)``: entry ``[k, i]`` is the length of the difference
    of pair ``i``, dimensions ``(2i, 2i+1)``, between position ``positions[k + 1]`` and the first.
    A sinusoidal pair is a point on the unit circle, so the distance is from 0 (the same angle) to 2.
    """
    encoding, positions = _encoding_and_positions(encoding, positions)
    pairs = encoding[positions].reshape(len(positions), -1, 2)  # (P, d_model / 2, 2)
    return np.linalg.norm(pairs[1:] - pairs[:1], axis=-1)  # (P - 1, d_model / 2)


def position_vectors_figure(encoding, positions, *, within: float = 0.1) -> go.Figure:
    """A few positions' encoding vectors, and the pairs of dimensions in which they differ.

    ``encoding (T, d_model)`` (``d_model`` even, at most 128), ``positions`` 2 to 6 distinct rows of
    it, the first the one the others are compared with. Top: the vectors, one heatmap row per
    position, dimensions across (the table of positions read row by row); each later row outlined
    over the pairs that differ from the first position's by more than ``within`` (up to its last
    such pair). Bottom: :func:`pair_distances`, one line per later position (colour and dash), pair
    ``i`` across, with ``within`` as a dotted line: where a line falls under it, the positions agree.
    """
    encoding, positions = _encoding_and_positions(encoding, positions)
    if len(positions) > 6 or encoding.shape[1] > 128:
        raise ValueError(f"expected 2 to 6 positions and d_model <= 128, got {len(positions)} and {encoding.shape[1]}")
    if isinstance(within, bool) or not isinstance(within, (int, float)) or not 0 < within < 2:
        raise ValueError(f"expected within, a distance between pairs, in (0, 2), got {within!r}")
    d_model = encoding.shape[1]
    distances = pair_distances(encoding, positions)  # (P - 1, d_model / 2)
    first = positions[0]
    fig = make_subplots(
        rows=2,
        cols=1,
        row_heights=[0.4, 0.6],
        vertical_spacing=0.2,
        subplot_titles=(
            f"the vectors (outlined: the pairs that differ from position {first}'s)",
            f"how far each pair of dimensions is from position {first}'s",
        ),
    )
    fig.add_trace(
        go.Heatmap(
            z=plots.significant(encoding[positions]),
            x=np.arange(d_model),
            y=np.arange(len(positions)),
            colorscale=plots.DIVERGING,
            zmin=-1,
            zmax=1,
            xgap=1,
            ygap=3,
            showscale=False,
            name="the vectors",
            customdata=[[p] * d_model for p in positions],
            hovertemplate="position %{customdata}<br>dimension %{x}<br>value %{z:.3f}<extra></extra>",
        ),
        row=1,
        col=1,
    )
    for k, row in enumerate(distances, start=1):
        differing = np.flatnonzero(row > within)
        if differing.size:  # from dimension 0 to the last dimension of the last pair that differs
            fig.add_shape(
                type="rect", x0=-0.5, x1=2 * differing.max() + 1.5, y0=k - 0.5, y1=k + 0.5,
                line=dict(color="black", width=2.5), row=1, col=1,
            )  # fmt: skip
    pairs = np.arange(d_model // 2)
    for k, (position, row) in enumerate(zip(positions[1:], distances)):
        fig.add_trace(
            go.Scatter(
                x=pairs, y=plots.significant(row), mode="lines+markers", name=f"position {position}",
                line=dict(color=plots.color(k), dash=plots.DASHES[k % len(plots.DASHES)], width=2.5),
                marker=dict(size=6, symbol=plots.SYMBOLS[k % len(plots.SYMBOLS)]),
            ),
            row=2,
            col=1,
        )  # fmt: skip
    fig.add_trace(
        go.Scatter(
            x=[pairs[0], pairs[-1]], y=[within, within], mode="lines", name=f"{within:g}: they agree below",
            line=dict(color=plots.REFERENCE_COLOR, dash="dot", width=1.5), hoverinfo="name",
        ),
        row=2,
        col=1,
    )  # fmt: skip
    fig.update_xaxes(title_text="dimension (even: sin, odd: cos)", range=[-0.5, d_model - 0.5], row=1, col=1)
    fig.update_yaxes(
        tickvals=list(range(len(positions))), ticktext=[f"pos {p}" for p in positions],
        range=[len(positions) - 0.5, -0.5], showgrid=False, zeroline=False, row=1, col=1,
    )  # fmt: skip
    fig.update_xaxes(title_text="pair i (dimensions 2i and 2i + 1)", range=[-0.5, d_model // 2 - 0.5], row=2, col=1)
    fig.update_yaxes(title_text="distance", range=[0, 2.1], row=2, col=1)
    fig.update_layout(
        title=dict(text=f"Encoding vectors of {len(positions)} positions (d_model = {d_model})", x=0.02,
                   xanchor="left"),
        template=plots.TEMPLATE, height=600, margin=dict(l=70, r=30, t=90, b=60), font=dict(size=13),
        legend=dict(orientation="h", yanchor="bottom", y=-0.3, xanchor="left", x=0),
    )  # fmt: skip
    return fig
