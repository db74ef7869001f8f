"""Lesson 07's figures: what a teacher's distribution holds, softened by a temperature, and one step
of distillation.

:func:`ranked_guesses_figure` draws every token's probability by rank, coloured by kind;
:func:`distillation_step_figure` one step of distillation (the frozen teacher, the three losses, the
gradient into the student only); :func:`few_labels_figure` who labels what each few-label arm reads.
:func:`softened` is ``softmax(logits / T)`` and :func:`entropy` its spread in nats;
:func:`temperature_figure` draws the softened distribution of the top tokens against the model's
own (``T = 1``); :func:`temperature_explorer` puts it behind a slider for ``T`` (a
:class:`course_utils.widgets.Explorer`). :func:`copy_figure` draws how a student is copied from its
teacher (and what the study's erased start re-draws), :func:`polarity_figure` where a start keeps
the polarity of the held-out words (its word table, its guesses), and :func:`one_token_figure`
distillation at one token (the teacher's soft target, the student before and after).
"""

from __future__ import annotations

import functools
from typing import Sequence

import numpy as np
import plotly.graph_objects as go

from .. import plots
from ..attention import softmax
from ..validation import positive_number
from ..widgets import Explorer, Slider
from . import boxes

__all__ = ["copy_figure", "distillation_step_figure", "entropy", "few_labels_figure", "one_token_figure", "polarity_figure",
           "ranked_guesses_figure", "softened", "temperature_explorer", "temperature_figure"]


def _check_logits_row(logits, labels: Sequence[str]) -> np.ndarray:
    row = np.asarray(logits, dtype=float)
    if row.ndim != 1 or row.size < 2:
        raise ValueError(f"expected the logits of one position, shape (V,) with V >= 2, got shape {row.shape}")
    if not np.all(np.isfinite(row)):
        raise ValueError("expected finite logits (no inf or nan)")
    if isinstance(labels, str) or len(labels) != row.size:
        raise ValueError(f"expected one label per logit: {row.size} logits, got {len(labels)} labels")
    return row


def softened(logits, temperature: float) -> np.ndarray:
    """``softmax(logits / T)`` of one position: ``(V,)`` logits -> ``(V,)`` probabilities (computed stably)."""
    row = np.asarray(logits, dtype=float)
    return softmax(row / positive_number("temperature", temperature), axis=-1)


def entropy(probabilities) -> float:
    """``-Σ p ln p`` in nats of a distribution ``(V,)`` (terms with ``p = 0`` count 0); at most ``ln V``."""
    p = np.asarray(probabilities, dtype=float)
    positive = p[p > 0]
    return float(-(positive * np.log(positive)).sum())


def _ratios(row: np.ndarray, order: np.ndarray, temperature: float) -> np.ndarray:
    """``(top_k + 1,)``: each top token's probability at ``T`` over the top token's,
    ``exp((z_i - z_top) / T)``, then the mean probability of the other tokens over the top token's."""
    p = softened(row, temperature)
    rest = np.delete(p, order)
    return np.append(p[order], rest.mean()) / p[order[0]]


def temperature_figure(logits, labels: Sequence[str], temperature: float, *, top_k: int = 12) -> go.Figure:
    """One position's predicted distribution, softened by a temperature (lesson 07's explorer).

    ``logits (V,)``: a model's logits at one position; ``labels (V,)``: the token of each logit.
    One row per token, for the ``top_k`` tokens of highest logit (the same tokens, in the same order,
    at every ``T``: a temperature never changes the ranking), then a row for the mean of all the
    other ``V - top_k`` tokens; each a dot at its probability **divided by the top token's**, on a
    log axis, so that what a temperature changes, the ratios ``exp((z_i - z_top) / T)``, is what
    moves (the top token stays at 1). Hollow diamonds: the same at ``T = 1``, for reference. The
    title gives the top token's probability and the entropy, in nats and as a share of its maximum
    ``ln V`` (the uniform distribution). The axis is fixed for every ``T`` from 0.5 up, so the dots
    move and the axes do not.
    """
    row = _check_logits_row(logits, labels)
    temperature = positive_number("temperature", temperature)
    if isinstance(top_k, bool) or not isinstance(top_k, (int, np.integer)) or not 1 <= top_k < row.size:
        raise ValueError(f"expected top_k to be an integer in 1 .. V-1 = {row.size - 1}, got {top_k!r}")
    order = np.argsort(-row, kind="stable")[:top_k]  # the top_k tokens, highest logit first
    names = plots.unique_labels([str(labels[i]) for i in order]) + [f"mean of {row.size - top_k} others"]
    ratios, reference = _ratios(row, order, temperature), _ratios(row, order, 1.0)
    fig = go.Figure(
        [
            go.Scatter(
                y=names, x=plots.significant(ratios, digits=4), name=f"at T = {temperature:g}", mode="markers",
                marker=dict(symbol="circle", size=12, color=plots.color(0), line=dict(color="black", width=0.5)),
                hovertemplate="%{y}: %{x:.3g} × the top token's<extra></extra>",
            ),
            go.Scatter(
                y=names, x=plots.significant(reference, digits=4), name="at T = 1 (the model's own)",
                mode="markers", marker=dict(symbol="diamond-open", size=11, color=plots.color(1), line=dict(width=2)),
                hovertemplate="%{y}: at T = 1, %{x:.3g} × the top token's<extra></extra>",
            ),
        ]
    )
    probabilities = softened(row, temperature)
    h, h_max = entropy(probabilities), np.log(row.size)
    title = (
        f"T = {temperature:g}: top token {probabilities[order[0]]:.2f}, "
        f"entropy {h:.2f} nats ({h / h_max:.0%} of the maximum ln {row.size} = {h_max:.2f})"
    )
    floor = float(min(_ratios(row, order, min(temperature, 0.5)).min(), ratios.min()))
    low = max(int(np.floor(np.log10(max(floor, 1e-300)))), -300)
    decades = list(range(0, low - 1, -1 if low > -8 else -2))
    fig.update_layout(
        title=dict(text=title, x=0.02, xanchor="left"),
        template=plots.TEMPLATE,
        height=200 + 26 * (top_k + 1),
        margin=dict(l=10, r=20, t=80, b=60),
        font=dict(size=13),
        legend=dict(orientation="h", yanchor="bottom", y=1.0, xanchor="right", x=1.0),
    )
    fig.update_xaxes(title_text="ratio to the top token (log)", type="log", range=[low - 0.2, 0.45],
                     tickvals=[10.0 ** d for d in decades],
                     ticktext=[f"{10.0 ** d:g}" if d >= -3 else f"10<sup>{d}</sup>" for d in decades])
    fig.update_yaxes(type="category", autorange="reversed", automargin=True)
    return fig


