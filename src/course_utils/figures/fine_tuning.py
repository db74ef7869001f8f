"""Lesson 08's mechanism pictures: one pre-trained encoder feeding the task heads, each reading its
own vectors of the last hidden state (:func:`task_heads_figure`); the learning rate of every step of
a fine-tuning run, warm-up then linear decay (:func:`schedule_figure`).
"""

from __future__ import annotations

import plotly.graph_objects as go

from .. import plots
from ..training import linear_warmup_decay
from ..validation import positive_int, positive_number
from . import boxes

__all__ = ["RUNNING_TOKENS", "rate_text", "schedule_figure", "task_heads_figure", "task_heads_texts"]

RUNNING_TOKENS = ("[CLS]", "I", "love", "NLP", "[SEP]")  # the course's running example
MASKED = 3  # the position masked-LM hides in the picture: "NLP"
BUS_PX = 14  # on a phone, the encoder's output runs down the left edge to each head


def rate_text(rate: float) -> str:
    """``0.0005`` -> ``"5e-4"``, ``0.00025`` -> ``"2.5e-4"``: a learning rate as the lessons write it."""
    mantissa, exponent = f"{float(rate):.1e}".split("e")
    return f"{mantissa.removesuffix('.0')}e{int(exponent)}"


def schedule_figure(peak_lr: float, warmup: int, total_steps: int) -> go.Figure:
    """The learning rate of each of a run's ``total_steps`` steps: ``peak_lr`` times
    :func:`course_utils.training.linear_warmup_decay`, a warm-up over the first ``warmup`` steps
    (shaded and labelled), the peak marked, then a straight decay to 0 at ``total_steps``.

    x: training steps ``1 .. total_steps``, y: ``(total_steps,)`` learning rates, the rate step
    ``s`` (counted from 1) is taken with. Raises ``ValueError`` unless ``peak_lr`` is a positive
    number and ``1 <= warmup < total_steps`` are integers.
    """
    peak_lr = positive_number("peak_lr", peak_lr)
    warmup, total = positive_int("warmup", warmup), positive_int("total_steps", total_steps)
    if warmup >= total:
        raise ValueError(f"expected fewer warm-up steps than steps in all, got warmup={warmup}, total_steps={total}")
    steps = list(range(1, total + 1))
    rates = [peak_lr * linear_warmup_decay(s - 1, total, warmup) for s in steps]  # (total_steps,)
    line = plots.color(0)
    fig = go.Figure(go.Scatter(
        x=steps, y=plots.significant(rates), mode="lines", line=dict(color=line, width=3), name="learning rate",
        hovertemplate="step %{x}: learning rate %{y:.2g}<extra></extra>",
    ))  # fmt: skip
    fig.add_vrect(x0=0, x1=warmup, fillcolor=plots.REFERENCE_COLOR, opacity=0.18, line_width=0)
    peak = rate_text(peak_lr)
    fig.add_trace(go.Scatter(
        x=[warmup, total], y=plots.significant([peak_lr, rates[-1]]), mode="markers", showlegend=False,
        marker=dict(symbol=["diamond", "square"], size=11, color=line, line=dict(color="black", width=1)),
        hovertext=[f"peak {peak} at step {warmup}", f"last step, {total:,}"], hoverinfo="text",
    ))  # fmt: skip
    fig.add_shape(type="line", x0=total, x1=total, y0=0, y1=1.2 * peak_lr, line=dict(color=plots.REFERENCE_COLOR,
                  width=1.5, dash="dot"))  # fmt: skip
    notes = [  # (x, y as a share of the peak, text, x anchor): each clear of the line, at a phone's width too
        (warmup, 1.0, f" <b>peak {peak}</b> at step {warmup}", "left"),
        (warmup, 0.06, f" ← warm-up: steps 1 to {warmup}", "left"),
        (total, 1.2, f"<b>{total:,} steps</b>: the last one's rate ≈ 0 ", "right"),
    ]
    for x, share, text, anchor in notes:
        fig.add_annotation(x=x, y=share * peak_lr, text=text, showarrow=False, xanchor=anchor, yanchor="bottom",
                           yshift=4, font=dict(size=12))  # fmt: skip
    fig.update_xaxes(title_text="training step", range=[0, total * 1.02], rangemode="tozero")
    fig.update_yaxes(title_text="learning rate", range=[0, peak_lr * 1.35], exponentformat="power")
    fig.update_layout(
        title=dict(text=f"The learning rate of each step: {warmup} steps up to {peak}, then down to 0", x=0.02,
                   xanchor="left"),
        template=plots.TEMPLATE, height=360, margin=dict(l=70, r=20, t=60, b=55), font=dict(size=13),
        showlegend=False,
    )  # fmt: skip
    return fig


def _config_sizes(config) -> tuple[int, int, int]:
    names = ("dim", "n_layers", "vocab_size")
    values = [getattr(config, name, None) for name in names]
    if any(isinstance(v, bool) or not isinstance(v, int) or v < 1 for v in values):
        raise TypeError(f"expected a DistilBertConfig (dim, n_layers, vocab_size: positive integers), "
                        f"got {type(config).__name__}")  # fmt: skip
    return tuple(values)


