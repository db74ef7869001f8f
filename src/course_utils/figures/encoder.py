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
from .boxes import number

__all__ = ["architecture_figure", "block_figure", "layer_norm_figure", "layer_norm_numbers", "post_pre_ln_figure"]

TITLE = "DistilBERT-base, stage by stage (and what BERT-base adds)"
BLOCK_TITLE = "One post-LN encoder block: each sub-layer's output is added to the residual stream, then normalised"
PRE_LN_TITLE = "One pre-LN encoder block: each sub-layer's input is normalised, the residual stream is not"
POST_PRE_TITLE = "Where the LayerNorm sits: on the residual stream after each + (post-LN), or on each branch (pre-LN)"


def _box(
    fig: go.Figure, x0: float, x1: float, y: float, text: str, colour: str, dash: str = "solid", height: float = 0.8
) -> None:
    fig.add_shape(
        type="rect",
        x0=x0,
        x1=x1,
        y0=y - height / 2,
        y1=y + height / 2,
        line=dict(color=colour, width=2, dash=dash),
        fillcolor="white",
    )
    fig.add_annotation(x=(x0 + x1) / 2, y=y, text=text, showarrow=False, font=dict(size=13))


def _arrow(fig: go.Figure, x: float, y_from: float, y_to: float) -> None:
    _arrowhead(fig, x, y_from, x, y_to, "grey", width=1.5)


def architecture_figure(config: EncoderConfig, bert_config, *, title: str = TITLE) -> go.Figure:
    """DistilBERT's encoder as boxes from ``input_ids`` to ``last_hidden_state``, the shape after
    each stage on their right, the repeated block framed; on the far right, in dashed boxes, what a
    BERT of ``bert_config`` (a ``transformers.BertConfig``) adds: token-type embeddings, more
    blocks, the pooler. ``config``: a :class:`course_utils.encoder.EncoderConfig`."""
    if not isinstance(config, EncoderConfig):
        raise TypeError(f"expected an EncoderConfig, got {type(config).__name__}")
    if not all(hasattr(bert_config, name) for name in ("type_vocab_size", "num_hidden_layers")):
        raise TypeError(f"expected a transformers BertConfig, got {type(bert_config).__name__}")
    V, P, Dm, H = config.vocab_size, config.max_position_embeddings, config.dim, config.n_heads
    Fd, N = config.hidden_dim, config.n_layers
    stages = [  # (y, text in the box, shape after it)
        (13.0, "input_ids: token ids of a batch", "(B, T)"),
        (11.6, f"word embeddings {V:,} × {Dm}<br>+ position embeddings {P} × {Dm}", f"(B, T, {Dm})"),
        (10.4, "LayerNorm (eps 1e-12), dropout", f"(B, T, {Dm})"),
        (8.9, f"multi-head self-attention: {H} heads × {Dm // H}", f"(B, T, {Dm})<br>weights (B, {H}, T, T)"),
        (7.7, "add & LayerNorm  (sa_layer_norm)", f"(B, T, {Dm})"),
        (6.5, f"feed-forward: {Dm} → {Fd}, GELU, → {Dm}", f"(B, T, {Fd}) inside"),
        (5.3, "add & LayerNorm  (output_layer_norm)", f"(B, T, {Dm})"),
        (3.6, "last_hidden_state: one vector per token", f"(B, T, {Dm})"),
    ]
    fig = go.Figure()
    fig.add_shape(  # the repeated block
        type="rect",
        x0=0.2,
        x1=5.75,
        y0=4.55,
        y1=9.65,
        line=dict(color=plots.color(0), width=2),
        fillcolor="rgba(0, 114, 178, 0.07)",
    )
    fig.add_annotation(
        x=0.3,
        y=9.45,
        text=f"<b>transformer block × {N}</b>",
        showarrow=False,
        xanchor="left",
        font=dict(color=plots.color(0), size=13),
    )
    for (y, text, shape), below in zip(stages, [s[0] for s in stages[1:]] + [None]):
        _box(fig, 0.5, 5.5, y, text, "black")
        fig.add_annotation(
            x=5.85,
            y=y,
            text=shape,
            showarrow=False,
            xanchor="left",
            align="left",
            font=dict(family="monospace", size=12),
        )
        if below is not None:
            _arrow(fig, 3.0, y - 0.4, below + 0.4)
    bert_colour = plots.color(5)
    extras = [
        (11.6, f"+ token-type embeddings {bert_config.type_vocab_size} × {Dm}"),
        (7.1, f"× {bert_config.num_hidden_layers} blocks, not {N}"),
        (3.6, f"+ pooler on [CLS]: {Dm} × {Dm} + tanh<br>→ (B, {Dm})"),
    ]
    for y, text in extras:
        _box(fig, 8.6, 13.4, y, text, bert_colour, dash="dash")
    fig.add_annotation(
        x=11.0,
        y=13.0,
        text="<b>BERT-base has, in addition</b>",
        showarrow=False,
        font=dict(color=bert_colour, size=13),
    )
    fig.update_xaxes(visible=False, range=[0, 13.6])
    fig.update_yaxes(visible=False, range=[3.0, 13.5])
    fig.update_layout(
        title=dict(text=title, x=0.02),
        template=plots.TEMPLATE,
        height=640,
        margin=dict(l=10, r=10, t=60, b=10),
    )
    return fig


def _line(
    fig: go.Figure, points: list[tuple[float, float]], colour: str, width: float = 2, dash: str = "solid"
) -> None:
    """A polyline through ``points``, drawn as shapes (so the site treats the figure as a diagram)."""
    for (x0, y0), (x1, y1) in zip(points, points[1:]):
        fig.add_shape(type="line", x0=x0, y0=y0, x1=x1, y1=y1, line=dict(color=colour, width=width, dash=dash))


def _arrowhead(
    fig: go.Figure, x_from: float, y_from: float, x_to: float, y_to: float, colour: str, width: float = 2
) -> None:
    fig.add_annotation(
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
            _box(fig, bmid - 1.7, bmid + 1.7, norm_y, "LayerNorm", stream, height=0.6)
            _arrowhead(fig, bmid, norm_y - 0.3, bmid, box_y + 0.5, branch)
        else:
            _arrowhead(fig, bmid, box_y + 0.9, bmid, box_y + 0.5, branch)
        _box(fig, bx0, bx1, box_y, text, branch, height=0.9)
        _line(fig, [(bmid, box_y - 0.45), (bmid, plus_y), (sx + 0.45, plus_y)], branch)  # ... and comes back
        _arrowhead(fig, sx + 0.9, plus_y, sx + 0.35, plus_y, branch)
        fig.add_shape(type="circle", x0=sx - 0.35, x1=sx + 0.35, y0=plus_y - 0.3, y1=plus_y + 0.3,
                      line=dict(color=stream, width=2), fillcolor="white")  # fmt: skip
        fig.add_annotation(x=sx, y=plus_y, text="<b>+</b>", showarrow=False, font=dict(size=16))
        if arrangement == "post-LN":  # the LayerNorm on the stream, after the sum
            _box(fig, sx - 1.7, sx + 1.7, top - 3.85, "LayerNorm", stream, height=0.6)
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
