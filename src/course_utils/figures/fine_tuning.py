"""Lesson 08's mechanism pictures: one pre-trained encoder feeding the task heads, each reading its
own vectors of the last hidden state (:func:`task_heads_figure`); the learning rate of every step of
a fine-tuning run, warm-up then linear decay (:func:`schedule_figure`); feature extraction on a
frozen encoder beside fine-tuning, where the gradient reaches and how many parameters each trains
(:func:`frozen_vs_fine_tuned_figure`); the ``[CLS]`` vectors of test sentences before and after
fine-tuning, projected to two dimensions and coloured by label (:func:`cls_projection_figure`).
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from .. import plots
from ..training import linear_warmup_decay
from ..validation import positive_int, positive_number
from . import boxes

__all__ = [
    "RUNNING_TOKENS",
    "cls_projection_figure",
    "principal_plane",
    "frozen_vs_fine_tuned_figure",
    "frozen_vs_fine_tuned_texts",
    "rate_text",
    "schedule_figure",
    "task_heads_figure",
    "task_heads_texts",
]

RUNNING_TOKENS = ("[CLS]", "I", "love", "NLP", "[SEP]")  # the course's running example
MASKED = 3  # the position masked-LM hides in the picture: "NLP"
BUS_PX = 14  # on a phone, the encoder's output runs down the left edge to each head
GRADIENT_COLOR = plots.color(5)  # vermillion: the gradient's arrows (their direction and label say it too)
GRADIENT_DX = 48  # a gradient's arrow runs up this far right of the forward arrow's centre line
HATCH = "░░"  # the frozen encoder's hatching, in its text
# The boxes' outlines: the frozen encoder grey, then one colour a role in both panels (encoder,
# vector, head, loss), none of them the gradient's
PANEL_COLORS = (plots.REFERENCE_COLOR, plots.color(4), plots.color(2), plots.color(3),
                plots.color(0), plots.color(4), plots.color(2), plots.color(3))  # fmt: skip


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


def _placed(layout: dict, texts: list[str]) -> list[tuple[float, float, float, float]]:
    """Each box of a :func:`boxes.rows_layout` layout as (left, top, width, height), in pixels."""
    notes = [a for a in layout["annotations"] if not a.get("showarrow")]  # the boxes, in order
    placed = []
    for note, text in zip(notes, texts):
        width, height = boxes.box_size(text)
        placed.append((note["x"] - width / 2, note["y"], width, height))
    return placed


def _bus(layout: dict, texts: list[str]) -> list[dict]:
    """Arrows for the phone's one column: down the left edge from the encoder (box 0), then right
    into each head (boxes 1 ..)."""
    placed = _placed(layout, texts)
    if min(left for left, *_ in placed[1:]) < 2 * BUS_PX:
        raise ValueError("expected the heads' boxes to leave room for the arrows on their left")  # pragma: no cover
    grey = dict(xref="x", yref="y", axref="x", ayref="y", text="", showarrow=True, arrowwidth=2,
                arrowcolor=boxes.ARROW_COLOR)  # fmt: skip
    _, top0, _, height0 = placed[0]
    levels = [top + 1.5 * boxes.LINE_PX + boxes.BOX_PAD_PX for _, top, _, _ in placed[1:]]
    arrows = [dict(x=BUS_PX, y=levels[-1], ax=BUS_PX, ay=top0 + height0 + 4, arrowhead=0, **grey)]
    arrows += [dict(x=left - 6, y=y, ax=BUS_PX, ay=y, arrowhead=2, arrowsize=1.1, **grey)
               for (left, *_), y in zip(placed[1:], levels)]  # fmt: skip
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


def _padded(texts: list[str]) -> list[str]:
    """``texts`` with each first line padded (no-break spaces) to the widest box's width, so that
    boxes side by side line up in columns."""
    width = max(boxes.box_size(text)[0] for text in texts)
    out = []
    for text in texts:
        first, _, rest = text.partition("<br>")
        missing = int(round((width - boxes.box_size(first)[0]) / boxes.CHAR_PX))
        out.append(first + "\u00a0" * missing + ("<br>" + rest if rest else ""))
    return out


def _trained_counts(config, fine_tuned_parameters: int, n_labels: int) -> tuple[int, int, int, int, int]:
    """``(D, n_layers, regression, encoder, total)``: the parameters of the logistic regression
    ``nn.Linear(D, n_labels)``, of the encoder (the classifier's ``total`` less its head's) and of
    the whole classifier."""
    D, L, _ = _config_sizes(config)
    C = positive_int("n_labels", n_labels)
    total = positive_int("fine_tuned_parameters", fine_tuned_parameters)
    regression = D * C + C  # nn.Linear(D, C): weight (C, D), bias (C,)
    head = D * D + D + regression  # pre_classifier (D, D) + (D,), classifier (C, D) + (C,)
    if total <= head:
        raise ValueError(f"expected fine_tuned_parameters, the whole classifier's count, to exceed its head's "
                         f"{head:,} (dim={D}, n_labels={C}), got {total:,}")  # fmt: skip
    return D, L, regression, total - head, total


def frozen_vs_fine_tuned_texts(config, fine_tuned_parameters: int, n_labels: int = 2) -> list[str]:
    """The boxes of :func:`frozen_vs_fine_tuned_figure`, top to bottom: feature extraction's
    encoder, features, logistic regression and loss (0 .. 3), then fine-tuning's encoder, ``[CLS]``
    vector, classification head and loss (4 .. 7); each loss box states the parameters trained.
    Their first lines are padded, so that all eight boxes have one width.
    """
    D, L, regression, encoder, total = _trained_counts(config, fine_tuned_parameters, n_labels)
    C = n_labels
    texts = [
        f"<b>FEATURE EXTRACTION</b><br>{HATCH} encoder FROZEN: no gradient {HATCH}<br>"
        f"DistilBERT, {L} blocks, {encoder:,} parameters<br>run once per sentence, never changed",
        f"<b>features</b>: one vector a sentence,<br>[CLS] h[:, 0] or the mean of h[:, t]<br>"
        f"(N, {D}): D = {D} numbers, stored",
        f"<b>logistic regression</b>: trained<br>Linear {D} → {C}, logits (N, {C})<br>"
        f"{D} × {C} + {C} = {regression:,} parameters",
        f"cross-entropy with the labels<br><b>trained: {regression:,} parameters</b><br>"
        f"the gradient stops at the regression",
        f"<b>FINE-TUNING</b><br>encoder TRAINED: every weight moves<br>"
        f"DistilBERT, {L} blocks, {encoder:,} parameters<br>run again at every step",
        f"[CLS] vector h[:, 0]: (B, {D}),<br>recomputed by the changing encoder<br>at every step",
        f"<b>classification head</b>: trained<br>pre_classifier {D} → {D}, ReLU<br>"
        f"classifier {D} → {C}, logits (B, {C})",
        f"cross-entropy with the labels<br><b>trained: {total:,} parameters</b><br>the gradient reaches every layer",
    ]
    return _padded(texts)


def _gradient_marks(
    layout: dict, texts: list[str], reached: list[tuple[int, int]], stopped: list[tuple[int, int]]
) -> list[dict]:
    """In the gap under each box ``i`` of ``(i, j)`` (box ``j`` below it): an upward gradient
    arrow labelled "gradient" for ``reached``, the words "no gradient" for ``stopped``."""
    placed = _placed(layout, texts)
    label_height = boxes.box_size("no gradient")[1]
    marks = []
    for pairs, word in ((reached, "gradient"), (stopped, "no gradient")):
        for i, j in pairs:
            left, top, width, height = placed[i]
            x, bottom, below = left + width / 2 + GRADIENT_DX, top + height, placed[j][1]
            if word == "gradient":
                marks.append(dict(
                    x=x, y=bottom + 4, ax=x, ay=below - 4, xref="x", yref="y", axref="x", ayref="y", text="",
                    showarrow=True, arrowhead=3, arrowsize=1.2, arrowwidth=2.5, arrowcolor=GRADIENT_COLOR,
                ))  # fmt: skip
            marks.append(dict(  # left-anchored: on a wider screen it stays beside its arrow
                x=x + 6, y=(bottom + below - label_height) / 2, xref="x", yref="y", text=f"<i>{word}</i>",
                showarrow=False, xanchor="left", yanchor="top", align="left", font=boxes.BOX_FONT,
            ))  # fmt: skip
    return marks


def frozen_vs_fine_tuned_figure(config, fine_tuned_parameters: int, n_labels: int = 2) -> go.Figure:
    """Feature extraction beside fine-tuning, each drawn as the path of one batch, top to bottom
    (forward: grey arrows down), and where the gradient of the loss goes (upward arrows labelled
    "gradient", in vermillion).

    Left, feature extraction: the encoder frozen (grey, hatched ``░░``, "FROZEN: no gradient"),
    run once per sentence to give its features ``(N, D)`` (the ``[CLS]`` vector or the mean of the
    token vectors), which train a logistic regression ``nn.Linear(D, n_labels)``: the gradient
    stops at it, and it is all that is trained, ``D * n_labels + n_labels`` parameters. Right,
    fine-tuning: the same encoder, run at every step, its ``[CLS]`` vector ``(B, D)`` read by
    ``DistilBertForSequenceClassification``'s head; the gradient reaches every layer, and all
    ``fine_tuned_parameters`` are trained (the classifier's count, e.g.
    ``costs.parameter_count(model)``; the encoder's, drawn on both sides, is that less the head's).
    ``config``: a ``transformers.DistilBertConfig`` (``dim`` = D, ``n_layers``).

    On a laptop the two sit side by side; on a phone, one column, feature extraction first.
    Raises ``TypeError`` unless ``config`` is a DistilBERT config, ``ValueError`` for a count
    that is not a positive integer or no larger than the head's.
    """
    texts = frozen_vs_fine_tuned_texts(config, fine_tuned_parameters, n_labels)
    _, _, regression, _, total = _trained_counts(config, fine_tuned_parameters, n_labels)
    title = (f"Feature extraction trains {regression:,} parameters on a frozen encoder's vectors; "
             f"fine-tuning trains all {total:,}")  # fmt: skip
    forward = [(0, 1), (1, 2), (2, 3), (4, 5), (5, 6), (6, 7)]
    fig = boxes.box_diagram(texts, title=title, wide_rows=[[0, 4], [1, 5], [2, 6], [3, 7]], edges=forward)
    reached, stopped = [(2, 3), (4, 5), (5, 6), (6, 7)], [(0, 1), (1, 2)]
    layouts = {"wide": fig.layout.to_plotly_json(), "narrow": dict(fig.layout.meta["narrow_layout"])}
    for layout in layouts.values():
        notes = [dict(note, bordercolor=color) for note, color in zip(layout["annotations"], PANEL_COLORS)]
        layout["annotations"] = notes + list(layout["annotations"][len(texts) :])
        layout["annotations"] += _gradient_marks(layout, texts, reached, stopped)
    fig.layout.annotations = layouts["wide"]["annotations"]
    fig.update_layout(meta=dict(narrow_layout=layouts["narrow"]))
    return fig


def principal_plane(vectors) -> np.ndarray:
    """``(N, 2)``: ``vectors (N, D)`` centred and projected on their two directions of largest
    variance (principal component analysis, by the SVD), the first column the largest. A direction's
    sign is arbitrary (the last bits of another processor's kernels can flip it), so each column is
    signed to make its largest coordinate positive, as scikit-learn's ``svd_flip`` does."""
    x = np.asarray(vectors, dtype=float)
    if x.ndim != 2 or x.shape[0] < 3 or x.shape[1] < 2 or not np.isfinite(x).all():
        raise ValueError(f"expected finite vectors of shape (N, D) with N >= 3 and D >= 2, got {x.shape}")
    centred = x - x.mean(axis=0)
    _, _, directions = np.linalg.svd(centred, full_matrices=False)
    projected = centred @ directions[:2].T  # (N, 2)
    largest = projected[np.abs(projected).argmax(axis=0), [0, 1]]
    return projected * np.sign(largest)


def cls_projection_figure(panels: dict, labels, *, label_names=("negative", "positive"), title: str) -> go.Figure:
    """Each of ``panels`` (``{name: (N, D) [CLS] vectors}``, the frozen student's and the fine-tuned
    one's) projected on its own principal plane (:func:`principal_plane`), side by side, every
    sentence a point coloured (and shaped) by its label ``(N,)`` of 0 and 1: a classifier that reads
    ``[CLS]`` linearly needs the two colours apart."""
    from plotly.subplots import make_subplots

    plots.require_text("title", title)
    labels = np.asarray(labels)
    if not panels or labels.ndim != 1 or not np.isin(labels, (0, 1)).all():
        raise ValueError(f"expected panels and one label 0 or 1 per sentence, got labels of shape {labels.shape}")
    names = list(panels)
    fig = make_subplots(rows=1, cols=len(names), subplot_titles=names, horizontal_spacing=0.08)
    for col, name in enumerate(names, start=1):
        if np.asarray(panels[name]).shape[0] != labels.size:
            raise ValueError(f"expected one vector per label ({labels.size}) in {name!r}, got {np.shape(panels[name])}")
        plane = principal_plane(panels[name])
        for label, symbol in ((0, "x-thin-open"), (1, "circle-open")):
            chosen = labels == label
            fig.add_trace(go.Scatter(x=plots.significant(plane[chosen, 0]), y=plots.significant(plane[chosen, 1]),
                                     mode="markers", name=label_names[label], legendgroup=str(label),
                                     showlegend=col == 1,
                                     marker=dict(symbol=symbol, size=6, color=plots.color(5 if label == 0 else 0),
                                                 line=dict(width=1.5, color=plots.color(5 if label == 0 else 0))),
                                     hovertemplate=f"{label_names[label]}<extra></extra>"), row=1, col=col)
        fig.update_xaxes(showticklabels=False, title_text="first direction", row=1, col=col)
        fig.update_yaxes(showticklabels=False, title_text="second direction" if col == 1 else "", row=1, col=col)
    fig.update_layout(title=dict(text=title, x=0.02, xanchor="left"), template=plots.TEMPLATE, height=440,
                      font=dict(size=12), margin=dict(l=40, r=20, t=90, b=50),
                      legend=dict(orientation="h", yanchor="bottom", y=1.06, xanchor="right", x=1))
    return fig