def _tokens_line(read: set[int]) -> str:
    """The running example's tokens, those read in bold, the others a dot."""
    return " ".join(f"<b>{t}</b>" if i in read else "·" for i, t in enumerate(RUNNING_TOKENS))


def task_heads_texts(config, n_labels: int, n_tags: int) -> list[str]:
    """The boxes of :func:`task_heads_figure`: the shared encoder, then the sequence-classification,
    token-classification and masked-LM heads."""
    D, L, V = _config_sizes(config)
    C, K = positive_int("n_labels", n_labels), positive_int("n_tags", n_tags)
    T = len(RUNNING_TOKENS)
    encoder = (
        f"<b>shared encoder</b>: DistilBERT, {L} blocks<br>input_ids (B, T) → last_hidden_state<br>"
        f"(B, T, {D}): one vector h[:, t] per token<br>{' '.join(RUNNING_TOKENS)}"
    )
    sequence = (
        f"<b>sequence classif.</b><br>reads h[:, 0], [CLS]:<br>{_tokens_line({0})}<br>(B, {D})<br>"
        f"pre_classifier {D} → {D}<br>ReLU, classifier {D} → {C}<br>logits (B, {C})"
    )
    token = (
        f"<b>token classif.</b><br>reads every h[:, t]:<br>{_tokens_line(set(range(T)))}<br>(B, T, {D})<br>"
        f"classifier {D} → {K}<br>logits (B, T, {K})"
    )
    masked = (
        f"<b>masked LM</b><br>its loss reads [MASK]:<br>{_tokens_line({MASKED}).replace(RUNNING_TOKENS[MASKED], '[MASK]')}"
        f"<br>(B, T, {D}), labels −100<br>elsewhere<br>vocab_transform {D} → {D}<br>GELU, LayerNorm<br>"
        f"vocab_projector {D} → {V}<br>logits (B, T, {V})"
    )
    return [encoder, sequence, token, masked]


def _bus(layout: dict, texts: list[str]) -> list[dict]:
    """Arrows for the phone's one column: down the left edge from the encoder (box 0), then right
    into each head (boxes 1 ..)."""
    notes = [a for a in layout["annotations"] if not a.get("showarrow")]  # the boxes, in order
    placed = []
    for note, text in zip(notes, texts):
        width, height = boxes.box_size(text)
        placed.append((note["x"] - width / 2, note["y"], height))
    if min(left for left, _, _ in placed[1:]) < 2 * BUS_PX:
        raise ValueError("expected the heads' boxes to leave room for the arrows on their left")  # pragma: no cover
    grey = dict(xref="x", yref="y", axref="x", ayref="y", text="", showarrow=True, arrowwidth=2,
                arrowcolor=boxes.ARROW_COLOR)  # fmt: skip
    _, top0, height0 = placed[0]
    levels = [top + 1.5 * boxes.LINE_PX + boxes.BOX_PAD_PX for _, top, _ in placed[1:]]
    arrows = [dict(x=BUS_PX, y=levels[-1], ax=BUS_PX, ay=top0 + height0 + 4, arrowhead=0, **grey)]
    arrows += [dict(x=left - 6, y=y, ax=BUS_PX, ay=y, arrowhead=2, arrowsize=1.1, **grey)
               for (left, _, _), y in zip(placed[1:], levels)]  # fmt: skip
    return arrows


def task_heads_figure(config, n_labels: int = 2, n_tags: int = 12) -> go.Figure:
    """One pre-trained encoder, three task heads, each reading its own vectors of the last hidden
    state ``(B, T, D)``: sequence classification the ``[CLS]`` vector ``(B, D)`` (→ logits ``(B,
    n_labels)``), token classification every vector (→ ``(B, T, n_tags)``), masked LM every vector
    too, its loss only at the ``[MASK]`` positions (→ ``(B, T, vocab_size)``). The running example's
    tokens show which positions each head reads (bold; a dot: not read), so it reads without
    colour. Layer sizes, in ``nn.Linear``'s order in → out, are those of ``config`` (a
    ``transformers.DistilBertConfig``: ``dim``, ``n_layers``, ``vocab_size``).

    On a laptop the heads sit side by side under the encoder; on a phone, one column, the encoder's
    output running down the left edge into each head.
    """
    texts = task_heads_texts(config, n_labels, n_tags)
    title = "One encoder, three heads: each head reads its own vectors of the last hidden state"
    fig = boxes.box_diagram(texts, title=title, wide_rows=[[0], [1, 2, 3]], edges=[(0, 1), (0, 2), (0, 3)],
                            narrow_edges=[])  # fmt: skip
    narrow = dict(fig.layout.meta["narrow_layout"])
    narrow["annotations"] = list(narrow["annotations"]) + _bus(narrow, texts)
    fig.update_layout(meta=dict(narrow_layout=narrow))
    return fig