def temperature_explorer(
    logits,
    labels: Sequence[str],
    *,
    temperatures: Sequence[float] = (0.5, 1.0, 2.0, 3.0, 4.0, 6.0, 10.0),
    default: float = 1.0,
    top_k: int = 12,
) -> Explorer:
    """The explorer of lesson 07: a slider for the temperature ``T`` of :func:`temperature_figure`.

    ``logits (V,)`` and ``labels (V,)`` as there; ``temperatures``, increasing, the slider's values
    (the kernel-free twin offers the same), shown first at ``default``.
    """
    row = _check_logits_row(logits, labels)
    values = [positive_number("temperature", t) for t in temperatures]
    if any(b <= a for a, b in zip(values, values[1:])):
        raise ValueError(f"expected increasing temperatures, got {list(temperatures)}")
    draw = functools.partial(temperature_figure, row, list(labels), top_k=top_k)
    return Explorer(draw, [Slider("temperature", values, default=float(default), label="temperature T")])


# --------------------------------------------------------------------------------------------
# The study (lesson 07): what a copy of the teacher carries, and where


def copy_figure(n_teacher: int, layers: Sequence[int], *, erased: int = 0) -> go.Figure:
    """How a student is made from its teacher: two stacks of boxes, the teacher's (embeddings,
    ``n_teacher`` layers, masked-LM head) and the student's (embeddings, ``len(layers)`` layers,
    head), with an arrow from every part that is copied. Teacher layers that are not copied are
    drawn dashed and say so (the difference reads without colour). ``erased``: the number of rows
    of the embedding table re-drawn after the copy (lesson 07's erased start), said under the
    embeddings' arrow (still an arrow: the table is copied, then those rows re-drawn); 0 for the
    plain copy. Two columns at every width;
    on a phone (``layout.meta["narrow_layout"]``) wider boxes in a smaller font, so that the site
    draws it at the phone's width rather than scrolling it sideways."""
    if isinstance(n_teacher, bool) or not isinstance(n_teacher, (int, np.integer)) or not 1 <= n_teacher <= 12:
        raise ValueError(f"expected n_teacher, the teacher's number of layers, an int from 1 to 12, got {n_teacher!r}")
    layers = [int(i) for i in layers]
    if not layers or layers != sorted(set(layers)) or layers[0] < 0 or layers[-1] >= n_teacher:
        raise ValueError(f"expected increasing teacher layers between 0 and {n_teacher - 1}, got {layers}")
    if isinstance(erased, bool) or not isinstance(erased, (int, np.integer)) or erased < 0:
        raise ValueError(f"expected erased, a number of rows, an int >= 0, got {erased!r}")
    rows = n_teacher + 2  # embeddings, the layers, the head: from the bottom up
    step = 1.0 / rows
    wide = _copy_parts(n_teacher, layers, erased, step, half=0.17, size=12)
    narrow = _copy_parts(n_teacher, layers, erased, step, half=0.21, size=10)  # a phone's 340 px: 40 px arrows
    fig = go.Figure()
    fig.update_xaxes(visible=False, range=[0, 1])
    below = 1.2 * step if erased else 0.0  # room for the note under the embeddings' arrow
    fig.update_yaxes(visible=False, range=[-below, 1.0 + 0.7 * step])
    narrow["yaxis"] = dict(visible=False, range=[-below, 1.0 + 0.7 * step])
    title = f"A student of {len(layers)} layers from a teacher of {n_teacher}: each arrow a copy"
    fig.update_layout(title=dict(text=title, x=0.02, xanchor="left"), template=plots.TEMPLATE,
                      height=90 + 48 * rows + (55 if erased else 0), margin=dict(l=6, r=6, t=50, b=6),
                      showlegend=False, font=dict(size=12), meta=dict(narrow_layout=narrow), **wide)
    return fig


