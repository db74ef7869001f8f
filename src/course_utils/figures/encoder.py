"""Lesson 06's diagrams: one post-LN (or pre-LN) encoder block as a residual stream with its two
sub-layers (:func:`block_figure`), and the two side by side (:func:`post_pre_ln_figure`: where
the LayerNorm sits); one token's vector before and after LayerNorm (:func:`layer_norm_figure`);
DistilBERT-base stage by stage, with the shape after each stage, and what BERT-base has in
addition (:func:`architecture_figure`)."""

from __future__ import annotations

import html

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .. import plots
from ..encoder import EncoderConfig
from . import canvas
from .boxes import number

__all__ = ["architecture_figure", "block_figure", "layer_norm_figure", "layer_norm_numbers", "post_pre_ln_figure"]

TITLE = "DistilBERT-base, stage by stage (and what BERT-base adds)"
BLOCK_TITLE = "One post-LN encoder block: each sub-layer's output is added to the residual stream, then normalised"
PRE_LN_TITLE = "One pre-LN encoder block: each sub-layer's input is normalised, the residual stream is not"
POST_PRE_TITLE = "Where the LayerNorm sits: on the residual stream after each + (post-LN), or on each branch (pre-LN)"


NORM_FILL = plots.color(1)  # every LayerNorm box: one strong colour (orange), dark text on it


def _box(
    fig: go.Figure,
    x0: float,
    x1: float,
    y: float,
    text: str,
    colour: str,
    dash: str = "solid",
    height: float = 0.8,
    fill: str = "white",
) -> None:
    """A box from ``x0`` to ``x1`` centred on ``y``, outlined in ``colour``; a ``fill`` other than
    white is a tint that keeps its colour in dark mode (its label is black on the tint)."""
    fig.add_shape(
        type="rect",
        x0=x0,
        x1=x1,
        y0=y - height / 2,
        y1=y + height / 2,
        line=dict(color=colour, width=2, dash=dash),
        fillcolor=fill,
    )
    font = dict(size=13) if fill == "white" else dict(size=13, color="#000000")
    tinted = {} if fill == "white" else dict(bgcolor=fill)  # the site keeps black text on a tint's background
    fig.add_annotation(x=(x0 + x1) / 2, y=y, text=text, showarrow=False, font=font, **tinted)


def _arrow(fig: go.Figure, x: float, y_from: float, y_to: float) -> None:
    _arrowhead(fig, x, y_from, x, y_to, "grey", width=1.5)


ARCH_TINT = "rgba(0, 114, 178, 0.07)"  # the repeated block's frame, behind its stages
SHAPE_INK = "#555555"  # a stage's shape, under its name: mid grey, legible on both page colours


def _architecture_parts(config: EncoderConfig, bert_config) -> tuple[list[tuple[str, str, bool]], dict[int, str]]:
    """The stages ``(name, shape after it, inside the repeated block)`` from ``input_ids`` to
    ``last_hidden_state``, and BERT-base's extras keyed by the index of the stage they follow."""
    V, P, Dm, H = config.vocab_size, config.max_position_embeddings, config.dim, config.n_heads
    Fd, N = config.hidden_dim, config.n_layers
    stages = [
        ("input_ids: token ids of a batch", "(B, T)", False),
        (f"word embeddings {V:,} × {Dm}<br>+ position embeddings {P} × {Dm}", f"(B, T, {Dm})", False),
        ("LayerNorm (eps 1e-12), dropout", f"(B, T, {Dm})", False),
        (f"multi-head self-attention:<br>{H} heads × {Dm // H}", f"(B, T, {Dm}); weights (B, {H}, T, T)", True),
        ("add & LayerNorm (sa_layer_norm)", f"(B, T, {Dm})", True),
        (f"feed-forward network:<br>{Dm} → {Fd}, GELU, → {Dm}", f"(B, T, {Fd}) inside, then (B, T, {Dm})", True),
        ("add & LayerNorm (output_layer_norm)", f"(B, T, {Dm})", True),
        ("last_hidden_state: one vector per token", f"(B, T, {Dm})", False),
    ]
    extras = {
        1: f"<b>BERT-base adds</b> token-type embeddings<br>{bert_config.type_vocab_size} × {Dm}: "
           "first or second sentence",
        6: f"<b>BERT-base</b>: × {bert_config.num_hidden_layers} blocks, not {N}",
        7: f"<b>BERT-base adds</b> a pooler on [CLS]:<br>{Dm} × {Dm} + tanh → (B, {Dm})",
    }
    return stages, extras


