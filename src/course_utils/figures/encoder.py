"""Lesson 06's diagrams: one post-LN encoder block as a residual stream with its two sub-layers
(:func:`block_figure`); DistilBERT-base stage by stage, with the shape after each stage, and what
BERT-base has in addition (:func:`architecture_figure`)."""

from __future__ import annotations

import plotly.graph_objects as go

from .. import plots
from ..encoder import EncoderConfig

__all__ = ["architecture_figure", "block_figure"]

TITLE = "DistilBERT-base, stage by stage (and what BERT-base adds)"
BLOCK_TITLE = "One post-LN encoder block: each sub-layer's output is added to the residual stream, then normalised"


def _box(fig: go.Figure, x0: float, x1: float, y: float, text: str, colour: str, dash: str = "solid",
         height: float = 0.8) -> None:
    fig.add_shape(
        type="rect", x0=x0, x1=x1, y0=y - height / 2, y1=y + height / 2,
        line=dict(color=colour, width=2, dash=dash), fillcolor="white",
    )
    fig.add_annotation(x=(x0 + x1) / 2, y=y, text=text, showarrow=False, font=dict(size=13))


def _arrow(fig: go.Figure, x: float, y_from: float, y_to: float) -> None:
    fig.add_annotation(
        x=x, y=y_to, ax=x, ay=y_from, xref="x", yref="y", axref="x", ayref="y",
        text="", showarrow=True, arrowhead=2, arrowwidth=1.5, arrowcolor="grey",
    )


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
        type="rect", x0=0.2, x1=5.75, y0=4.55, y1=9.65,
        line=dict(color=plots.color(0), width=2), fillcolor="rgba(0, 114, 178, 0.07)",
    )
    fig.add_annotation(
        x=0.3, y=9.45, text=f"<b>transformer block × {N}</b>", showarrow=False,
        xanchor="left", font=dict(color=plots.color(0), size=13),
    )
    for (y, text, shape), below in zip(stages, [s[0] for s in stages[1:]] + [None]):
        _box(fig, 0.5, 5.5, y, text, "black")
        fig.add_annotation(
            x=5.85, y=y, text=shape, showarrow=False, xanchor="left", align="left",
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
        x=11.0, y=13.0, text="<b>BERT-base has, in addition</b>", showarrow=False,
        font=dict(color=bert_colour, size=13),
    )
    fig.update_xaxes(visible=False, range=[0, 13.6])
    fig.update_yaxes(visible=False, range=[3.0, 13.5])
    fig.update_layout(
        title=dict(text=title, x=0.02),
        template=plots.TEMPLATE, height=640, margin=dict(l=10, r=10, t=60, b=10),
    )
    return fig


def _line(fig: go.Figure, points: list[tuple[float, float]], colour: str, width: float = 2, dash: str = "solid") -> None:
    """A polyline through ``points``, drawn as shapes (so the site treats the figure as a diagram)."""
    for (x0, y0), (x1, y1) in zip(points, points[1:]):
        fig.add_shape(type="line", x0=x0, y0=y0, x1=x1, y1=y1, line=dict(color=colour, width=width, dash=dash))


def _arrowhead(fig: go.Figure, x_from: float, y_from: float, x_to: float, y_to: float, colour: str) -> None:
    fig.add_annotation(
        x=x_to, y=y_to, ax=x_from, ay=y_from, xref="x", yref="y", axref="x", ayref="y",
        text="", showarrow=True, arrowhead=2, arrowwidth=2, arrowcolor=colour,
    )


def block_figure(config: EncoderConfig, *, title: str = BLOCK_TITLE) -> go.Figure:
    """One post-LN encoder block of ``config`` (a :class:`course_utils.encoder.EncoderConfig`), top to bottom.

    The residual stream runs down the left, from the block's input ``x (T, D)`` to its output. It
    branches twice: into multi-head self-attention, then into the feed-forward network, each drawn
    with the sizes of ``config``; each branch comes back to a ``+`` on the stream (the residual
    connection), followed by a LayerNorm on the stream itself (post-LN, as in BERT and DistilBERT).
    Text and line styles carry the meaning (the residual path is thick, the branches thin), so it
    reads without colour; on a narrow screen it is drawn at the screen's width.
    """
    if not isinstance(config, EncoderConfig):
        raise TypeError(f"expected an EncoderConfig, got {type(config).__name__}")
    D, H, Fd = config.dim, config.n_heads, config.hidden_dim
    # the branches' grey keeps 3:1 against a white page and against the site's dark background
    stream, branch = plots.color(0), "#888888"
    sx, bx0, bx1 = 2.0, 4.6, 9.8  # the stream's x; a sub-layer box's left and right edges
    bmid = (bx0 + bx1) / 2
    fig = go.Figure()
    # the residual stream, thick, from the input to the output
    _line(fig, [(sx, 11.55), (sx, 0.95)], stream, width=5)
    _arrowhead(fig, sx, 1.4, sx, 0.75, stream)
    fig.add_annotation(x=sx - 0.3, y=9.0, text="residual<br>path", showarrow=False, xanchor="right",
                       font=dict(size=12, color=stream))
    for top, text in ((10.3, f"multi-head self-attention<br>{H} heads of {D // H}"),
                      (5.8, f"feed-forward network<br>{D} → {Fd}, GELU, → {D}")):
        box_y, plus_y, norm_y = top - 1.2, top - 2.4, top - 3.3
        _line(fig, [(sx, top), (bmid, top), (bmid, box_y + 0.6)], branch)  # the branch leaves the stream
        _arrowhead(fig, bmid, box_y + 0.9, bmid, box_y + 0.5, branch)
        _box(fig, bx0, bx1, box_y, text, branch, height=0.9)
        _line(fig, [(bmid, box_y - 0.45), (bmid, plus_y), (sx + 0.45, plus_y)], branch)  # ... and comes back
        _arrowhead(fig, sx + 0.9, plus_y, sx + 0.35, plus_y, branch)
        fig.add_shape(type="circle", x0=sx - 0.35, x1=sx + 0.35, y0=plus_y - 0.3, y1=plus_y + 0.3,
                      line=dict(color=stream, width=2), fillcolor="white")
        fig.add_annotation(x=sx, y=plus_y, text="<b>+</b>", showarrow=False, font=dict(size=16))
        _box(fig, sx - 1.7, sx + 1.7, norm_y, "LayerNorm", stream, height=0.6)
        fig.add_annotation(x=sx + 1.9, y=norm_y, text=f"add & norm: (T, {D})", showarrow=False,
                           xanchor="left", font=dict(size=12))
    _box(fig, sx - 1.7, sx + 1.7, 11.9, f"x: (T, {D})", stream, height=0.6)
    fig.add_annotation(x=sx + 1.9, y=11.9, text="one vector per token", showarrow=False, xanchor="left",
                       font=dict(size=12))
    fig.add_annotation(x=sx, y=0.45, text=f"output (T, {D}): the next block's x", showarrow=False,
                       xanchor="left", xshift=-40, font=dict(size=12))
    fig.update_xaxes(visible=False, range=[-0.2, 10.0])
    fig.update_yaxes(visible=False, range=[0.1, 12.4])
    fig.update_layout(
        title=dict(text=title, x=0.02),
        template=plots.TEMPLATE, height=560, margin=dict(l=10, r=10, t=70, b=10), font=dict(size=13),
        meta=dict(narrow_layout=dict(height=560)),  # drawn at the screen's width on a phone
    )
    return fig
