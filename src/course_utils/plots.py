"""Plotly figure builders with one colour-blind-safe palette, and the course's figure renderer.

Builders return ``plotly.graph_objects.Figure`` objects; lessons show them by leaving the figure as
the last expression of a cell (or with ``fig.show()``).

Why a renderer of our own? Inside a kernel, plotly ≥ 6.1 emits only its JSON mime type
(``application/vnd.plotly.v1+json``). JupyterLab and VS Code draw that, but Jupyter Book, Colab
and GitHub do not: the book shows a blank gap. The ``"course"`` renderer emits both:

- the JSON mime type, drawn natively by JupyterLab and VS Code;
- ``text/html``: a ``<div>`` and a short script that draws the figure with the page's own
  ``Plotly`` object. On the book's site plotly.js is served by the site itself, once per page
  (see :mod:`course_utils.book`). Where a page has no ``Plotly`` (Colab's output frames), the
  script loads the matching plotly.js before drawing.

Div ids are derived from the figure and a per-kernel counter, so re-running a notebook gives
byte-identical outputs (needed by nbval's strict comparison).
"""

from __future__ import annotations

import hashlib
import html
import itertools
import json
import re
from typing import Sequence

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
from plotly.io._base_renderers import MimetypeRenderer
from plotly.offline import get_plotlyjs_version

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

# Figures carry values to this many significant digits: more than a figure can show, few enough
# that a CPU whose floating-point results differ in the last bits still draws the same bytes
# (committed notebook outputs are compared exactly by nbval).
SIGNIFICANT_DIGITS = 6

RENDERER_NAME = "course"
PLOTLY_MIME = "application/vnd.plotly.v1+json"
_figure_counter = itertools.count(1)


def significant(values, digits: int = SIGNIFICANT_DIGITS) -> np.ndarray:
    """``values`` as a float array, each rounded to ``digits`` significant digits.

    Rounded through its decimal text, so the result is the float nearest to the short decimal
    (``1.23457``, not ``1.2345699999999999``); inf and nan are kept.
    """
    array = np.asarray(values, dtype=float)
    rounded = [float(f"{value:.{digits - 1}e}") for value in array.ravel()]
    return np.array(rounded, dtype=float).reshape(array.shape)


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


def _require_text(name: str, value: str) -> None:
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
) -> go.Figure:
    """A labelled heatmap of a matrix, e.g. attention weights.

    ``values`` has shape ``(len(y_labels), len(x_labels))``: row ``i`` is drawn at ``y_labels[i]``,
    from top to bottom, as matrices are read. With ``annotate`` every cell shows its value.

    ``blocked`` (optional), a boolean array of ``values``' shape, marks the cells that hold no value,
    such as the masked scores of attention (``True`` = blocked, the opposite of an attention mask):
    they are drawn in light grey with the text ``blocked_text``, their entries of ``values`` (often
    ``-inf`` or a huge negative number) are ignored, and the colour scale spans the other cells only.
    The figure then has a second trace, the grey cells, even where none is blocked.
    """
    z = significant(values)
    if z.ndim != 2:
        raise ValueError(f"expected a 2-D matrix of values, got an array of shape {z.shape}")
    if z.shape != (len(y_labels), len(x_labels)):
        raise ValueError(
            f"expected values of shape (len(y_labels)={len(y_labels)}, len(x_labels)={len(x_labels)}), got {z.shape}"
        )
    for name, text in (("title", title), ("x_title", x_title), ("y_title", y_title)):
        _require_text(name, text)
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
    fig.update_yaxes(autorange="reversed", type="category")
    fig.update_xaxes(type="category", side="bottom")
    return _style(fig, title, x_title, y_title, height or max(320, 60 + 48 * len(ys)))


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
    _require_text("text", text)
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
) -> go.Figure:
    """Curves sharing one x axis: ``series`` maps a legend name to ``len(x)`` y values.

    Each curve gets the next palette colour *and* dash style, so it reads without colour.
    """
    xs = significant(x)
    if xs.ndim != 1 or xs.size == 0:
        raise ValueError(f"expected x to be a non-empty 1-D sequence, got shape {xs.shape}")
    if not series:
        raise ValueError("expected at least one series, got none")
    for name, text in (("title", title), ("x_title", x_title), ("y_title", y_title)):
        _require_text(name, text)
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
    return _style(fig, title, x_title, y_title, height)