def _architecture_canvas(config: EncoderConfig, bert_config, width: float, notes_beside: bool) -> canvas.Canvas:
    """The stages as a column of boxes, each with its shape under its name, the repeated block
    framed; BERT's extras as dashed notes right after the stage they concern (``notes_beside``:
    level with it, in a column on the right, on a laptop). The arrows run down the column's left
    side, so that a note in the column (a phone) stands beside them, not on them."""
    stages, extras = _architecture_parts(config, bert_config)
    bert = plots.color(5)
    c = canvas.Canvas(width)
    size, line_px, pad, gap, frame_pad = 12, 1.3 * 12, 6, 22, 8
    column = (4.0, width * 0.62 - 10) if notes_beside else (4.0, width - 4)
    arrow_x = column[0] + 22
    frame = {}  # the repeated block's frame: top and bottom
    y, last_bottom = 2.0, None

    def note(i: int, top: float) -> float:
        """BERT's note on stage ``i``: beside the stage (a laptop) or in the column from ``top``;
        returns where the column goes on."""
        text, n = extras[i], extras[i].count("<br>") + 1
        left = width * 0.62 + 6 if notes_beside else arrow_x + 18
        bottom = top + 2 * pad + n * line_px
        c.rect(left, top, width - 4, bottom, fill="white", line=bert, line_width=1.5, name=f"BERT {i}")
        c.shapes[-1]["line"]["dash"] = "dash"
        c.text(left + pad, top + pad, text, anchor=("left", "top"), size=11, color=bert, name=f"BERT {i}")
        c.notes[-1]["bgcolor"] = "white"  # dark mode lightens the text against its box, not the page
        return bottom + 12

    for i, (name, shape, in_block) in enumerate(stages):
        if in_block and "top" not in frame:  # the repeated block opens: its frame's name on the right
            frame["top"] = y - gap / 2 + 2
            c.text(column[1] - frame_pad, frame["top"] + 5, f"<b>transformer block × {config.n_layers}</b>",
                   anchor=("right", "top"), size=size, color=plots.color(0), name="block")  # fmt: skip
            y = frame["top"] + 5 + line_px + 8
        if not in_block and "top" in frame and "bottom" not in frame:  # ... and closes
            frame["bottom"] = last_bottom + frame_pad
            y = frame["bottom"] + gap / 2 + 2
            if not notes_beside:
                y = note(i - 1, y - 4) + 4
        inset = frame_pad + 4 if in_block else 0
        left, right = column[0] + inset, column[1] - inset
        lines = name.count("<br>") + 1
        top = y
        bottom = top + pad + lines * line_px + 2 + line_px + pad
        if last_bottom is not None:
            c.arrow(arrow_x, last_bottom + 1, arrow_x, top - 3, name=f"to stage {i}")
        c.rect(left, top, right, bottom, fill="white", line="#000000", line_width=1.5, name=f"stage {i}")
        c.text(left + 12, top + pad, name, anchor=("left", "top"), size=size, name=f"stage {i}")
        c.text(left + 12, top + pad + lines * line_px + 2, shape, anchor=("left", "top"), size=11,
               color=SHAPE_INK, name=f"shape {i}")  # fmt: skip
        c.notes[-1]["bgcolor"] = "white"  # dark mode lightens the grey against its box, not the page
        last_bottom, y = bottom, bottom + gap
        if i in extras and notes_beside:
            note(i, top)
            if i == len(stages) - 1:
                c._grow(top + 2 * pad + (extras[i].count("<br>") + 1) * line_px)
        elif i in extras and not (in_block and i + 1 < len(stages) and stages[i + 1][2] is False):
            y = note(i, bottom + 10) + 10
    c.shapes.insert(0, dict(type="rect", xref="x", yref="y", x0=column[0], y0=frame["top"], x1=column[1],
                            y1=frame["bottom"], fillcolor=ARCH_TINT, line=dict(color=plots.color(0), width=2),
                            name="block"))  # fmt: skip
    return c