def _copy_parts(n_teacher: int, layers: list[int], erased: int, step: float, *, half: float, size: int) -> dict:
    """:func:`copy_figure`'s boxes (shapes) and texts and arrows (annotations), the boxes ``2 * half``
    of the width wide, the texts ``size`` px: ``{"shapes": [...], "annotations": [...]}``."""
    rows = n_teacher + 2
    y_of = {"embeddings": 0.5 * step, "head": (rows - 0.5) * step}
    teacher_y = {i: (i + 1.5) * step for i in range(n_teacher)}
    spacing = n_teacher / len(layers)
    student_y = {j: (1 + 0.5 + (j + 0.5) * spacing - 0.5) * step for j in range(len(layers))}
    shapes, notes = [], []
    copied_color, skipped_color = plots.color(0), plots.REFERENCE_COLOR
    left, right = 0.02 + half, 0.98 - half  # the two columns' centres

    def box(x, y, text, *, color, dash="solid"):
        shapes.append(dict(type="rect", x0=x - half, x1=x + half, y0=y - 0.4 * step, y1=y + 0.4 * step,
                           line=dict(color=color, width=2, dash=dash), fillcolor="rgba(0,0,0,0)"))
        notes.append(dict(x=x, y=y, text=text, showarrow=False, font=dict(size=size)))

    def arrow(y0, y1):
        notes.append(dict(x=right - half - 0.005, y=y1, ax=left + half + 0.005, ay=y0, xref="x", yref="y",
                          axref="x", ayref="y", text="", showarrow=True, arrowhead=2, arrowwidth=1.6,
                          arrowcolor=copied_color))

    for x, name in ((left, "teacher"), (right, "student")):
        notes.append(dict(x=x, y=1.0 + 0.35 * step, text=f"<b>{name}</b>", showarrow=False, font=dict(size=size + 1)))
    box(left, y_of["embeddings"], "embeddings<br>(words, positions)", color=copied_color)
    box(left, y_of["head"], "masked-LM head", color=copied_color)
    for i, y in teacher_y.items():
        kept = i in layers
        box(left, y, f"layer {i}" + ("" if kept else "<br><i>(not copied)</i>"),
            color=copied_color if kept else skipped_color, dash="solid" if kept else "dash")
    box(right, y_of["embeddings"], "embeddings<br>(a copy)", color=copied_color)
    box(right, y_of["head"], "masked-LM head<br>(a copy)", color=copied_color)
    for j, y in student_y.items():
        box(right, y, f"layer {j}<br>(teacher's {layers[j]})", color=copied_color)
        arrow(teacher_y[layers[j]], y)
    arrow(y_of["embeddings"], y_of["embeddings"])
    arrow(y_of["head"], y_of["head"])
    if erased:  # under the boxes, centred on the embeddings' arrow: what the erased copy then changes
        sep = "<br>" if size < 12 else " "
        notes.append(dict(x=0.5, y=0.05 * step, yanchor="top", text=f"↑ copied, {erased} rows re-drawn{sep}"
                          "(erased copy only)", showarrow=False, font=dict(size=size, color=copied_color)))
    return {"shapes": shapes, "annotations": notes}


