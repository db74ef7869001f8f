"""Plotly figure builders with one colour-blind-safe palette.

Builders return ``plotly.graph_objects.Figure`` objects; lessons show them by leaving the figure as
the last expression of a cell (or with ``fig.show()``), drawn by the course's renderer
(:mod:`course_utils.rendering`). Each lesson's own figures are in :mod:`course_utils.figures`.
"""

from __future__ import annotations

import html
from typing import Sequence

import numpy as np
import plotly.graph_objects as go

from .precision import FIGURE_DIGITS, significant  # noqa: F401  (significant: the builders' and lessons' rounding)

# Okabe & Ito (2008), "Color Universal Design": distinguishable with every common colour-vision
# deficiency. Lines also differ by dash style, so figures read in greyscale too.
PALETTE = (
    "#0072B2",  # blue
    "#E69F00",  # orange
    "#009E73",  # bluish green
    "#CC79A7",  # reddish purple
    "#56B4E9",  # sky blue
    "#D55E00",  # vermillion
    "#F0E442",  # yellow
    "#000000",  # black
)
DASHES = ("solid", "dash", "dot", "dashdot", "longdash", "longdashdot")
# Cividis is perceptually uniform and designed to be readable with colour-vision deficiencies.
SEQUENTIAL = "Cividis"
DIVERGING = "RdBu"
TEMPLATE = "plotly_white"
# A reference line (chance, a teacher's score): mid grey, 3.9:1 on white and 4:1 on the dark page
REFERENCE_COLOR = "#808080"

# Figures carry values to this many significant digits (course_utils.precision says why).
SIGNIFICANT_DIGITS = FIGURE_DIGITS


def color(i: int) -> str:
    """The ``i``-th colour of the course palette (cycling)."""
    return PALETTE[i % len(PALETTE)]


def _style(fig: go.Figure, title: str, x_title: str, y_title: str, height: int) -> go.Figure:
    fig.update_layout(
        title=dict(text=title, x=0.02, xanchor="left"),
        template=TEMPLATE,
        height=height,
        margin=dict(l=70, r=30, t=60, b=60),
        font=dict(size=13),
        colorway=list(PALETTE),
    )
    fig.update_xaxes(title_text=x_title)
    fig.update_yaxes(title_text=y_title)
    return fig


def require_text(name: str, value: str) -> None:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"expected a non-empty string for {name}, got {value!r}")


def heatmap(
    values,
    x_labels: Sequence[str],
    y_labels: Sequence[str],
    *,
    title: str,
    x_title: str,
    y_title: str,
    annotate: bool = True,
    decimals: int = 2,
    colorscale: str = SEQUENTIAL,
    zmin: float | None = None,
    zmax: float | None = None,
    height: int | None = None,
    blocked=None,
    blocked_text: str = "blocked",
    outline_row: int | None = None,
) -> go.Figure:
    """A labelled heatmap of a matrix, e.g. attention weights.

    ``values`` has shape ``(len(y_labels), len(x_labels))``: row ``i`` is drawn at ``y_labels[i]``,
    from top to bottom, as matrices are read. With ``annotate`` every cell shows its value.

    ``blocked`` (optional), a boolean array of ``values``' shape, marks the cells that hold no value,
    such as the masked scores of attention (``True`` = blocked, the opposite of an attention mask):
    they are drawn in light grey with the text ``blocked_text``, their entries of ``values`` (often
    ``-inf`` or a huge negative number) are ignored, and the colour scale spans the other cells only.
    The figure then has a second trace, the grey cells, even where none is blocked.

    ``outline_row`` (optional), a row index: that row is outlined (the row a paragraph points to).
    """
    z = significant(values)
    if z.ndim != 2:
        raise ValueError(f"expected a 2-D matrix of values, got an array of shape {z.shape}")
    if z.shape != (len(y_labels), len(x_labels)):
        raise ValueError(
            f"expected values of shape (len(y_labels)={len(y_labels)}, len(x_labels)={len(x_labels)}), got {z.shape}"
        )
    for name, text in (("title", title), ("x_title", x_title), ("y_title", y_title)):
        require_text(name, text)
    if blocked is not None:
        blocked = _blocked_cells(blocked, z.shape)
        z = np.where(blocked, np.nan, z)  # a gap: no colour, no text, not in the colour scale
    # Plotly needs unique category labels; repeated tokens ("the ... the") get a position suffix.
    xs, ys = unique_labels(x_labels), unique_labels(y_labels)
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=xs,
            y=ys,
            colorscale=colorscale,
            zmin=zmin,
            zmax=zmax,
            text=np.round(z, decimals) if annotate else None,
            texttemplate=f"%{{z:.{decimals}f}}" if annotate else None,
            hovertemplate="row %{y}<br>column %{x}<br>value %{z:.4f}<extra></extra>",
            colorbar=dict(thickness=14),
            **({"hoverongaps": False} if blocked is not None else {}),
        )
    )
    if blocked is not None:
        fig.add_trace(blocked_cells_trace(blocked, xs, ys, text=blocked_text))
    if outline_row is not None:
        if isinstance(outline_row, bool) or not isinstance(outline_row, (int, np.integer)) or not 0 <= outline_row < len(ys):
            raise ValueError(f"expected outline_row to be a row index in 0 .. {len(ys) - 1}, got {outline_row!r}")
        fig.add_shape(type="rect", xref="x", yref="y", x0=-0.5, x1=len(xs) - 0.5, y0=outline_row - 0.5,
                      y1=outline_row + 0.5, line=dict(color=OUTLINE_COLOR, width=3), fillcolor="rgba(0,0,0,0)",
                      name=f"row {outline_row}")  # fmt: skip
    fig.update_yaxes(autorange="reversed", type="category")
    fig.update_xaxes(type="category", side="bottom")
    return _style(fig, title, x_title, y_title, height or max(320, 60 + 48 * len(ys)))