def architecture_figure(config: EncoderConfig, bert_config, *, title: str = TITLE) -> go.Figure:
    """DistilBERT's encoder as a column of boxes from ``input_ids`` to ``last_hidden_state``, each
    with the shape after it under its name, the repeated block framed; in dashed notes right after
    the stage they concern (on a laptop, level with it on the right), what a BERT of
    ``bert_config`` (a ``transformers.BertConfig``) adds: token-type embeddings, more blocks, the
    pooler. ``config``: a :class:`course_utils.encoder.EncoderConfig`. On a phone
    (``layout.meta["narrow_layout"]``) the notes stand in the column, so nothing is wider than the
    screen."""
    if not isinstance(config, EncoderConfig):
        raise TypeError(f"expected an EncoderConfig, got {type(config).__name__}")
    if not all(hasattr(bert_config, name) for name in ("type_vocab_size", "num_hidden_layers")):
        raise TypeError(f"expected a transformers BertConfig, got {type(bert_config).__name__}")
    plots.require_text("title", title)
    wide = _architecture_canvas(config, bert_config, canvas.WIDE_DESIGN_PX, notes_beside=True)
    narrow = _architecture_canvas(config, bert_config, canvas.NARROW_DESIGN_PX, notes_beside=False)
    return canvas.canvas_figure(wide, narrow, title=title)


def _line(
    fig: go.Figure, points: list[tuple[float, float]], colour: str, width: float = 2, dash: str = "solid"
) -> None:
    """A polyline through ``points``, drawn as shapes (so the site treats the figure as a diagram)."""
    for (x0, y0), (x1, y1) in zip(points, points[1:]):
        fig.add_shape(type="line", x0=x0, y0=y0, x1=x1, y1=y1, line=dict(color=colour, width=width, dash=dash))


def _arrowhead(
    fig: go.Figure, x_from: float, y_from: float, x_to: float, y_to: float, colour: str, width: float = 2,
    standoff: float = 0,
) -> None:
    """An arrow's head at ``(x_to, y_to)``, or ``standoff`` pixels before it."""
    fig.add_annotation(
        standoff=standoff,
        x=x_to,
        y=y_to,
        ax=x_from,
        ay=y_from,
        xref="x",
        yref="y",
        axref="x",
        ayref="y",
        text="",
        showarrow=True,
        arrowhead=2,
        arrowwidth=width,
        arrowcolor=colour,
    )


ARRANGEMENTS = ("post-LN", "pre-LN")
BLOCK_WIDTH, BLOCK_HEIGHT = 10.2, 12.3  # one block's drawing, in its own units: x in [-0.2, 10], y in [0.1, 12.4]
SUBLAYER_TOPS = (10.6, 5.9)  # where each branch leaves the stream


def _arrangement(arrangement: str) -> str:
    if arrangement not in ARRANGEMENTS:
        raise ValueError(f"expected arrangement to be one of {ARRANGEMENTS}, got {arrangement!r}")
    return arrangement