def polarity_figure(starts: dict, words: Sequence[str], labels: Sequence[int]) -> go.Figure:
    """Where a model keeps the polarity of words it never saw labelled, for each of its ``starts``:
    ``{name: (direction (W,), preference (W,))}``, each word's row of the input table projected on the
    adverbs' direction (:func:`course_utils.probes.adverb_direction`) and the model's
    ``P(perfectly) / (P(perfectly) + P(utterly))`` before it (:func:`course_utils.probes.adverb_preference`).
    ``words (W,)`` and ``labels (W,)`` (1 positive, 0 negative). Two panels, one above the other:
    the table (each start's projections, scaled to its own largest) and the guesses; one row of
    points per start, positive words as filled circles, negative ones as crosses (the shapes read
    without colour). A start that knows the polarity puts its circles right of its crosses."""
    from plotly.subplots import make_subplots

    words, labels = list(words), np.asarray(labels)
    if not starts or not words or labels.shape != (len(words),) or not np.isin(labels, (0, 1)).all():
        raise ValueError(f"expected starts, words and one label 0 or 1 per word, got {len(starts)} starts, "
                         f"{len(words)} words and labels of shape {labels.shape}")
    names = list(starts)
    fig = make_subplots(rows=2, cols=1, vertical_spacing=0.28,
                        subplot_titles=("<b>its word table</b>: along E[perfectly] − E[utterly]",
                                        "<b>its guesses</b>: P(perfectly) / P(either)"))
    for row, index in ((1, 0), (2, 1)):
        for name in names:
            values = np.asarray(starts[name][index], dtype=float)
            if values.shape != (len(words),) or not np.isfinite(values).all():
                raise ValueError(f"expected one finite value per word ({len(words)}) for {name!r}, got {values.shape}")
            if index == 0:
                values = values / np.abs(values).max()
            for polarity, symbol, i in ((1, "circle", 0), (0, "x-thin-open", 5)):
                chosen = labels == polarity
                fig.add_trace(go.Scatter(
                    x=plots.significant(values[chosen]), y=[name] * int(chosen.sum()), mode="markers",
                    marker=dict(symbol=symbol, size=11, color=plots.color(i), line=dict(width=2, color=plots.color(i))),
                    name="positive word" if polarity else "negative word", legendgroup=str(polarity),
                    showlegend=(row, name) == (1, names[0]), text=[w for w, c in zip(words, chosen) if c],
                    hovertemplate="%{text}: %{x}<extra></extra>"), row=row, col=1)
    fig.update_xaxes(title_text="position, scaled (−1 to 1)", range=[-1.1, 1.1], row=1, col=1)
    fig.update_xaxes(title_text="share of 'perfectly'", range=[-0.05, 1.05], row=2, col=1)
    fig.update_annotations(selector=dict(text=None), font=dict(size=12))  # the panels' titles
    for annotation in fig.layout.annotations:
        annotation.update(x=0, xanchor="left", font=dict(size=12))
    fig.update_yaxes(autorange="reversed")
    fig.update_layout(title=dict(text="Does the start know the held-out adjectives?", x=0.02, xanchor="left"),
                      template=plots.TEMPLATE, height=300 + 80 * len(names), margin=dict(l=10, r=20, t=90, b=50),
                      font=dict(size=12), legend=dict(orientation="h", yanchor="bottom", y=1.02, xanchor="right", x=1))
    return fig


def one_token_figure(tokens: Sequence[str], series: dict, *, label: str, marked: Sequence[str] = (),
                     title: str) -> go.Figure:
    """Distillation at one token: each of ``series`` (``{name: (K,) probabilities}``, the teacher's
    soft target, the student before, after some steps...) as a bar per token of ``tokens (K,)``, the
    tokens down the side (horizontal bars: long names read on a phone), grouped by token. ``label``:
    the token a one-hot label would name (marked "the label"); ``marked``: tokens to star (the
    erased words)."""
    tokens = list(tokens)
    plots.require_text("title", title)
    if not tokens or isinstance(series, (str, bytes)) or not series:
        raise ValueError("expected tokens and at least one series {name: probabilities}")
    if label not in tokens:
        raise ValueError(f"expected the label among the tokens, got {label!r}")
    names = [f"{t} (the label)" if t == label else f"{t} *" if t in set(marked) else t for t in tokens]
    fig = go.Figure()
    for i, (name, values) in enumerate(series.items()):
        values = np.asarray(values, dtype=float)
        if values.shape != (len(tokens),) or not np.all((values >= 0) & (values <= 1)):
            raise ValueError(f"expected one probability per token ({len(tokens)}) for {name!r}, got {values.shape}")
        fig.add_trace(go.Bar(y=names, x=plots.significant(values), name=name, orientation="h",
                             marker=dict(color=plots.color(i), pattern_shape=["", "/", ".", "x"][i % 4],
                                         line=dict(color="black", width=0.5)),
                             hovertemplate="%{y}: %{x}<extra>" + name + "</extra>"))
    fig.update_yaxes(autorange="reversed", automargin=True)
    fig.update_layout(barmode="group", bargap=0.25, legend=dict(orientation="h", yanchor="top", y=-0.12, x=0))
    return plots._style(fig, title, "probability", "", 220 + 22 * len(series) * len(tokens))


# --------------------------------------------------------------------------------------------
# One step of distillation (lesson 07): who reads what, and where the gradient goes

STEP_TERMS = ("mlm", "ce", "cos")  # the loss panel's rows, top to bottom: L_mlm reads the batch's labels above it