SYMBOLS = ("circle", "square", "diamond", "triangle-up", "x", "star")


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
        _require_text(name, text)
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
        _require_text(name, text)
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
                                 line=dict(color="black", width=1, dash="dot")))
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
        _require_text(name, text)
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
    if reference is not None:
        label, y = reference
        fig.add_hline(y=float(significant([y])[0]), line=dict(color="black", width=1, dash="dot"),
                      annotation_text=label, annotation_position="bottom right")
    fig.update_layout(scattermode="group", legend=dict(orientation="h", yanchor="bottom", y=1.0, xanchor="right", x=1.0))
    return _style(fig, title, x_title, y_title, height)

# --------------------------------------------------------------------------------------------
# The renderer


def _figure_payload(spec: dict, div_id: str) -> str:
    """``spec`` (``data``, ``layout``) as JSON that can sit inside a ``<script>`` element."""
    if not isinstance(spec, dict) or "data" not in spec:
        raise ValueError("expected a figure spec: a dict with 'data' (and usually 'layout')")
    if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_-]*", div_id):
        raise ValueError(f"expected an HTML id (letters, digits, '-' and '_'), got {div_id!r}")
    return json.dumps(
        {"data": spec.get("data", []), "layout": spec.get("layout", {}), "config": {"responsive": True}},
        sort_keys=True,
        separators=(",", ":"),
    ).replace("</", "<\\/")  # a figure title cannot close the script tag


def _figure_label(spec: dict) -> str:
    return html.escape(figure_title(spec) or "interactive figure", quote=True)


def figure_html(spec: dict, div_id: str, *, fetch_plotly_js: bool = True) -> str:
    """The HTML of a figure in a notebook: a ``<div>`` and a script that draws it with the page's ``Plotly``.

    ``spec`` is the figure as a JSON-ready dict (``data``, ``layout``). With ``fetch_plotly_js``
    the script loads the matching plotly.js itself when the page has none (Colab's output frames).
    The book's site draws its figures with :func:`site_figure_html` instead.
    """
    payload = _figure_payload(spec, div_id)
    height = spec.get("layout", {}).get("height") or 450
    draw = f'Plotly.newPlot("{div_id}", fig.data, fig.layout, fig.config);'
    if fetch_plotly_js:
        plotly_js = f"https://cdn.plot.ly/plotly-{get_plotlyjs_version()}.min.js"
        draw = (
            f"var draw = function () {{ {draw} }};\n"
            "  if (window.Plotly) { draw(); return; }\n"
            "  // No plotly.js on this page (e.g. a Colab output frame): fetch it, then draw.\n"
            '  var script = document.createElement("script");\n'
            f'  script.src = "{plotly_js}";\n'
            "  script.onload = draw;\n"
            "  document.head.appendChild(script);"
        )
    return (
        f'<div id="{div_id}" class="plotly-graph-div course-figure" role="img" aria-label="{_figure_label(spec)}" '
        f'style="height:{height}px; width:100%;"></div>\n'
        '<script type="text/javascript">\n'
        "(function () {\n"
        f"  var fig = {payload};\n"
        f"  {draw}\n"
        "})();\n"
        "</script>"
    )


def site_figure_html(spec: dict, div_id: str) -> str:
    """The HTML of a figure on the book's site: a ``<div>`` and the figure's spec as JSON.

    The site's deferred ``course-figures.js`` (:mod:`course_utils.book`) draws every figure once
    plotly.js has loaded, fitted to the width the figure gets. The ``<div>`` is a labelled
    ``role="figure"``: a figure may hold sliders and menus, which a screen reader must reach
    (``role="img"`` would hide them). Its height is reserved, so the page does not jump.
    """
    payload = _figure_payload(spec, div_id)
    height = spec.get("layout", {}).get("height") or 450
    return (
        f'<div id="{div_id}" class="plotly-graph-div course-figure" role="figure" '
        f'aria-label="{_figure_label(spec)}" style="height:{height}px; width:100%;"></div>\n'
        f'<script type="application/json" class="course-figure-spec" data-figure="{div_id}">{payload}</script>'
    )


def figure_title(spec: dict) -> str:
    """The title of a figure spec as plain text (tags such as ``<br>`` become spaces)."""
    title = spec.get("layout", {}).get("title", "")
    text = title.get("text", "") if isinstance(title, dict) else str(title or "")
    return " ".join(re.sub(r"<[^>]+>", " ", text).split())