def _draw_block(
    fig: go.Figure, config: EncoderConfig, arrangement: str, dx: float = 0.0, dy: float = 0.0, notes: bool = True
) -> None:
    """One encoder block drawn into ``fig``, its drawing moved by ``(dx, dy)``: the residual stream
    down the left, two branches (attention, feed-forward) that come back to a ``+`` on it, and the
    LayerNorms where ``arrangement`` puts them: on the stream after each ``+`` (post-LN), or on
    each branch before its sub-layer (pre-LN). ``notes``: the shapes written beside the stream."""
    D, H, Fd = config.dim, config.n_heads, config.hidden_dim
    # the branches' grey keeps 3:1 against a white page and against the site's dark background
    stream, branch = plots.color(0), "#888888"
    sx, bx0, bx1 = 2.0 + dx, 4.6 + dx, 9.8 + dx  # the stream's x; a sub-layer box's left and right edges
    bmid = (bx0 + bx1) / 2
    # the residual stream, thick, from the input to the output
    _line(fig, [(sx, 11.55 + dy), (sx, 0.95 + dy)], stream, width=5)
    _arrowhead(fig, sx, 1.4 + dy, sx, 0.75 + dy, stream)
    fig.add_annotation(x=sx - 0.3, y=9.0 + dy, text="residual<br>path", showarrow=False, xanchor="right",
                       font=dict(size=12, color=stream))  # fmt: skip
    texts = (f"multi-head self-attention<br>{H} heads of {D // H}", f"feed-forward network<br>{D} → {Fd}, GELU, → {D}")
    for top, text in zip(SUBLAYER_TOPS, texts):
        top += dy
        norm_y, box_y, plus_y = top - 0.6, top - 1.95, top - 3.0  # pre-LN's norm on the branch; the sub-layer; +
        _line(fig, [(sx, top), (bmid, top), (bmid, box_y + 0.7)], branch)  # the branch leaves the stream
        if arrangement == "pre-LN":  # the LayerNorm on the branch, before the sub-layer
            _box(fig, bmid - 1.7, bmid + 1.7, norm_y, "LayerNorm", stream, height=0.6, fill=NORM_FILL)
            _arrowhead(fig, bmid, norm_y - 0.3, bmid, box_y + 0.5, branch)
        else:
            _arrowhead(fig, bmid, box_y + 0.9, bmid, box_y + 0.5, branch)
        _box(fig, bx0, bx1, box_y, text, branch, height=0.9)
        _line(fig, [(bmid, box_y - 0.45), (bmid, plus_y), (sx + 0.45, plus_y)], branch)  # ... and comes back
        _arrowhead(fig, sx + 0.9, plus_y, sx + 0.35, plus_y, branch)  # ends outside the +'s circle
        fig.add_shape(type="circle", xsizemode="pixel", ysizemode="pixel", xanchor=sx, yanchor=plus_y,
                      x0=-10, x1=10, y0=-10, y1=10, line=dict(color=stream, width=2),
                      fillcolor="white")  # in pixels: a circle at every width, not an ellipse  # fmt: skip
        fig.add_annotation(x=sx, y=plus_y, text="<b>+</b>", showarrow=False, font=dict(size=16))
        if arrangement == "post-LN":  # the LayerNorm on the stream, after the sum
            _box(fig, sx - 1.7, sx + 1.7, top - 3.85, "LayerNorm", stream, height=0.6, fill=NORM_FILL)
            if notes:
                fig.add_annotation(x=sx + 1.9, y=top - 3.85, text=f"add & norm: (T, {D})", showarrow=False,
                                   xanchor="left", font=dict(size=12))  # fmt: skip
    _box(fig, sx - 1.7, sx + 1.7, 11.9 + dy, f"x: (T, {D})", stream, height=0.6)
    if notes:
        fig.add_annotation(x=sx + 1.9, y=11.9 + dy, text="one vector per token", showarrow=False, xanchor="left",
                           font=dict(size=12))  # fmt: skip
    fig.add_annotation(x=sx, y=0.45 + dy, text=f"output (T, {D}): the next block's x", showarrow=False,
                       xanchor="left", xshift=-40, font=dict(size=12))  # fmt: skip


def block_figure(config: EncoderConfig, *, arrangement: str = "post-LN", title: str | None = None) -> go.Figure:
    """One encoder block of ``config`` (a :class:`course_utils.encoder.EncoderConfig`), top to bottom.

    The residual stream runs down the left, from the block's input ``x (T, D)`` to its output
    ``(T, D)``. It branches twice: into multi-head self-attention, then into the feed-forward
    network, each drawn with the sizes of ``config``; each branch comes back to a ``+`` on the
    stream (the residual connection). ``arrangement`` ``"post-LN"`` (BERT, DistilBERT; the
    default): a LayerNorm on the stream after each ``+``; ``"pre-LN"`` (GPT-2): a LayerNorm on each
    branch, before its sub-layer. Text and line styles carry the meaning (the residual path is
    thick, the branches thin), so it reads without colour; on a narrow screen it is drawn at the
    screen's width. ``title``: default, one that names the arrangement.
    """
    if not isinstance(config, EncoderConfig):
        raise TypeError(f"expected an EncoderConfig, got {type(config).__name__}")
    arrangement = _arrangement(arrangement)
    if title is None:
        title = BLOCK_TITLE if arrangement == "post-LN" else PRE_LN_TITLE
    plots.require_text("title", title)
    fig = go.Figure()
    _draw_block(fig, config, arrangement)
    fig.update_xaxes(visible=False, range=[-0.2, 10.0])
    fig.update_yaxes(visible=False, range=[0.1, 12.4])
    fig.update_layout(
        title=dict(text=title, x=0.02),
        template=plots.TEMPLATE,
        height=560,
        margin=dict(l=10, r=10, t=70, b=10),
        font=dict(size=13),
        meta=dict(narrow_layout=dict(height=560)),  # drawn at the screen's width on a phone
    )
    return fig