def _step_texts(n_teacher: int, n_student: int, alphas: dict, temperature: float, narrow: bool) -> dict:
    """The texts of :func:`distillation_step_figure`, long for a laptop and short for a phone."""
    a = {k: f"{alphas[k]:g}" for k in STEP_TERMS}
    if narrow:
        return dict(
            batch="a masked batch<br>(B, T) token ids", labels="labels",
            teacher=f"<b>teacher</b><br>{n_teacher} layers<br><br>frozen:<br>eval,<br>no_grad",
            student=f"<b>student</b><br>{n_student} layers<br><br>learning:<br>train,<br>dropout",
            mlm=f"<b>{a['mlm']} · L_mlm</b><br>student vs<br>true tokens",
            ce=f"<b>{a['ce']} · L_ce</b><br>softened<br>outputs, T={temperature:g}",
            cos=f"<b>{a['cos']} · L_cos</b><br>last hidden<br>states",
            total="<b>L</b>, their sum", gradient="gradient of L:<br>the student only",
        )
    return dict(
        batch="a masked batch: token ids (B, T)<br>and the true tokens (labels)", labels="labels",
        teacher=f"<b>teacher</b><br>{n_teacher} layers<br><br>frozen:<br>eval, no_grad",
        student=f"<b>student</b><br>{n_student} layers<br><br>learning:<br>train, dropout",
        mlm=f"<b>{a['mlm']} · L_mlm</b><br>the student's guesses<br>against the true tokens",
        ce=f"<b>{a['ce']} · L_ce</b>, T² · KL<br>both models' outputs,<br>softened at T = {temperature:g}",
        cos=f"<b>{a['cos']} · L_cos</b>, 1 − cos<br>both models' last<br>hidden states",
        total=f"<b>L</b> = {a['ce']} L_ce + {a['mlm']} L_mlm + {a['cos']} L_cos",
        gradient="backward: the gradient of L reaches the student only",
    )


def _lock(c, x: float, y: float, colour: str) -> None:
    """A padlock, its body's top left at ``(x, y)``: a filled 16 × 12 px body under a shackle."""
    c.line(x + 4, y, x + 4, y - 6, color=colour, width=2.5, name="lock")
    c.line(x + 4, y - 6, x + 12, y - 6, color=colour, width=2.5, name="lock")
    c.line(x + 12, y - 6, x + 12, y, color=colour, width=2.5, name="lock")
    c.rect(x, y, x + 16, y + 12, fill=colour, name="lock")


def _step_canvas(width: float, texts: dict, *, side: float, gap: float, size: float):
    """:func:`distillation_step_figure`'s drawing, ``width`` px wide: the teacher's and the student's
    columns ``side`` px wide at the edges, the loss panel between them, ``gap`` px from each."""
    from . import canvas

    line = size * canvas.LINE_EM
    c = canvas.Canvas(width)
    frozen, learning, arrow = "#9a9a9a", plots.color(0), boxes.ARROW_COLOR
    left, right = side + gap, width - side - gap  # the loss panel's edges
    centre = width / 2
    # the batch, centred on top; its ids go down to both models, its labels to L_mlm
    batch_lines = texts["batch"].count("<br>") + 1
    batch_h = batch_lines * line + 10
    batch_w = canvas.text_width(texts["batch"], size) + 16
    c.rect(centre - batch_w / 2, 0, centre + batch_w / 2, batch_h, line=arrow, line_width=1.5, name="the batch")
    c.text(centre, batch_h / 2, texts["batch"], anchor=("center", "middle"), size=size, name="the batch")
    row_h = 3 * line + 12
    top = batch_h + 2.2 * line + 8  # the loss panel's top: room for the labels' arrow and its word
    rows = {term: top + k * row_h for k, term in enumerate(STEP_TERMS)}  # each row's top
    total_top = top + 3 * row_h
    total_h = line + 14
    bottom = total_top + total_h
    # the loss panel: three rows, each fed from the side it reads, and their weighted sum
    c.rect(left, top, right, bottom, line=arrow, line_width=1.5, name="the losses")
    for k, term in enumerate(STEP_TERMS):
        if k:
            c.line(left, rows[term], right, rows[term], color=arrow, width=1, name="the losses")
        c.text(left + 6, rows[term] + row_h / 2, texts[term], anchor=("left", "middle"), size=size, name=f"L_{term}")
    c.line(left, total_top, right, total_top, color=arrow, width=2, name="the losses")
    c.text(centre, total_top + total_h / 2, texts["total"], anchor=("center", "middle"), size=size, name="L")
    # the teacher: greyed, locked, beside the rows it feeds (L_ce, L_cos); the student beside all three
    t_top, t_bottom = rows["ce"] - 4, rows["cos"] + row_h + 4
    c.rect(2, t_top, side, t_bottom, fill="#eeeeee", line=frozen, line_width=2, name="the teacher")
    _lock(c, side / 2 - 8, t_top + 14, frozen)
    c.text(side / 2, (t_top + 30 + t_bottom) / 2, texts["teacher"], anchor=("center", "middle"), size=size,
           color="#555555", name="the teacher")
    c.notes[-1]["bgcolor"] = "#eeeeee"  # its box's grey: dark mode then reads the grey text against its box
    s_top, s_bottom = top, bottom
    c.rect(width - side, s_top, width - 2, s_bottom, line=learning, line_width=2.5, name="the student")
    c.text(width - side / 2, (s_top + s_bottom) / 2, texts["student"], anchor=("center", "middle"), size=size,
           name="the student")
    # the batch's token ids: along the top, then down into each model
    mid = batch_h / 2
    for x_edge, x_model, y_model in ((centre - batch_w / 2, side / 2, t_top), (centre + batch_w / 2, width - side / 2,
                                                                                  s_top)):
        c.line(x_edge, mid, x_model, mid, color=arrow, width=2, name="the ids")
        c.arrow(x_model, mid, x_model, y_model - 1, color=arrow, name="the ids")
    c.arrow(centre, batch_h, centre, top - 1, color=arrow, name="the labels")
    c.text(centre + 6, (batch_h + top) / 2, texts["labels"], anchor=("left", "middle"), size=size, name="the labels")
    # what each row reads: the teacher's outputs from the left, the student's from the right
    for term in STEP_TERMS:
        y = rows[term] + row_h / 2
        c.arrow(width - side - 1, y, right + 1, y, color=learning, name=f"student to L_{term}")
        if term != "mlm":
            c.arrow(side + 1, y, left - 1, y, color=frozen, name=f"teacher to L_{term}")
    # the gradient, dashed: from L down, along under the panel, up into the student only
    below = bottom + 16
    x_from, x_into = right - 30, width - side / 2
    c.line(x_from, bottom, x_from, below, color=learning, width=2, dash="dash", name="the gradient")
    c.line(x_from, below, x_into, below, color=learning, width=2, dash="dash", name="the gradient")
    c.arrow(x_into, below, x_into, s_bottom + 1, color=learning, width=2, name="the gradient")
    c.text(x_into, below + 6, texts["gradient"], anchor=("right", "top"), size=size, color=learning,
           name="the gradient")
    return c


