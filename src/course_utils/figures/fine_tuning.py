"""Lesson 08's mechanism pictures: one pre-trained encoder feeding the task heads, each reading its
own vectors of the last hidden state (:func:`task_heads_figure`); the learning rate of every step of
a fine-tuning run, warm-up then linear decay (:func:`schedule_figure`); feature extraction on a
frozen encoder beside fine-tuning, where the gradient reaches and how many parameters each trains
(:func:`frozen_vs_fine_tuned_figure`); the ``[CLS]`` vectors of test sentences before and after
fine-tuning, projected to two dimensions and coloured by label (:func:`cls_projection_figure`);
each kind of sentence's accuracy while fine-tuning, from step 0, with every run of one kind
(:func:`kind_curves_figure`); word labels aligned to WordPiece pieces (:func:`label_alignment_figure`);
accuracy against the peak learning rate, every run at the recipe's rate (:func:`rate_sweep_figure`).
"""

from __future__ import annotations

import html

import numpy as np
import plotly.graph_objects as go

from .. import plots
from ..training import linear_warmup_decay
from ..validation import positive_int, positive_number
from . import boxes
from .canvas import NARROW_DESIGN_PX, WIDE_DESIGN_PX, Canvas, canvas_figure, text_width

__all__ = [
    "RUNNING_TOKENS",
    "cls_projection_figure",
    "principal_plane",
    "frozen_vs_fine_tuned_figure",
    "frozen_vs_fine_tuned_texts",
    "kind_curves_figure",
    "label_alignment_figure",
    "rate_sweep_figure",
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
# the frozen encoder's box filled grey, its text black: dark enough that the site's dark mode keeps
# both (it repaints only near-white boxes), light enough for black text on either page
FROZEN_FILL = "#c4c4c4"
FROZEN_INK = "#000000"
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
    # the last step's marker whole inside the plot; the axes' two zeros apart at the origin (a phone)
    fig.update_xaxes(title_text="training step", range=[-0.03 * total, total * 1.04])
    fig.update_yaxes(title_text="learning rate", range=[-0.06 * peak_lr, peak_lr * 1.35], exponentformat="power")
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
    """Arrows for the phone's one column: down from the encoder's bottom edge (box 0), near its
    left end, then right into each head (boxes 1 ..)."""
    placed = _placed(layout, texts)
    left0, top0, _, height0 = placed[0]
    bus = left0 + BUS_PX  # inside the encoder's bottom edge: the trunk leaves the box itself
    if min(left for left, *_ in placed[1:]) < bus + BUS_PX:
        raise ValueError("expected the heads' boxes to leave room for the arrows on their left")  # pragma: no cover
    grey = dict(xref="x", yref="y", axref="x", ayref="y", text="", showarrow=True, arrowwidth=2,
                arrowcolor=boxes.ARROW_COLOR)  # fmt: skip
    levels = [top + 1.5 * boxes.LINE_PX + boxes.BOX_PAD_PX for _, top, _, _ in placed[1:]]
    arrows = [dict(x=bus, y=levels[-1], ax=bus, ay=top0 + height0, arrowhead=0, **grey)]
    arrows += [dict(x=left - 6, y=y, ax=bus, ay=y, arrowhead=2, arrowsize=1.1, **grey)
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
        f"<b>FEATURE EXTRACTION</b><br>encoder FROZEN: no gradient<br>"
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

    Left, feature extraction: the encoder frozen (a grey-filled box, "FROZEN: no gradient"),
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
        frozen = layout["annotations"][0]  # the frozen encoder: a grey block
        layout["annotations"][0] = dict(frozen, bgcolor=FROZEN_FILL, font=dict(frozen["font"], color=FROZEN_INK))
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


CHANCE = 0.5  # two balanced classes: what guessing scores


def kind_curves_figure(curves, kinds, *, thin: str, title: str) -> go.Figure:
    """Each kind of sentence's test accuracy while fine-tuning: the mean of the runs, one line a
    kind (a colour and a dash each, so it reads without colour), every run of the kind ``thin``
    drawn thinly behind its mean (where the mean smooths each run's own step), and chance, 0.5.

    ``curves``: one list a run of points ``{"step": s, kind: accuracy, ...}``, every run measured at
    the same steps (the report's ``accuracy_by_kind_curve``, with step 0, the start, measured and put
    first); ``kinds``: the kinds to draw, in the legend's order; ``thin`` one of them. Raises
    ``ValueError`` for no runs, runs measured at different or unordered steps, a missing kind or an
    accuracy outside [0, 1].
    """
    plots.require_text("title", title)
    kinds = list(kinds)
    if not kinds or thin not in kinds:
        raise ValueError(f"expected the kind drawn run by run ({thin!r}) among the kinds, got {kinds}")
    runs = [list(curve) for curve in curves]
    if not runs or not runs[0]:
        raise ValueError("expected at least one run with at least one measured step")
    steps = [point.get("step") for point in runs[0]]
    if any(not isinstance(s, (int, np.integer)) or s < 0 for s in steps) or steps != sorted(set(steps)):
        raise ValueError(f"expected increasing steps from 0 on, got {steps}")
    values = {}
    for kind in kinds:
        try:
            values[kind] = np.array([[point[kind] for point in run] for run in runs], dtype=float)  # (R, S)
        except KeyError as error:
            raise ValueError(f"expected every point to hold the accuracy of {kind!r}") from error
    if any([point["step"] for point in run] != steps for run in runs):
        raise ValueError(f"expected every run measured at the same steps {steps}")
    if any(not ((v >= 0) & (v <= 1)).all() for v in values.values()):
        raise ValueError("expected accuracies between 0 and 1")
    fig = go.Figure()
    i_thin = kinds.index(thin)
    for r, run in enumerate(values[thin]):
        fig.add_trace(go.Scatter(
            x=steps, y=plots.significant(run, 3), mode="lines", name=f"{thin}: each run",
            legendgroup="runs", showlegend=r == 0, opacity=0.6, line=dict(color=plots.color(i_thin), width=1.2),
            hovertemplate=f"{thin}, run {r + 1}: step %{{x}}, %{{y:.2f}}<extra></extra>",
        ))  # fmt: skip
    for i, kind in enumerate(kinds):
        fig.add_trace(go.Scatter(
            x=steps, y=plots.significant(values[kind].mean(axis=0), 3), mode="lines+markers",
            name=f"{kind} (mean)", line=dict(color=plots.color(i), dash=plots.DASHES[i % len(plots.DASHES)], width=2.5),
            marker=dict(size=6), hovertemplate=f"{kind}, mean: step %{{x}}, %{{y:.2f}}<extra></extra>",
        ))  # fmt: skip
    fig.add_trace(go.Scatter(x=[steps[0], steps[-1]], y=[CHANCE, CHANCE], mode="lines", name=f"chance: {CHANCE:g}",
                             line=dict(color=plots.REFERENCE_COLOR, width=1.5, dash="dot"), hoverinfo="name"))
    lowest = min(float(v.min()) for v in values.values())
    fig.update_xaxes(title_text="training step (0: the start)",
                     range=[steps[0] - 0.02 * (steps[-1] - steps[0]), steps[-1] * 1.02])
    fig.update_yaxes(title_text="test accuracy", range=[min(0.25, np.floor(lowest * 10) / 10), 1.0])
    fig.update_layout(
        title=dict(text=title, x=0.02, xanchor="left"), template=plots.TEMPLATE, height=460,
        margin=dict(l=70, r=30, t=60, b=60), font=dict(size=13),
        legend=dict(orientation="h", yanchor="bottom", y=1.0, xanchor="right", x=1.0),
    )  # fmt: skip
    return fig


DOTS_APART = 0.05  # decades between two splits' dots at the recipe's rate


def rate_sweep_figure(accuracies: dict, *, recipe_lr: float, title: str) -> go.Figure:
    """Accuracy against the peak learning rate, on a log axis ticked at every swept rate (written as
    the lessons write rates: ``5e-4``): for each split, the mean of the runs at each rate (a line),
    and every run at the recipe's rate ``recipe_lr`` as a dot (its seeds' spread, the yardstick), the
    splits' dots a little apart (:data:`DOTS_APART` decades) so that neither hides the other or the mean.

    ``accuracies``: ``{rate: {split: [accuracy of each run]}}``, every rate holding the same splits,
    ``recipe_lr`` one of the rates. Raises ``ValueError`` for fewer than two rates, a rate that is not
    positive, differing splits, no runs, an accuracy outside [0, 1] or a recipe rate not swept.
    """
    plots.require_text("title", title)
    rates = sorted(float(r) for r in accuracies)
    if len(rates) < 2 or rates[0] <= 0:
        raise ValueError(f"expected two or more positive learning rates, got {list(accuracies)}")
    splits = list(next(iter(accuracies.values())))
    table = {float(r): v for r, v in accuracies.items()}
    if not splits or any(list(v) != splits for v in table.values()):
        raise ValueError(f"expected every rate to hold the same splits {splits}")
    for rate, by_split in table.items():
        for split, runs in by_split.items():
            runs = np.asarray(runs, dtype=float)
            if runs.ndim != 1 or runs.size == 0 or not ((runs >= 0) & (runs <= 1)).all():
                raise ValueError(f"expected one or more accuracies in [0, 1] at rate {rate:g}, {split}, got {runs}")
    recipe = next((r for r in rates if np.isclose(r, recipe_lr)), None)
    if recipe is None:
        raise ValueError(f"expected the recipe's rate among the swept ones {rates}, got {recipe_lr!r}")
    fig = go.Figure()
    for i, split in enumerate(splits):
        means = [float(np.mean(table[r][split])) for r in rates]
        fig.add_trace(go.Scatter(
            x=rates, y=plots.significant(means, 4), mode="lines+markers", name=f"{split} (mean of the runs)",
            line=dict(color=plots.color(i), dash=plots.DASHES[i % len(plots.DASHES)], width=2.5),
            marker=dict(size=8, symbol=plots.SYMBOLS[i % len(plots.SYMBOLS)]),
            hovertemplate=f"{split}: lr %{{x:.0e}}, mean %{{y:.3f}}<extra></extra>",
        ))  # fmt: skip
        runs = table[recipe][split]
        beside = recipe * 10 ** ((i - (len(splits) - 1) / 2) * DOTS_APART)  # the splits' dots side by side
        fig.add_trace(go.Scatter(
            x=[beside] * len(runs), y=plots.significant(runs, 4), mode="markers",
            name=f"{split}: each of the {len(runs)} runs at {rate_text(recipe)}",
            marker=dict(size=9, symbol=plots.SYMBOLS[i % len(plots.SYMBOLS)] + "-open", color=plots.color(i),
                        line=dict(width=1.5, color=plots.color(i))),
            hovertemplate=f"{split}, one run at {rate_text(recipe)}: %{{y:.3f}}<extra></extra>",
        ))  # fmt: skip
    span = np.log10(rates[-1]) - np.log10(rates[0])
    fig.update_xaxes(type="log", tickmode="array", tickvals=rates, ticktext=[rate_text(r) for r in rates],
                     range=[np.log10(rates[0]) - 0.06 * span, np.log10(rates[-1]) + 0.06 * span],
                     title_text="peak learning rate (log scale)")  # fmt: skip
    fig.update_yaxes(title_text="accuracy")
    fig.update_layout(
        title=dict(text=title, x=0.02, xanchor="left"), template=plots.TEMPLATE, height=440,
        margin=dict(l=70, r=30, t=60, b=60), font=dict(size=13),
        legend=dict(orientation="h", yanchor="bottom", y=1.0, xanchor="right", x=1.0),
    )  # fmt: skip
    return fig


IGNORED = -100  # the label every PyTorch loss skips
TAG_COLOR = plots.color(2)  # a word's tag, on its first piece
SPECIAL_FILL = "#e8e8e8"  # [CLS], [SEP]: no word
QUIET_INK = "#666666"  # -100 and the rule: grey text that still reads (5.7:1 on white)


def _check_alignment(words, tokens, word_ids, labels, tag_names) -> None:
    T = len(tokens)
    if T == 0 or len(word_ids) != T or len(labels) != T:
        raise ValueError(f"expected one word id and one label per token ({T} tokens), got {len(word_ids)} word ids "
                         f"and {len(labels)} labels")  # fmt: skip
    W = len(words)
    if any(w is not None and (isinstance(w, bool) or not isinstance(w, (int, np.integer)) or not 0 <= w < W)
           for w in word_ids):  # fmt: skip
        raise ValueError(f"expected word ids None or 0 .. {W - 1}, got {list(word_ids)}")
    for w in range(W):
        at = [t for t, v in enumerate(word_ids) if v == w]
        if not at or at != list(range(at[0], at[-1] + 1)):
            raise ValueError(f"expected every word's pieces next to each other, word {w} at tokens {at}")
    if any(isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not (v == IGNORED or 0 <= v < len(tag_names))
           for v in labels):  # fmt: skip
        raise ValueError(f"expected labels -100 or 0 .. {len(tag_names) - 1}, got {list(labels)}")


def _alignment_canvas(words, tokens, word_ids, labels, tag_names, *, wide: bool) -> Canvas:
    """The alignment drawn left to right in three rows (``wide``), or top to bottom in three columns."""

    T = len(tokens)
    c = Canvas(WIDE_DESIGN_PX if wide else NARROW_DESIGN_PX)
    grey, line = plots.REFERENCE_COLOR, boxes.ARROW_COLOR
    h = 26  # a box's height
    names = ("words", "pieces", "labels")
    if wide:
        head = max(text_width(n) for n in names) + 10
        pitch = min(84.0, (c.width - head) / T)
        x_of = [head + pitch * (t + 0.5) for t in range(T)]  # each token's column centre
        rows = [0.0, 62.0, 124.0]  # tops of the words', pieces' and labels' rows
        for name, top in zip(names, rows):
            c.text(0, top + h / 2, f"<b>{name}</b>", name=f"row {name}")
    else:
        pitch = h + 6
        head = 22.0
        columns = [(0.0, 104.0), (136.0, 224.0), (256.0, c.width - 2)]  # words, pieces, labels
        y_of = [head + pitch * t for t in range(T)]  # each token's row top
        for name, (x0, x1) in zip(("word", "piece", "label"), columns):
            c.text((x0 + x1) / 2, 0, f"<b>{name}</b>", anchor=("center", "top"), name=f"column {name}")

    def box(t0: int, t1: int, which: int):
        """The box spanning tokens t0 .. t1 in row/column ``which``: (x0, y0, x1, y1)."""
        if wide:
            return x_of[t0] - pitch / 2 + 4, rows[which], x_of[t1] + pitch / 2 - 4, rows[which] + h
        x0, x1 = columns[which]
        return x0, y_of[t0], x1, y_of[t1] + h

    for w, word in enumerate(words):
        at = [t for t, v in enumerate(word_ids) if v == w]
        x0, y0, x1, y1 = box(at[0], at[-1], 0)
        c.rect(x0, y0, x1, y1, fill="white", line=plots.color(0), line_width=1.5, name=f"word {w}")
        c.text((x0 + x1) / 2, (y0 + y1) / 2, html_escape(word), anchor=("center", "middle"), name=f"word {w}")
        c.notes[-1]["bgcolor"] = "white"  # its box's: the site's dark mode keeps the text legible on it
        for t in at:  # the word to each of its pieces
            p0, q0, p1, q1 = box(t, t, 1)
            if wide:
                c.line((x0 + x1) / 2, y1, (p0 + p1) / 2, q0, color=line, width=1.5, name=f"word {w} to piece {t}")
            else:
                c.line(x1, (y0 + y1) / 2, p0, (q0 + q1) / 2, color=line, width=1.5, name=f"word {w} to piece {t}")
    for t, (token, word, label) in enumerate(zip(tokens, word_ids, labels)):
        x0, y0, x1, y1 = box(t, t, 1)
        special = word is None
        c.rect(x0, y0, x1, y1, fill=SPECIAL_FILL if special else "white", line=grey if special else plots.color(0),
               line_width=1, name=f"piece {t}")  # fmt: skip
        c.text((x0 + x1) / 2, (y0 + y1) / 2, html_escape(token), anchor=("center", "middle"), name=f"piece {t}")
        c.notes[-1]["bgcolor"] = SPECIAL_FILL if special else "white"
        l0, m0, l1, m1 = box(t, t, 2)
        if wide:
            c.arrow((x0 + x1) / 2, y1 + 2, (l0 + l1) / 2, m0 - 3, color=line, width=1.5, name=f"piece {t} to label")
        else:
            c.arrow(x1 + 2, (y0 + y1) / 2, l0 - 3, (m0 + m1) / 2, color=line, width=1.5, name=f"piece {t} to label")
        tagged = label != IGNORED
        c.rect(l0, m0, l1, m1, fill="white", line=TAG_COLOR if tagged else grey, line_width=2 if tagged else 1,
               name=f"label {t}")  # fmt: skip
        text = f"<b>{html_escape(tag_names[label])}</b>" if tagged else "−100"
        c.text((l0 + l1) / 2, (m0 + m1) / 2, text, anchor=("center", "middle"), color=None if tagged else QUIET_INK,
               name=f"label {t}")  # fmt: skip
        c.notes[-1]["bgcolor"] = "white"
    note = ("first piece of a word: the word's tag<br>other pieces, [CLS], [SEP]: −100, ignored by the loss"
            if wide else "first piece: the word's tag<br>other pieces, [CLS], [SEP]:<br>−100, ignored by the loss")
    c.text(0, c.bottom + 12, note, anchor=("left", "top"), size=12, color=QUIET_INK, name="rule")
    return c


def html_escape(text: str) -> str:
    """``text`` safe inside plotly's rich text (``<`` and ``&`` escaped)."""
    return html.escape(str(text), quote=False)


def label_alignment_figure(words, tokens, word_ids, labels, tag_names, *, title: str) -> go.Figure:
    """Word labels aligned to WordPiece pieces, for one sentence: its ``words`` (W,), each over the
    pieces the tokenizer cut it into (``tokens`` (T,), ``word_ids`` (T,): the word of each token,
    ``None`` for a special token), and under each piece its label, ``labels`` (T,): a tag id
    (``tag_names[id]``, drawn in bold in a coloured box) or -100 (grey). Drawn as given (the cell's own
    tokenizer output and :func:`course_utils.task_heads.align_labels`' labels): the usual rule puts the
    word's tag on its first piece and -100 on the others and on ``[CLS]`` and ``[SEP]``.

    On a laptop words, pieces and labels are three rows, left to right; on a phone three columns,
    one token a row. Raises ``ValueError`` unless the lengths agree, every word id is ``None`` or a
    word's index, each word's pieces are next to each other, and every label is -100 or a tag id.
    """
    words, tokens, word_ids, labels = list(words), list(tokens), list(word_ids), list(labels)
    _check_alignment(words, tokens, word_ids, labels, list(tag_names))
    wide = _alignment_canvas(words, tokens, word_ids, labels, tag_names, wide=True)
    narrow = _alignment_canvas(words, tokens, word_ids, labels, tag_names, wide=False)
    return canvas_figure(wide, narrow, title=title)