OUTLINE_COLOR = "#D55E00"  # vermillion: seen on Cividis's navy and on its yellow


BLOCKED_COLOR = "#E0E0E0"  # light grey: lighter than every colour of Cividis, so never mistaken for a value
BLOCKED_TEXT_COLOR = "#404040"


def _blocked_cells(blocked, shape: tuple[int, ...]) -> np.ndarray:
    """``blocked`` as a boolean numpy array of ``shape`` (numpy or torch in)."""
    if hasattr(blocked, "detach"):  # a torch tensor
        blocked = blocked.detach().cpu().numpy()
    blocked = np.asarray(blocked)
    if blocked.dtype != np.bool_:
        raise TypeError(f"expected blocked to be a boolean array (True = blocked cell), got dtype {blocked.dtype}")
    if blocked.shape != tuple(shape):
        raise ValueError(f"expected blocked of the shape of the values {tuple(shape)}, got {blocked.shape}")
    return blocked


def blocked_cells_trace(blocked, x: Sequence[str], y: Sequence[str], *, text: str = "blocked") -> go.Heatmap:
    """The grey cells of a heatmap whose cells ``blocked (len(y), len(x))`` hold no value.

    A heatmap trace drawn over the values: ``BLOCKED_COLOR`` with ``text`` where ``blocked`` is
    ``True``, a gap (nothing) elsewhere. :func:`heatmap` adds it when given ``blocked``.
    """
    blocked = _blocked_cells(blocked, (len(y), len(x)))
    require_text("text", text)
    return go.Heatmap(
        z=np.where(blocked, 0.0, np.nan),
        x=list(x),
        y=list(y),
        colorscale=[[0.0, BLOCKED_COLOR], [1.0, BLOCKED_COLOR]],
        zmin=0.0,
        zmax=1.0,
        showscale=False,
        text=np.where(blocked, text, ""),  # a constant texttemplate would be written on the gaps too
        texttemplate="%{text}",
        textfont=dict(color=BLOCKED_TEXT_COLOR),
        hovertemplate=f"row %{{y}}<br>column %{{x}}<br>{html.escape(text)}<extra></extra>",
        hoverongaps=False,
        name=text,
    )


def unique_labels(labels: Sequence[str]) -> list[str]:
    """``labels`` made distinct for plotly's category axes, by position only where one repeats.

    ``["the", "cat", "the"]`` -> ``["the (0)", "cat (1)", "the (2)"]``; distinct labels stay as they are.
    """
    labels = [str(label) for label in labels]
    if len(set(labels)) == len(labels):
        return labels
    return [f"{label} ({i})" for i, label in enumerate(labels)]