def figure_mimebundle(fig: go.Figure) -> dict[str, object]:
    """The mime bundle the course renderer displays for ``fig``.

    Keys: ``application/vnd.plotly.v1+json`` (JupyterLab, VS Code) and ``text/html`` (the book,
    Colab). The div id is ``fig-<n>-<digest>``: the n-th figure of this kernel and a digest of the
    figure, so a notebook run from a fresh kernel always produces the same bytes.
    """
    if not isinstance(fig, go.Figure):
        raise TypeError(f"expected a plotly.graph_objects.Figure, got {type(fig).__name__}")
    spec = json.loads(pio.to_json(fig, validate=False, engine="json"))
    digest = hashlib.sha1(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:10]
    div_id = f"fig-{next(_figure_counter)}-{digest}"
    return {
        PLOTLY_MIME: {"data": spec.get("data", []), "layout": spec.get("layout", {}), "config": {}},
        "text/html": figure_html(spec, div_id),
    }


class CourseRenderer(MimetypeRenderer):
    """Plotly renderer emitting :func:`figure_mimebundle`; registered as ``"course"``."""

    def to_mimebundle(self, fig_dict: dict) -> dict[str, object]:
        return figure_mimebundle(go.Figure(fig_dict))


def use_course_renderer() -> None:
    """Register the ``"course"`` renderer and make it plotly's default (idempotent)."""
    pio.renderers[RENDERER_NAME] = CourseRenderer()
    pio.renderers.default = RENDERER_NAME


# --------------------------------------------------------------------------------------------
# Attention as information flow (lesson 04)


def attention_flow(
    weights,
    tokens: Sequence[str],
    *,
    title: str,
    key_tokens: Sequence[str] | None = None,
    top_k: int = 2,
    max_width: float = 16.0,
    height: int | None = None,
) -> go.Figure:
    """Where each token reads from: its ``top_k`` strongest attention weights drawn as lines.

    ``weights`` has shape ``(T_q, T_k)``: row ``i`` holds the weights of the query token
    ``tokens[i]`` over the key tokens ``key_tokens`` (default: ``tokens``, as in self-attention).
    Query tokens form the left column and key tokens the right column, both in sentence order from
    top to bottom. Each query token is joined to its ``top_k`` largest weights (ties: the earlier
    key) by lines in its own palette colour whose width is proportional to the weight (a weight of 1
    is ``max_width`` pixels wide), so the figure reads without colour too; hovering over the middle
    of a line shows the weight. One legend entry per query token shows or hides its lines.
    """
    w = significant(weights)
    if w.ndim != 2:
        raise ValueError(f"expected weights of shape (T_q, T_k), got an array of shape {w.shape}")
    keys = list(tokens) if key_tokens is None else list(key_tokens)
    if w.shape != (len(tokens), len(keys)):
        raise ValueError(
            f"expected weights of shape (len(tokens)={len(tokens)}, len(key_tokens)={len(keys)}), got {w.shape}"
        )
    if w.size == 0 or not np.all(np.isfinite(w)) or np.any(w < 0):
        raise ValueError("expected non-empty, finite, non-negative attention weights (a softmax output)")
    if isinstance(top_k, bool) or not isinstance(top_k, (int, np.integer)) or not 1 <= top_k <= len(keys):
        raise ValueError(f"expected top_k to be an integer from 1 to T_k={len(keys)}, got {top_k!r}")
    if not max_width > 0:
        raise ValueError(f"expected a positive max_width (pixels), got {max_width!r}")
    _require_text("title", title)
    fig = go.Figure()
    for i, query in enumerate(tokens):
        strongest = np.argsort(-w[i], kind="stable")[:top_k]  # (top_k,) key indices, largest first
        for rank, j in enumerate(strongest):
            fig.add_trace(
                go.Scatter(
                    x=[0.0, 0.5, 1.0],
                    y=[float(i), (i + j) / 2, float(j)],
                    mode="lines",
                    line=dict(color=color(i), dash=DASHES[i % len(DASHES)], width=max(0.5, float(max_width * w[i, j]))),
                    opacity=0.75,
                    name=str(query),
                    legendgroup=f"query {i}",
                    showlegend=bool(rank == 0),
                    hovertemplate=f"{html.escape(str(query))} → {html.escape(str(keys[j]))}: "
                    f"weight {w[i, j]:.3f}<extra></extra>",
                )
            )
    for x, labels, side, name in ((0.0, list(tokens), "middle left", "queries"), (1.0, keys, "middle right", "keys")):
        fig.add_trace(
            go.Scatter(
                x=[x] * len(labels),
                y=[float(k) for k in range(len(labels))],
                mode="markers+text",
                text=[str(label) for label in labels],
                textposition=side,
                marker=dict(size=12, color="white", line=dict(width=2, color="black")),
                name=name,
                showlegend=False,
                hoverinfo="skip",
            )
        )
    rows = max(len(tokens), len(keys))
    for x, text in ((0.0, "query: reads from →"), (1.0, "key: is read")):
        fig.add_annotation(x=x, y=-0.9, text=f"<b>{text}</b>", showarrow=False, xref="x", yref="y")
    fig.update_xaxes(visible=False, range=[-0.55, 1.55])
    fig.update_yaxes(visible=False, range=[rows - 0.4, -1.3])  # token 0 on top
    fig.update_layout(
        title=dict(text=title, x=0.02, xanchor="left"),
        template=TEMPLATE,
        height=height or max(320, 110 + 46 * rows),
        margin=dict(l=30, r=30, t=60, b=20),
        font=dict(size=13),
        legend=dict(title=dict(text="query token"), itemclick="toggle"),
    )
    return fig