COLUMN_TITLES = {
    "post-LN": "<b>post-LN</b> (BERT, DistilBERT)<br>h = LayerNorm(x + f(x))",
    "pre-LN": "<b>pre-LN</b> (GPT-2 and later)<br>h = x + f(LayerNorm(x))",
}


def _blocks_layout(config: EncoderConfig, offsets: list[tuple[float, float]]) -> go.Figure:
    """Post-LN and pre-LN blocks drawn at ``offsets``, each under its column title."""
    fig = go.Figure()
    for arrangement, (dx, dy) in zip(ARRANGEMENTS, offsets):
        _draw_block(fig, config, arrangement, dx, dy, notes=False)
        fig.add_annotation(x=dx + 4.9, y=dy + 13.0, text=COLUMN_TITLES[arrangement], showarrow=False,
                           font=dict(size=13))  # fmt: skip
    xs, ys = [dx for dx, _ in offsets], [dy for _, dy in offsets]
    fig.update_xaxes(visible=False, range=[min(xs) - 0.2, max(xs) + 10.0], fixedrange=True)
    fig.update_yaxes(visible=False, range=[min(ys) + 0.1, max(ys) + 13.7], fixedrange=True)
    return fig


def post_pre_ln_figure(config: EncoderConfig, *, title: str = POST_PRE_TITLE) -> go.Figure:
    """A post-LN block (left) beside a pre-LN block (right), both of ``config`` (a
    :class:`course_utils.encoder.EncoderConfig`), each as :func:`block_figure` draws it: input
    ``x (T, D)``, output ``(T, D)``. Post-LN puts each LayerNorm on the residual stream, after the
    ``+``; pre-LN puts it on the branch, before the sub-layer, and leaves the stream without one.
    Each column is titled by its name and its formula, and every LayerNorm box is labelled, so it
    reads without colour. On a phone (``layout.meta["narrow_layout"]``) the two blocks stand one
    above the other, in one column.
    """
    if not isinstance(config, EncoderConfig):
        raise TypeError(f"expected an EncoderConfig, got {type(config).__name__}")
    plots.require_text("title", title)
    gap = 0.8
    fig = _blocks_layout(config, [(0.0, 0.0), (BLOCK_WIDTH + gap, 0.0)])
    narrow = _blocks_layout(config, [(0.0, BLOCK_HEIGHT + 1.8), (0.0, 0.0)])  # post-LN above pre-LN
    fig.update_layout(
        title=dict(text=title, x=0.02),
        template=plots.TEMPLATE, height=600, margin=dict(l=10, r=10, t=70, b=10), font=dict(size=13),
        meta=dict(narrow_layout=dict(
            shapes=[s.to_plotly_json() for s in narrow.layout.shapes],
            annotations=[a.to_plotly_json() for a in narrow.layout.annotations],
            xaxis=narrow.layout.xaxis.to_plotly_json(), yaxis=narrow.layout.yaxis.to_plotly_json(), height=1180,
        )),
    )  # fmt: skip
    return fig


LAYER_NORM_TITLE = "LayerNorm moves one token's vector to mean 0 and stretches it to standard deviation 1"


def _row(name: str, value) -> np.ndarray:
    """``value`` as a finite float vector ``(D,)`` with ``D >= 2``."""
    try:
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"expected {name} to be a numeric vector (D,), got {type(value).__name__}") from None
    if array.ndim != 1 or array.size < 2 or not np.all(np.isfinite(array)):
        raise ValueError(f"expected {name} to be a finite vector (D,) with D >= 2, got shape {array.shape}")
    return array