def distillation_step_figure(n_teacher: int, n_student: int, alphas: dict, temperature: float) -> go.Figure:
    """One step of distillation, drawn (lesson 07): a masked batch feeds the teacher (left, greyed,
    a padlock: frozen) and the student (right); between them the loss panel, one row per term, each
    fed from the side it reads (``L_mlm`` the student's guesses and the batch's labels, ``L_ce`` and
    ``L_cos`` both models), each row with its weight of ``alphas`` (``{"ce", "mlm", "cos"}``), and
    their weighted sum ``L``; a dashed arrow carries the gradient of ``L`` back into the student
    alone. ``n_teacher`` and ``n_student``: the two models' layers; ``temperature``: ``T`` of
    ``L_ce``. Drawn in pixels (:mod:`.canvas`), with a phone's layout of the same parts."""
    from . import canvas

    for name, value in (("n_teacher", n_teacher), ("n_student", n_student)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"expected {name}, a number of layers, a positive int, got {value!r}")
    if not isinstance(alphas, dict) or set(alphas) != set(STEP_TERMS):
        raise ValueError(f"expected alphas, a dict of the weights {{'ce', 'mlm', 'cos'}}, got {alphas!r}")
    for term in STEP_TERMS:
        positive_number(f"alphas[{term!r}]", alphas[term])
    temperature = positive_number("temperature", temperature)
    wide = _step_canvas(canvas.WIDE_DESIGN_PX, _step_texts(n_teacher, n_student, alphas, temperature, False),
                        side=150, gap=56, size=12)
    narrow = _step_canvas(canvas.NARROW_DESIGN_PX, _step_texts(n_teacher, n_student, alphas, temperature, True),
                          side=78, gap=26, size=10)
    return canvas.canvas_figure(wide, narrow, title="One step of distillation: only the student learns")


# --------------------------------------------------------------------------------------------
# Few labels (lesson 07's lab): who labels what each arm reads


