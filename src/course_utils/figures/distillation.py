"""Lesson 07's figure and explorer: one position's predicted distribution, softened by a temperature.

:func:`softened` is ``softmax(logits / T)`` and :func:`entropy` its spread in nats;
:func:`temperature_figure` draws the softened distribution of the top tokens against the model's
own (``T = 1``); :func:`temperature_explorer` puts it behind a slider for ``T`` (a
:class:`course_utils.widgets.Explorer`). :func:`copy_figure` draws how a student is copied from its
teacher (and what the study's erased start re-draws), :func:`polarity_figure` where a start keeps
the polarity of the held-out words (its word table, its guesses), :func:`one_token_figure`
distillation at one token (the teacher's soft target, the student before and after), and
:func:`who_labels_figure` who labels what each few-label arm reads.
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

__all__ = ["copy_figure", "entropy", "one_token_figure", "polarity_figure", "softened", "temperature_figure",
           "temperature_explorer", "who_labels_figure"]


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


def temperature_figure(logits, labels: Sequence[str], temperature: float, *, top_k: int = 12) -> go.Figure:
    """One position's predicted distribution, softened by a temperature (lesson 07's explorer).

    ``logits (V,)``: a model's logits at one position; ``labels (V,)``: the token of each logit.
    Bars: ``softmax(logits / T)`` for the ``top_k`` tokens of highest logit (the same tokens, in the
    same order, at every ``T``: a temperature never changes the ranking), then one bar for the
    probability of all the other ``V - top_k`` tokens together (the bar "``V - top_k`` others"). Hollow markers: the same at
    ``T = 1``, for reference. The title gives the top token's probability and the entropy, in nats
    and as a share of its maximum ``ln V`` (the uniform distribution). The y axis is fixed to
    ``[0, 1]``, so the bars move and the axes do not.
    """
    row = _check_logits_row(logits, labels)
    temperature = positive_number("temperature", temperature)
    if isinstance(top_k, bool) or not isinstance(top_k, (int, np.integer)) or not 1 <= top_k < row.size:
        raise ValueError(f"expected top_k to be an integer in 1 .. V-1 = {row.size - 1}, got {top_k!r}")
    order = np.argsort(-row, kind="stable")[:top_k]  # the top_k tokens, highest logit first
    names = plots.unique_labels([str(labels[i]) for i in order]) + [f"{row.size - top_k} others"]

    def bars(p: np.ndarray) -> np.ndarray:  # (V,) -> (top_k + 1,): the top tokens, then the rest
        return plots.significant(np.append(p[order], max(0.0, 1.0 - p[order].sum())), digits=4)

    probabilities, reference = softened(row, temperature), softened(row, 1.0)
    fig = go.Figure(
        [
            go.Bar(
                x=names,
                y=bars(probabilities),
                name=f"probability at T = {temperature:g}",
                marker=dict(color=plots.color(0), line=dict(color="black", width=0.5)),
                hovertemplate="%{x}<br>probability %{y:.4f}<extra></extra>",
            ),
            go.Scatter(
                x=names,
                y=bars(reference),
                name="at T = 1 (the model's own probabilities)",
                mode="markers",
                marker=dict(symbol="diamond-open", size=11, color=plots.color(1), line=dict(width=2)),
                hovertemplate="%{x}<br>at T = 1: %{y:.4f}<extra></extra>",
            ),
        ]
    )
    h, h_max = entropy(probabilities), np.log(row.size)
    title = (
        f"T = {temperature:g}: top token {probabilities[order[0]]:.2f}, "
        f"entropy {h:.2f} nats ({h / h_max:.0%} of the maximum ln {row.size} = {h_max:.2f})"
    )
    fig.update_layout(
        title=dict(text=title, x=0.02, xanchor="left"),
        template=plots.TEMPLATE,
        height=460,
        margin=dict(l=70, r=30, t=90, b=110),
        font=dict(size=13),
        bargap=0.2,
        legend=dict(orientation="h", yanchor="bottom", y=1.0, xanchor="right", x=1.0),
    )
    fig.update_xaxes(title_text="token (highest logit first)", type="category", tickangle=-35)
    fig.update_yaxes(title_text="probability", range=[0, 1.02])
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
    of the embedding table re-drawn after the copy (lesson 07's erased start), said in the student's
    embeddings box and drawn as a crossed arrow; 0 for the plain copy. Two columns at every width;
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
    fig.update_yaxes(visible=False, range=[0, 1.0 + 0.7 * step])
    title = f"A student of {len(layers)} layers from a teacher of {n_teacher}"
    fig.update_layout(title=dict(text=title, x=0.02, xanchor="left"), template=plots.TEMPLATE,
                      height=90 + 48 * rows, margin=dict(l=6, r=6, t=50, b=6), showlegend=False, font=dict(size=12),
                      meta=dict(narrow_layout=narrow), **wide)
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

    def arrow(y0, y1, *, crossed=False):
        notes.append(dict(x=right - half - 0.005, y=y1, ax=left + half + 0.005, ay=y0, xref="x", yref="y",
                          axref="x", ayref="y", text="", showarrow=True, arrowhead=2, arrowwidth=1.6,
                          arrowcolor=copied_color))
        if crossed:
            notes.append(dict(x=0.5, y=(y0 + y1) / 2, text="<b>✕</b>", showarrow=False, font=dict(size=size + 2),
                              bgcolor="white"))

    for x, name in ((left, "teacher"), (right, "student")):
        notes.append(dict(x=x, y=1.0 + 0.35 * step, text=f"<b>{name}</b>", showarrow=False, font=dict(size=size + 1)))
    box(left, y_of["embeddings"], "embeddings<br>(words, positions)", color=copied_color)
    box(left, y_of["head"], "masked-LM head", color=copied_color)
    for i, y in teacher_y.items():
        kept = i in layers
        box(left, y, f"layer {i}" + ("" if kept else "<br><i>(not copied)</i>"),
            color=copied_color if kept else skipped_color, dash="solid" if kept else "dash")
    words = "embeddings<br>" + (f"({erased} words re-drawn)" if erased else "(a copy)")
    box(right, y_of["embeddings"], words, color=copied_color)
    box(right, y_of["head"], "masked-LM head<br>(a copy)", color=copied_color)
    for j, y in student_y.items():
        box(right, y, f"layer {j}<br>(teacher's {layers[j]})", color=copied_color)
        arrow(teacher_y[layers[j]], y)
    arrow(y_of["embeddings"], y_of["embeddings"], crossed=bool(erased))
    arrow(y_of["head"], y_of["head"])
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


def who_labels_figure(n_labels: int, n_unlabelled: int) -> go.Figure:
    """Who labels what in lesson 07's few-label arms: ``n_labels`` sentences keep their labels, the
    teacher is fine-tuned on those alone and labels the ``n_unlabelled`` others; arm A reads the
    labels only, B adds the teacher's soft targets, C its answers. Boxes in two rows (sources, then
    the arms), arrows from each source to what reads it; on a phone, the same boxes in three rows."""
    for name, value in (("n_labels", n_labels), ("n_unlabelled", n_unlabelled)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"expected {name}, a number of sentences, a positive int, got {value!r}")
    texts = [
        f"{n_labels} labelled sentences",
        f"the teacher,<br>fine-tuned on the {n_labels}",
        f"{n_unlabelled:,} sentences<br>without a label",
        f"A: the {n_labels} labels",
        f"B: the {n_labels} labels<br>+ the teacher's<br>soft targets",
        f"C: the {n_labels} labels<br>+ the teacher's<br>answers",
    ]
    return boxes.box_diagram(
        texts, title="Who labels what: the teacher saw only the student's labels",
        wide_rows=[[0, 1, 2], [3, 4, 5]], edges=[(0, 1), (2, 1), (0, 3), (1, 4), (1, 5)],
        narrow_rows=[[0, 2], [3, 1], [4, 5]], narrow_edges=[(0, 3), (0, 1), (2, 1), (1, 4), (1, 5)],
    )


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