# --------------------------------------------------------------------------------------------
# Boxes and arrows: a training flow (lesson 07)


BOX_COLORS = tuple(c for c in PALETTE if c != "#F0E442")


def flow_diagram(
    boxes: Sequence[tuple[str, float, float]],
    arrows: Sequence[tuple[str, str]],
    *,
    title: str,
    height: int = 460,
) -> go.Figure:
    """A diagram of labelled boxes joined by arrows, such as a training step's data flow.

    ``boxes``: ``(label, x, y)`` with ``x, y`` in ``[0, 1]`` (the box's centre; ``<br>`` breaks a
    label's lines); box ``i`` is outlined in the ``i``-th colour of :data:`BOX_COLORS` (the
    palette without its yellow, too pale for a thin line on white). ``arrows``: ``(from_label,
    to_label)`` pairs, drawn from centre to centre, stopping short of the boxes. Hovering over a
    box shows its label, so the figure reads without colour too.
    """
    _require_text("title", title)
    where = {}
    for label, x, y in boxes:
        _require_text("a box's label", label)
        if label in where:
            raise ValueError(f"expected every box's label once, got {label!r} twice")
        if not (0 <= x <= 1 and 0 <= y <= 1):
            raise ValueError(f"expected box coordinates in [0, 1], got ({x}, {y}) for {label!r}")
        where[label] = (float(x), float(y))
    for start, end in arrows:
        missing = [name for name in (start, end) if name not in where]
        if missing:
            raise ValueError(f"expected arrows between boxes, got unknown box {missing[0]!r}; boxes: {list(where)}")
    fig = go.Figure()
    for start, end in arrows:
        (x0, y0), (x1, y1) = where[start], where[end]
        fig.add_annotation(x=x1, y=y1, ax=x0, ay=y0, xref="x", yref="y", axref="x", ayref="y", text="",
                           showarrow=True, arrowhead=2, arrowsize=1.2, arrowwidth=1.6, arrowcolor="#555555",
                           standoff=24, startstandoff=24)  # fmt: skip
    for i, (label, (x, y)) in enumerate(where.items()):
        fig.add_annotation(x=x, y=y, xref="x", yref="y", text=label, showarrow=False, align="center",
                           bgcolor="white", bordercolor=BOX_COLORS[i % len(BOX_COLORS)], borderwidth=2, borderpad=6,
                           font=dict(size=12))  # fmt: skip
    fig.add_trace(go.Scatter(
        x=[x for x, _ in where.values()], y=[y for _, y in where.values()], mode="markers",
        marker=dict(size=1, opacity=0), hovertext=[label.replace("<br>", " ") for label in where],
        hoverinfo="text", showlegend=False, name="boxes",
    ))  # fmt: skip
    fig.update_xaxes(visible=False, range=[-0.1, 1.1])
    fig.update_yaxes(visible=False, range=[-0.1, 1.1])
    fig.update_layout(title=dict(text=title, x=0.02, xanchor="left"), template=TEMPLATE, height=height,
                      margin=dict(l=10, r=10, t=60, b=10), font=dict(size=13))  # fmt: skip
    return fig