def _few_labels_canvas(width: float, n_labels: int, n_unlabelled: int, *, size: float):
    """:func:`few_labels_figure`'s drawing, ``width`` px wide: the two sources on top, the teacher
    under them, the arms A, B, C in a row; the labels' line runs down the left margin and under the
    arms, so that no arrow crosses another."""
    from . import canvas

    line = size * canvas.LINE_EM
    c = canvas.Canvas(width)
    arrow, labels_colour, teacher_colour = boxes.ARROW_COLOR, plots.color(1), plots.color(0)
    lane, left = 8.0, 20.0  # the labels' line runs at x = lane, the boxes start at x = left
    gap = 12.0
    half = (width - left - gap) / 2
    src_h = 2 * line + 12
    c.rect(left, 0, left + half, src_h, line=labels_colour, line_width=2, name="the labels")
    c.text(left + half / 2, src_h / 2, f"<b>{n_labels:,} labelled</b><br>sentences", anchor=("center", "middle"),
           size=size, name="the labels")
    x_text = left + half + gap
    c.rect(x_text, 0, width - 2, src_h, line=arrow, line_width=1.5, name="the text")
    c.text((x_text + width - 2) / 2, src_h / 2, f"<b>{n_unlabelled:,}</b> sentences<br>without a label",
           anchor=("center", "middle"), size=size, name="the text")
    # the teacher: fine-tuned on the labels (arrow from the left source), it labels the text (from the right)
    t_top = src_h + 2 * line + 10
    t_h = 2 * line + 12
    t_left = left + half / 2
    c.rect(t_left, t_top, width - 2, t_top + t_h, line=teacher_colour, line_width=2, name="the teacher")
    c.text((t_left + width - 2) / 2, t_top + t_h / 2, f"<b>a teacher</b>, fine-tuned<br>on the {n_labels:,} only",
           anchor=("center", "middle"), size=size, name="the teacher")
    x_in = t_left + 24
    c.arrow(x_in, src_h, x_in, t_top - 1, color=labels_colour, name="labels to the teacher")
    c.text(x_in + 6, (src_h + t_top) / 2, "fine-tunes", anchor=("left", "middle"), size=size, color=labels_colour,
           name="labels to the teacher")
    x_read = (x_text + width - 2) / 2
    c.arrow(x_read, src_h, x_read, t_top - 1, color=arrow, name="text to the teacher")
    c.text(x_read + 6, (src_h + t_top) / 2, "it reads", anchor=("left", "middle"), size=size, name="text to the teacher")
    # the arms, in a row; the teacher's outputs into B and C
    a_top = t_top + t_h + 2 * line + 10
    a_h = 2 * line + 12
    arm_w = (width - left - 2 * gap - 2) / 3
    xs = [left + k * (arm_w + gap) for k in range(3)]
    arms = (("A", "labels only"), ("B", "+ soft targets"), ("C", "+ answers"))
    for x0, (arm, what) in zip(xs, arms):
        c.rect(x0, a_top, x0 + arm_w, a_top + a_h, line=arrow, line_width=1.5, name=f"arm {arm}")
        c.text(x0 + arm_w / 2, a_top + a_h / 2, f"<b>{arm}</b><br>{what}", anchor=("center", "middle"), size=size,
               name=f"arm {arm}")
    for x0, arm, what in ((xs[1], "B", "its soft<br>targets"), (xs[2], "C", "its<br>answers")):
        x = x0 + arm_w / 2
        c.arrow(x, t_top + t_h, x, a_top - 1, color=teacher_colour, name=f"the teacher to {arm}")
        c.text(x - 6, (t_top + t_h + a_top) / 2, what, anchor=("right", "middle"), size=size, color=teacher_colour,
               name=f"the teacher to {arm}")
    # the labels to every arm: out of the labels' box, down the left margin, along under the arms, up into each
    bus = a_top + a_h + 16
    c.line(left, src_h / 2, lane, src_h / 2, color=labels_colour, width=2, name="labels to every arm")
    c.line(lane, src_h / 2, lane, bus, color=labels_colour, width=2, name="labels to every arm")
    c.line(lane, bus, xs[2] + arm_w / 2, bus, color=labels_colour, width=2, name="labels to every arm")
    for x0, (arm, _) in zip(xs, arms):
        c.arrow(x0 + arm_w / 2, bus, x0 + arm_w / 2, a_top + a_h + 1, color=labels_colour, name=f"labels to {arm}")
    c.text(width / 2, bus + 6, f"every arm trains on the {n_labels:,} labels", anchor=("center", "top"), size=size,
           color=labels_colour, name="labels to every arm")
    return c


def few_labels_figure(n_labels: int, n_unlabelled: int) -> go.Figure:
    """Who labels what in the few-label arms (lesson 07's lab): ``n_labels`` sentences keep their
    labels, a teacher is fine-tuned on those alone and reads the ``n_unlabelled`` others; every arm
    trains on the labels (a line to each), A on nothing more, B on the teacher's soft targets as
    well, C on its answers. Drawn in pixels (:mod:`.canvas`), a phone's layout of the same parts."""
    from . import canvas

    for name, value in (("n_labels", n_labels), ("n_unlabelled", n_unlabelled)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"expected {name}, a number of sentences, a positive int, got {value!r}")
    wide = _few_labels_canvas(canvas.WIDE_DESIGN_PX * 0.8, int(n_labels), int(n_unlabelled), size=12)
    narrow = _few_labels_canvas(canvas.NARROW_DESIGN_PX, int(n_labels), int(n_unlabelled), size=10.5)
    return canvas.canvas_figure(wide, narrow, title="Who labels what: the teacher saw only the student's labels")


# --------------------------------------------------------------------------------------------
# What the teacher knows beyond the answer (lesson 07): every token's probability, by rank