def lines(
    x,
    series: dict[str, Sequence[float]],
    *,
    title: str,
    x_title: str,
    y_title: str,
    log_x: bool = False,
    log_y: bool = False,
    markers: bool = True,
    height: int = 420,
    x_ticks: Sequence[float] | None = None,
    marks: Sequence[tuple[str, float, str]] = (),
) -> go.Figure:
    """Curves sharing one x axis: ``series`` maps a legend name to ``len(x)`` y values.

    Each curve gets the next palette colour *and* dash style, so it reads without colour.
    ``x_ticks`` (optional) labels the x axis at exactly these values (say the sampled ones, on a
    log axis); ``marks`` points at a curve's points: ``(series name, x, text)``, the text written
    by the point (a value the prose discusses).
    """
    xs = significant(x)
    if xs.ndim != 1 or xs.size == 0:
        raise ValueError(f"expected x to be a non-empty 1-D sequence, got shape {xs.shape}")
    if not series:
        raise ValueError("expected at least one series, got none")
    for name, text in (("title", title), ("x_title", x_title), ("y_title", y_title)):
        require_text(name, text)
    fig = go.Figure()
    for i, (name, ys) in enumerate(series.items()):
        ys = significant(ys)
        if ys.shape != xs.shape:
            raise ValueError(f"expected series {name!r} to have {xs.size} values like x, got shape {ys.shape}")
        fig.add_trace(
            go.Scatter(
                x=xs,
                y=ys,
                name=name,
                mode="lines+markers" if markers else "lines",
                line=dict(color=color(i), dash=DASHES[i % len(DASHES)], width=2.5),
                marker=dict(size=7),
            )
        )
    fig.update_layout(legend=dict(orientation="h", yanchor="bottom", y=1.0, xanchor="right", x=1.0))
    if log_x:  # powers of ten as 10⁻⁴, not SI prefixes (100µ)
        fig.update_xaxes(type="log", exponentformat="power")
    if log_y:
        fig.update_yaxes(type="log", exponentformat="power")
    if x_ticks is not None:
        ticks = significant(x_ticks)
        fig.update_xaxes(tickmode="array", tickvals=ticks.tolist(), ticktext=[f"{t:g}" for t in ticks])
    for name, at, text in marks:
        if name not in series:
            raise ValueError(f"expected a mark on one of the series {list(series)}, got {name!r}")
        where = np.flatnonzero(np.isclose(xs, at))
        if where.size == 0:
            raise ValueError(f"expected a mark at one of the x values {xs.tolist()}, got {at!r}")
        y = float(significant(series[name])[where[0]])
        fig.add_annotation(x=float(np.log10(at)) if log_x else float(at), y=float(np.log10(y)) if log_y else y,
                           text=text, showarrow=True, arrowhead=2, arrowwidth=1.5, ax=-40, ay=-36,
                           arrowcolor="#444444",  # set, so that the site lightens it in dark mode
                           font=dict(size=12), bgcolor="white", name=f"mark {name}")  # fmt: skip
    return _style(fig, title, x_title, y_title, height)


def mark(fig: go.Figure, label: str, *, x: float | None = None, y: float | None = None) -> go.Figure:
    """A grey reference line at ``y`` (horizontal) or ``x`` (vertical), dashed unlike every curve
    of ``fig`` (it reads in greyscale; dotted where no curve is), named by ``label``,
    never written on a curve or on the line: a horizontal line is a trace across the curves' x
    range, named in the legend; a vertical line is labelled just right of its foot. Log axes are
    handled (an annotation on a log axis is placed by the logarithm of its value). Returns ``fig``."""
    require_text("label", label)
    if (x is None) == (y is None):
        raise ValueError(f"expected one of x (a vertical line) or y (a horizontal line), got x={x!r}, y={y!r}")
    used = {trace.line.dash or "solid" for trace in fig.data if getattr(trace, "line", None) is not None}
    dash = next((d for d in ("dot", "dashdot", "longdashdot", "longdash") if d not in used), "dot")  # unlike any curve
    line = dict(color=REFERENCE_COLOR, width=1.5, dash=dash)
    value = float(significant([x if y is None else y])[0])
    axis = fig.layout.yaxis if x is None else fig.layout.xaxis
    if axis.type == "log" and not value > 0:
        raise ValueError(f"expected a positive value on a log axis, got {value}")
    if x is None:
        xs = [float(v) for trace in fig.data if trace.x is not None for v in trace.x if v is not None]
        if not xs:
            raise ValueError("expected a figure with curves to draw a horizontal reference line across")
        fig.add_trace(go.Scatter(x=[min(xs), max(xs)], y=[value, value], mode="lines", line=line, name=label,
                                 hoverinfo="name"))  # fmt: skip
    else:
        fig.add_vline(x=value, line=line)
        at = np.log10(value) if axis.type == "log" else value
        fig.add_annotation(x=at, xref="x", y=0.02, yref="paper", text=label, showarrow=False, xanchor="left",
                           yanchor="bottom", xshift=4, font=dict(size=12, color=REFERENCE_COLOR))
    return fig


