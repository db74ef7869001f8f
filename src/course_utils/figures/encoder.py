"""Lesson 06's diagram: DistilBERT-base stage by stage, with the shape after each stage, and what
BERT-base has in addition."""

from __future__ import annotations

import plotly.graph_objects as go

from .. import plots
from ..encoder import EncoderConfig

__all__ = ["architecture_figure"]

TITLE = "DistilBERT-base, stage by stage (and what BERT-base adds)"


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