def ranked_guesses_figure(probabilities, tokens: Sequence[str], kinds: Sequence[str], *, threshold: float = 1e-3,
                          title: str) -> go.Figure:
    """A model's whole predicted distribution at one position: every token a dot at its rank
    (1: the most probable) and its probability, on a log scale (ticks at 0.1, 0.01, ... down to the
    smallest decade drawn), one colour and marker shape per kind of token (``kinds (V,)``:
    a noun, a verb, a word piece...), the token's name on hover; a dotted line at ``threshold``,
    named at its right end. Under it, on the same ranks, a strip per kind (named on its row, in
    the order the kinds first appear by rank): a tick at the rank of each of its tokens, so where
    each kind ranks reads without colour and without one kind's dots hiding another's.
    ``probabilities (V,)``: a distribution (non-negative, sum 1); ``tokens (V,)``: the tokens."""
    plots.require_text("title", title)
    p = np.asarray(probabilities, dtype=float)
    if p.ndim != 1 or p.size < 2 or not np.all(np.isfinite(p)) or np.any(p < 0) or abs(p.sum() - 1) > 1e-3:
        raise ValueError(f"expected one position's probabilities, shape (V,) with V >= 2, >= 0 and summing to 1, "
                         f"got shape {p.shape} summing to {p.sum():.4g}")
    if isinstance(tokens, str) or isinstance(kinds, str) or len(tokens) != p.size or len(kinds) != p.size:
        raise ValueError(f"expected one token and one kind per probability ({p.size}), "
                         f"got {len(tokens)} tokens and {len(kinds)} kinds")
    threshold = positive_number("threshold", threshold)
    if not threshold < 1:
        raise ValueError(f"expected a threshold below 1, got {threshold!r}")
    order = np.argsort(-p, kind="stable")
    rank = np.empty(p.size, dtype=int)
    rank[order] = np.arange(1, p.size + 1)
    floor = max(float(p[p > 0].min()) if np.any(p > 0) else 1e-12, 1e-12)
    low_decade = int(np.floor(np.log10(floor)))
    top_decade = int(np.ceil(np.log10(max(float(p.max()), threshold))))
    from plotly.subplots import make_subplots

    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, row_heights=[0.66, 0.34], vertical_spacing=0.05)
    named = list(dict.fromkeys(str(kinds[i]) for i in order))  # the kinds as they first appear by rank
    members = {kind: [i for i in order if str(kinds[i]) == kind] for kind in named}
    for kind in sorted(named, key=lambda k: -len(members[k])):  # the largest drawn first, under the others
        j, chosen = named.index(kind), members[kind]
        colour, symbol = plots.color(j), plots.SYMBOLS[j % len(plots.SYMBOLS)]
        fig.add_trace(go.Scatter(
            x=rank[chosen], y=plots.significant(np.maximum(p[chosen], floor)), mode="markers", name=kind,
            text=[str(tokens[i]) for i in chosen], legendgroup=kind, showlegend=False,
            marker=dict(color=colour, symbol=symbol, size=6, line=dict(width=0)),
            hovertemplate="%{text} (" + kind + "): rank %{x}, %{y:.2g}<extra></extra>"), row=1, col=1)
        # the strip below: where the tokens of this kind rank, one tick each, on the kind's own row
        fig.add_trace(go.Scatter(
            x=rank[chosen], y=[kind] * len(chosen), mode="markers", name=kind, legendgroup=kind, showlegend=False,
            text=[str(tokens[i]) for i in chosen],
            marker=dict(color=colour, symbol="line-ns-open", size=10, line=dict(width=1.2, color=colour)),
            hovertemplate="%{text}: rank %{x}<extra>" + kind + "</extra>"), row=2, col=1)
    line = dict(color=plots.REFERENCE_COLOR, width=1.5, dash="dot")
    fig.add_hline(y=threshold, line=line, row=1, col=1)
    # on a log axis a shape takes the data value and an annotation its log10 (plotly.py #2580)
    fig.add_annotation(x=p.size, y=np.log10(threshold), xref="x", yref="y", text=f"{threshold:g}",
                       showarrow=False, xanchor="right", yanchor="bottom", yshift=2, font=dict(size=12))
    decades = list(range(top_decade, low_decade - 1, -1))
    ticks = [10.0 ** d for d in decades]
    fig.update_yaxes(type="log", range=[low_decade - 0.1, top_decade + 0.05], tickvals=ticks,
                     ticktext=[f"{t:g}" if d >= -3 else f"10<sup>{d}</sup>" for t, d in zip(ticks, decades)],
                     title_text="probability (log scale)", row=1, col=1)
    fig.update_yaxes(type="category", categoryorder="array", categoryarray=named[::-1], row=2, col=1)
    fig.update_xaxes(range=[-0.01 * p.size, 1.01 * p.size])
    fig.update_xaxes(title_text="rank (1: the most probable)", row=2, col=1)
    fig.update_layout(title=dict(text=title, x=0.02, xanchor="left"), template=plots.TEMPLATE,
                      height=300 + 22 * len(named) + 200, margin=dict(l=10, r=20, t=60, b=60), font=dict(size=13),
                      showlegend=False)
    fig.update_yaxes(automargin=True)
    return fig