# ten shapes: a figure of up to ten series reads in greyscale (lesson 07's study draws ten arms)
SYMBOLS = ("circle", "square", "diamond", "triangle-up", "x", "star", "triangle-down", "cross", "hexagon",
           "pentagon")


def scatter(
    points,
    labels: Sequence[str],
    groups: Sequence[str],
    *,
    title: str,
    x_title: str,
    y_title: str,
    height: int = 460,
) -> go.Figure:
    """Labelled points ``(N, 2)``, one trace per group: palette colour *and* marker symbol per group.

    ``labels`` (N,) are written next to the points; ``groups`` (N,) name each point's group, shown
    in the legend in order of first appearance.
    """
    xy = significant(points)
    if xy.ndim != 2 or xy.shape[1] != 2 or xy.shape[0] == 0:
        raise ValueError(f"expected points of shape (N, 2) with N >= 1, got {xy.shape}")
    if len(labels) != len(xy) or len(groups) != len(xy):
        raise ValueError(f"expected one label and one group per point: {len(xy)} points, "
                         f"{len(labels)} labels, {len(groups)} groups")
    for name, text in (("title", title), ("x_title", x_title), ("y_title", y_title)):
        require_text(name, text)
    fig = go.Figure()
    for i, group in enumerate(dict.fromkeys(groups)):
        rows = [j for j, g in enumerate(groups) if g == group]
        fig.add_trace(
            go.Scatter(
                x=xy[rows, 0], y=xy[rows, 1], name=str(group), mode="markers+text",
                text=[str(labels[j]) for j in rows], textposition="top center",
                marker=dict(size=10, color=color(i), symbol=SYMBOLS[i % len(SYMBOLS)]),
            )
        )
    fig.update_layout(legend=dict(orientation="h", yanchor="bottom", y=1.0, xanchor="right", x=1.0))
    return _style(fig, title, x_title, y_title, height)



def curve_groups(
    x,
    groups: dict[str, Sequence[Sequence[float]]],
    *,
    title: str,
    x_title: str,
    y_title: str,
    reference: tuple[str, float] | None = None,
    height: int = 440,
) -> go.Figure:
    """Several runs per group on one x axis: ``groups`` maps a legend name to a list of runs, each
    ``len(x)`` y values. One colour and dash style per group, one legend entry per group (a click
    hides the whole group); ``reference`` ``(name, y)`` draws a horizontal line (ln 2, chance).
    """
    xs = significant(x)
    if xs.ndim != 1 or xs.size == 0:
        raise ValueError(f"expected x to be a non-empty 1-D sequence, got shape {xs.shape}")
    if not groups or not all(len(runs) for runs in groups.values()):
        raise ValueError("expected at least one group, each with at least one run")
    for name, text in (("title", title), ("x_title", x_title), ("y_title", y_title)):
        require_text(name, text)
    fig = go.Figure()
    for i, (name, runs) in enumerate(groups.items()):
        for j, ys in enumerate(runs):
            ys = significant(ys)
            if ys.shape != xs.shape:
                raise ValueError(f"expected each run of {name!r} to have {xs.size} values like x, got shape {ys.shape}")
            fig.add_trace(go.Scatter(
                x=xs, y=ys, name=name, legendgroup=name, showlegend=j == 0, mode="lines", opacity=0.85,
                line=dict(color=color(i), dash=DASHES[i % len(DASHES)], width=1.8),
            ))
    if reference is not None:
        label, y = reference
        fig.add_trace(go.Scatter(x=[xs[0], xs[-1]], y=significant([y, y]), name=label, mode="lines",
                                 line=dict(color=REFERENCE_COLOR, width=1, dash="dot")))
    fig.update_layout(legend=dict(orientation="h", yanchor="bottom", y=1.0, xanchor="right", x=1.0))
    return _style(fig, title, x_title, y_title, height)