def layer_norm_numbers(before, after) -> dict[str, np.ndarray]:
    """What :func:`layer_norm_figure` draws: ``before (D,)``, one token's vector, and ``after (D,)``,
    its LayerNorm. Returns ``before, after (D,)`` as float arrays and ``mean, std (2,)``: each
    row's mean and standard deviation (the biased one, over ``D``, as LayerNorm computes it),
    before then after. The figure writes them with 2 decimals and draws them to 4 significant
    digits."""
    before, after = _row("before", before), _row("after", after)
    if after.shape != before.shape:
        raise ValueError(f"expected after of the shape of before {before.shape}, got {after.shape}")
    rows = np.stack([before, after])  # (2, D)
    return dict(before=before, after=after, mean=rows.mean(axis=1), std=rows.std(axis=1))


def layer_norm_figure(before, after, *, token: str, title: str = LAYER_NORM_TITLE) -> go.Figure:
    """One token's vector before LayerNorm and after it, as two bar charts side by side (one above
    the other on a phone).

    ``before (D,)``: the token's vector ``x``; ``after (D,)``: ``LayerNorm(x)`` (with ``γ = 1``,
    ``β = 0`` it has mean 0 and standard deviation 1); ``token``: its name, for the panel title.
    In each panel: the row's mean as a solid line and mean ± one standard deviation as dashed lines,
    each labelled, and one bar per feature hanging from the mean line to its value (``base`` the mean,
    ``y`` the value minus the mean), the value written on it: so the after panel's bars are the before
    panel's, shifted to 0 and stretched, which is what LayerNorm does. The mean and standard deviation
    are in the panel's title, so it reads without colour. Numbers from :func:`layer_norm_numbers`.
    """
    found = layer_norm_numbers(before, after)
    plots.require_text("token", token)
    plots.require_text("title", title)
    D = found["before"].size
    rows = (("before", f"before: x of “{html.escape(token)}”", "x"), ("after", "after: LayerNorm(x)", "x̂"))
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.14, subplot_titles=[
        f"{name}<br>mean {number(m)}, std {number(s)}" for (_, name, _), m, s in zip(rows, found["mean"], found["std"])
    ])  # fmt: skip
    reach = float(np.max(np.abs(np.concatenate([found["before"], found["after"], found["mean"] + found["std"],
                                                found["mean"] - found["std"]]))))  # fmt: skip
    for col, ((key, name, symbol), mean, std) in enumerate(zip(rows, found["mean"], found["std"]), start=1):
        colour = plots.color(0 if key == "before" else 5)
        base = float(plots.significant(mean))  # each bar hangs from the mean line: its height is x - mean
        fig.add_trace(go.Bar(
            x=list(range(D)), y=plots.significant(found[key] - base), base=base, width=0.6, name=name,
            marker=dict(color=colour), text=[number(v) for v in found[key]], textposition="outside",
            textfont=dict(size=12), cliponaxis=False, customdata=plots.significant(found[key]),
            hovertemplate=f"{symbol}[%{{x}}] = %{{customdata:.3f}}<extra></extra>", showlegend=False,
        ), row=1, col=col)  # fmt: skip
        for level, label, dash in (
            (mean + std, "+1 std", "dash"),
            (mean, "mean", "solid"),
            (mean - std, "−1 std", "dash"),
        ):
            level = float(plots.significant(level))
            fig.add_trace(go.Scatter(
                x=[-0.5, D - 0.5], y=[level, level], mode="lines", name=f"{label} ({key})",
                line=dict(color=plots.REFERENCE_COLOR, dash=dash, width=2), hoverinfo="name", showlegend=False,
            ), row=1, col=col)  # fmt: skip
            axis = "" if col == 1 else str(col)
            fig.add_annotation(x=D - 0.45, y=level, xref=f"x{axis}", yref=f"y{axis}", text=label, showarrow=False,
                               xanchor="left", font=dict(size=12))  # fmt: skip
        fig.update_xaxes(range=[-0.6, D + 0.7], tickvals=list(range(D)), ticktext=[f"{symbol}[{j}]" for j in range(D)],
                         zeroline=False, fixedrange=True, row=1, col=col)  # fmt: skip
        fig.update_yaxes(range=[-1.3 * reach, 1.3 * reach], zeroline=False, fixedrange=True,
                         title_text="value" if col == 1 else None, row=1, col=col)  # fmt: skip
    fig.update_layout(
        title=dict(text=title, x=0.02, xanchor="left"),
        template=plots.TEMPLATE,
        height=420,
        margin=dict(l=60, r=20, t=100, b=40),
        font=dict(size=13),
        showlegend=False,
    )
    return fig