def seed_spread(
    values: dict[str, dict[str, Sequence[float]]],
    *,
    title: str,
    x_title: str,
    y_title: str,
    reference: tuple[str, float] | None = None,
    height: int = 440,
) -> go.Figure:
    """Every seed's result as a point, grouped: ``values[setting][method]`` the seeds' values.

    Settings (``"500 labels"``) along x; one colour and marker symbol per method, side by side
    (so the spread and the worst seed show, in greyscale too), and a bar across each group at
    its mean. ``reference`` ``(name, y)``: a horizontal line.
    """
    if not values or not all(values.values()):
        raise ValueError("expected at least one setting, each with at least one method")
    for name, text in (("title", title), ("x_title", x_title), ("y_title", y_title)):
        require_text(name, text)
    methods = list(dict.fromkeys(m for by_method in values.values() for m in by_method))
    fig = go.Figure()
    for i, method in enumerate(methods):
        settings = [setting for setting, by_method in values.items() if len(by_method.get(method, []))]
        xs, ys = [], []
        for setting in settings:
            seeds = significant(values[setting][method])
            xs += [setting] * seeds.size
            ys += seeds.tolist()
        style = dict(color=color(i), symbol=SYMBOLS[i % len(SYMBOLS)], size=9)
        fig.add_trace(go.Scatter(x=xs, y=ys, name=method, mode="markers", marker=style, offsetgroup=method,
                                 legendgroup=method))
        means = [float(significant([np.mean(values[setting][method])])[0]) for setting in settings]
        fig.add_trace(go.Scatter(x=settings, y=means, name=f"{method}: mean", mode="markers", offsetgroup=method,
                                 legendgroup=method, showlegend=False,
                                 marker=dict(color=color(i), symbol="line-ew-open", size=26, line=dict(width=2.5))))
    shown = [v for by_method in values.values() for seeds in by_method.values() for v in seeds]
    if reference is not None:
        label, y = reference
        line = dict(color=REFERENCE_COLOR, width=1, dash="dot")
        fig.add_hline(y=float(significant([y])[0]), line=line)
        # named in the legend, not on the plot: on a phone the points of a group can sit on any corner
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="lines", line=line, name=label, hoverinfo="skip"))
        shown.append(y)
    if not np.all(np.isfinite(shown)):
        raise ValueError(f"expected finite values (accuracies, losses), got {shown}")
    # grouped markers make plotly's autorange include 0 (as for bars); the points need the room
    low, high = float(np.min(shown)), float(np.max(shown))
    pad = max(0.08 * (high - low), 0.01 * max(abs(high), abs(low)), 1e-3)
    fig.update_yaxes(range=[low - pad, high + pad])
    fig.update_layout(scattermode="group", legend=dict(orientation="h", yanchor="bottom", y=1.0, xanchor="right", x=1.0))
    return _style(fig, title, x_title, y_title, height)

# --------------------------------------------------------------------------------------------
# Vectors drawn as arrows in a plane (lessons 03, 04 and 09)


def arrow(fig: go.Figure, start, end, colour: str, label: str = "", at=None, anchor: tuple[str, str] = ("left", "top"),
          *, width: float = 2.5, standoff: float = 0) -> None:
    """An arrow from the point ``start`` to ``end`` (data coordinates, ``(2,)`` each, rounded to
    :data:`SIGNIFICANT_DIGITS`), and its ``label`` at the point ``at`` (default: the tip), on the
    ``anchor`` (xanchor, yanchor) side of it, in the arrow's colour: data coordinates, so that the
    labels keep their places at any width. The label names the arrow, so it reads without colour.
    ``standoff`` (pixels): the arrowhead stops this far short of ``end``, so a marker there shows.
    """
    start, end = significant(start), significant(end)
    if start.shape != (2,) or end.shape != (2,) or not (np.all(np.isfinite(start)) and np.all(np.isfinite(end))):
        raise ValueError(f"expected finite points of shape (2,) for an arrow, got {start.shape} and {end.shape}")
    fig.add_annotation(
        x=end[0], y=end[1], ax=start[0], ay=start[1], xref="x", yref="y",
        axref="x", ayref="y", text="", showarrow=True, arrowhead=3,
        arrowsize=1.3, arrowwidth=width, arrowcolor=colour, **({"standoff": standoff} if standoff else {}),
    )  # fmt: skip
    if label:
        at = end if at is None else significant(at)
        fig.add_annotation(x=at[0], y=at[1], text=label, showarrow=False, xanchor=anchor[0], yanchor=anchor[1],
                           font=dict(color=colour, size=13))  # fmt: skip


# --------------------------------------------------------------------------------------------
# Boxes' outline colours (figures.boxes)


BOX_COLORS = tuple(c for c in PALETTE if c != "#F0E442")
