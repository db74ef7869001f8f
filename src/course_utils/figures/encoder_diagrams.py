"""Lesson 06's drawn diagrams, on :mod:`.canvas`: the feed-forward network applied to every token
with the same weights (:func:`feed_forward_figure`), and which text reaches the teacher of the
sentiment task, with the held-out words' path drawn as a thread (:func:`sentiment_task_figure`)."""

from __future__ import annotations

import html
import math
import textwrap
from typing import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from .. import plots
from . import canvas

__all__ = ["feed_forward_figure", "feed_forward_numbers", "feed_forward_weights", "sentiment_task_figure"]

FFN_TITLE = "The feed-forward network: every token's vector, on its own, D → 4D → D with the same weights"
TASK_TITLE = "The sentiment task: which text reaches the teacher, and the path of the held-out words"
THREAD = plots.color(5)  # the held-out words' path: vermillion, on both page colours
WEIGHTS_FILL = "#dddddd"  # W₁ and W₂: one bar across every row


def _matrix(name: str, value, ndim: int, shape: str) -> np.ndarray:
    try:
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"expected {name} to be a numeric array {shape}, got {type(value).__name__}") from None
    if array.ndim != ndim or 0 in array.shape or not np.all(np.isfinite(array)):
        raise ValueError(f"expected {name} to be a finite array {shape}, got shape {array.shape}")
    return array


def feed_forward_numbers(x, weights1, bias1, weights2, bias2) -> dict[str, np.ndarray]:
    """What :func:`feed_forward_figure` draws: ``x (T, D)``, the tokens' vectors; ``weights1 (D, F)``
    and ``bias1 (F,)``, the expansion; ``weights2 (F, D)`` and ``bias2 (D,)``, the compression (a
    torch ``nn.Linear``'s ``weight`` transposed). Returns ``x (T, D)``, ``hidden (T, F)`` =
    ``GELU(x W₁ + b₁)`` (the exact, erf GELU) and ``output (T, D)`` = ``hidden W₂ + b₂``: the same
    weights for every row."""
    x = _matrix("x", x, 2, "(T, D)")
    T, D = x.shape
    w1 = _matrix("weights1", weights1, 2, f"(D={D}, F)")
    if w1.shape[0] != D:
        raise ValueError(f"expected weights1 of shape (D={D}, F), got {w1.shape}")
    F = w1.shape[1]
    b1 = _matrix("bias1", bias1, 1, f"(F={F},)")
    w2 = _matrix("weights2", weights2, 2, f"(F={F}, D={D})")
    b2 = _matrix("bias2", bias2, 1, f"(D={D},)")
    if b1.shape != (F,) or w2.shape != (F, D) or b2.shape != (D,):
        raise ValueError(f"expected bias1 ({F},), weights2 ({F}, {D}) and bias2 ({D},) for x (T, {D}) and weights1 "
                         f"({D}, {F}), got {b1.shape}, {w2.shape} and {b2.shape}")  # fmt: skip
    pre = x @ w1 + b1  # (T, F)
    hidden = pre * 0.5 * (1 + np.vectorize(math.erf)(pre / math.sqrt(2)))  # exact GELU
    return dict(x=x, hidden=hidden, output=hidden @ w2 + b2)


def _colours(values: np.ndarray) -> list[list[str]]:
    """A diverging colour per entry (blue positive, red negative), symmetric about 0."""
    from plotly.colors import sample_colorscale

    reach = float(np.abs(values).max()) or 1.0
    t = np.clip((values + reach) / (2 * reach), 0, 1)
    return [sample_colorscale(plots.DIVERGING, list(map(float, row))) for row in t]


def _ffn_canvas(found: dict, tokens: Sequence[str], width: float, cell: float) -> canvas.Canvas:
    """Each token a row: its vector, one W₁ bar for every row, its hidden vector, one W₂ bar, its
    output; every cell ``cell`` px wide, so that the hidden vector is as long as it is wide."""
    x, hidden, out = found["x"], found["hidden"], found["output"]
    T, D = x.shape
    F = hidden.shape[1]
    row_h, label_px, bar_px, gap = max(20.0, cell + 4), 44.0, 24.0, 6.0
    drawn = label_px + cell * (2 * D + F) + 2 * bar_px + 4 * gap
    left = max(0.0, (width - drawn) / 2)
    c = canvas.Canvas(width)
    head_top, top = 0.0, 34.0
    lefts = {}
    lefts["x"] = left + label_px
    lefts["W1"] = lefts["x"] + D * cell + gap
    lefts["hidden"] = lefts["W1"] + bar_px + gap
    lefts["W2"] = lefts["hidden"] + F * cell + gap
    lefts["output"] = lefts["W2"] + bar_px + gap
    heads = {"x": f"x<br>({T}, {D})", "hidden": f"GELU(x W₁ + b₁)<br>({T}, {F})", "output": f"output<br>({T}, {D})"}
    for key, values in (("x", x), ("hidden", hidden), ("output", out)):
        colours = _colours(values)
        n = values.shape[1]
        c.text(lefts[key] + n * cell / 2, head_top, heads[key], anchor=("center", "top"), size=11, name=f"head {key}")
        for i in range(T):
            for j in range(n):
                c.rect(lefts[key] + j * cell, top + i * row_h + 1, lefts[key] + (j + 1) * cell, top + (i + 1) * row_h - 1,
                       fill=colours[i][j], line="#ffffff", line_width=0.5, name=f"{key} {i} {j}")  # fmt: skip
    for i, token in enumerate(tokens):
        c.text(lefts["x"] - 5, top + (i + 0.5) * row_h, html.escape(token), anchor=("right", "middle"), size=11,
               name=f"token {i}")  # fmt: skip
    bottom = top + T * row_h
    for key, shape in (("W1", f"W₁ ({D} × {F})"), ("W2", f"W₂ ({F} × {D})")):
        c.rect(lefts[key], top, lefts[key] + bar_px, bottom, fill=WEIGHTS_FILL, line="#555555", line_width=1,
               name=key)  # one bar for every row: the same weights
        c.text(lefts[key] + bar_px / 2, (top + bottom) / 2, shape, anchor=("center", "middle"), size=10, angle=-90,
               name=key)  # fmt: skip
        c.notes[-1]["font"]["color"] = "#000000"
        c.notes[-1]["bgcolor"] = WEIGHTS_FILL  # dark mode keeps the black label on its grey bar
    note = (f"one W₁ and one W₂ for all {T} tokens: each row is transformed on its own<br>"
            "colour: blue above 0, red below")  # fmt: skip
    if canvas.text_width(note.split("<br>")[0], 11) > width - 4:
        note = (f"one W₁ and one W₂ for all {T} tokens:<br>each row is transformed on its own<br>"
                "colour: blue above 0, red below")  # fmt: skip
    c.text(width / 2, bottom + 10, note, anchor=("center", "top"), size=11, name="note")
    return c


def feed_forward_weights(ffn) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A :class:`course_utils.encoder.FeedForward` (or Hugging Face's ``FFN``: ``lin1`` and ``lin2``
    linear layers around the GELU) as ``weights1 (D, F), bias1 (F,), weights2 (F, D), bias2 (D,)``."""
    import torch
    from torch.nn import functional as F

    layers = [getattr(ffn, name, None) for name in ("lin1", "lin2")]
    if not all(isinstance(layer, torch.nn.Linear) and layer.bias is not None for layer in layers):
        raise TypeError(f"expected a FeedForward with linear layers lin1 and lin2, got {type(ffn).__name__}")
    activation = getattr(ffn, "activation", None)
    if activation is not F.gelu and not isinstance(activation, torch.nn.GELU):
        raise ValueError(f"expected a FeedForward with the exact GELU, got activation {activation!r}")
    with torch.no_grad():
        w1, b1, w2, b2 = (p.detach().cpu().double().numpy() for p in
                          (layers[0].weight.T, layers[0].bias, layers[1].weight.T, layers[1].bias))  # fmt: skip
    return w1, b1, w2, b2


def feed_forward_figure(x, tokens: Sequence[str], ffn, *, title: str = FFN_TITLE) -> go.Figure:
    """The feed-forward network ``ffn`` (a :class:`course_utils.encoder.FeedForward`) as it runs on
    a sentence: one row per token of ``tokens`` (``T``), its vector ``x (T, D)`` expanded by
    ``lin1`` and the GELU to ``F`` numbers, then compressed by ``lin2`` back to ``D``
    (:func:`feed_forward_weights`, :func:`feed_forward_numbers`). Each number is a cell coloured by its value, all cells one
    width, so the hidden row is ``F / D`` times as long; W₁ and W₂ are each one bar across all
    the rows: the same weights at every position. On a phone (``layout.meta["narrow_layout"]``)
    the cells are narrower."""
    found = feed_forward_numbers(x, *feed_forward_weights(ffn))
    T = found["x"].shape[0]
    if isinstance(tokens, str) or len(tokens) != T or not all(isinstance(t, str) and t for t in tokens):
        raise ValueError(f"expected one token name per row of x ({T}), got {tokens!r}")
    plots.require_text("title", title)
    D, F = found["x"].shape[1], found["hidden"].shape[1]
    fit = lambda width: min(24.0, (width - 44 - 48 - 24 - 4) / (2 * D + F))  # noqa: E731
    wide = _ffn_canvas(found, tokens, canvas.WIDE_DESIGN_PX, fit(canvas.WIDE_DESIGN_PX))
    narrow = _ffn_canvas(found, tokens, canvas.NARROW_DESIGN_PX, fit(canvas.NARROW_DESIGN_PX))
    return canvas.canvas_figure(wide, narrow, title=title)


# --------------------------------------------------------------------------------------------
# The sentiment task: which text reaches the teacher


def _count(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
        raise ValueError(f"expected {name} to be a count (an int >= 0), got {value!r}")
    return int(value)


def _wrapped(lines: Sequence[str], chars: int) -> str:
    """Plain lines wrapped at ``chars`` characters, the first one bold, joined by ``<br>``."""
    out = []
    for k, line in enumerate(lines):
        pieces = textwrap.wrap(line, chars) or [""]
        out += [f"<b>{html.escape(p)}</b>" if k == 0 else html.escape(p) for p in pieces]
    return "<br>".join(out)


def _task_canvas(counts: dict, width: float) -> canvas.Canvas:
    """Pre-training text over the teacher on the left, the labelled sentences on the right, both
    into fine-tuning, tested on the slices; every arrow labelled with what it does; the held-out
    words' path a thread through every box that holds them."""
    c = canvas.Canvas(width)
    size, line_px, pad, band = 11, 1.3 * 11, 6.0, 7.0
    col_gap = 16.0
    col_w = (width - 8 - col_gap) / 2
    left_x, right_x = 4.0, 4.0 + col_w + col_gap
    chars = lambda w: int((w - 2 * pad - band - 8) / (canvas.CHAR_EM * size))  # noqa: E731
    arrow_gap = 40.0

    def box(x0, x1, top, lines, colour, name, thread_lines=None):
        """A box of ``lines`` (the first bold), outlined in ``colour``; ``thread_lines`` (first, last
        index of its wrapped lines): where the thread's band stands in it, ``None``: no band.
        Returns (top, bottom, band's top, band's bottom)."""
        text = _wrapped(lines, chars(x1 - x0))
        n = text.count("<br>") + 1
        bottom = top + 2 * pad + n * line_px
        c.rect(x0, top, x1, bottom, fill="white", line=colour, line_width=2, name=name)
        c.text(x0 + pad + band + 6, top + pad, text, anchor=("left", "top"), size=size, name=name)
        ends = None
        if thread_lines is not None:
            first, last = thread_lines
            ends = (top + 3 if first == 0 else top + pad + first * line_px,
                    bottom - 3 if last is None else top + pad + (last + 1) * line_px)  # fmt: skip
            c.rect(x0 + pad - 2, ends[0], x0 + pad - 2 + band, ends[1], fill=THREAD, line=THREAD,
                   name=f"thread in {name}")  # fmt: skip
        return top, bottom, ends

    def arrow(x, y0, y1, label, name):
        c.arrow(x, y0 + 2, x, y1 - 4, name=name)
        c.text(x + 7, (y0 + y1) / 2, label, anchor=("left", "middle"), size=size, name=f"label {name}")

    thread_x = left_x + pad - 2 + band / 2
    # row 1: the pre-training text; the thread's key beside it
    pre = box(left_x, left_x + col_w, 2.0, ["pre-training text", f"{counts['pretraining']:,} sentences, no labels;",
                                             f"{counts['pretraining_held_out']:,} hold a held-out word"],
              plots.color(0), "pre-training text", thread_lines=(0, None))  # fmt: skip
    key_y, key = pre[0] + 8, "the path of the<br>held-out words" if col_w < 200 else "the path of the held-out words"
    c.rect(right_x, key_y, right_x + band, key_y + (key.count("<br>") + 1) * line_px, fill=THREAD, line=THREAD,
           name="thread key")  # fmt: skip
    c.text(right_x + band + 6, key_y, key, anchor=("left", "top"), size=size, color=THREAD, name="thread key")
    # row 2: the teacher; the labelled sentences beside it
    row2 = pre[1] + arrow_gap
    teacher = box(left_x, left_x + col_w, row2, ["the teacher", "pre-trained by masked language modelling"], "#000000",
                  "teacher", thread_lines=(0, None))  # fmt: skip
    labelled_held = counts["labelled_held_out"]
    labelled = box(right_x, right_x + col_w, row2, ["labelled sentences", f"{counts['labelled']:,}; holding a "
                                                    f"held-out word: {labelled_held:,}"],
                   plots.color(2), "labelled sentences", thread_lines=(0, None) if labelled_held else None)  # fmt: skip
    arrow_x = left_x + 30
    arrow(arrow_x, pre[1], teacher[0], "trains it:<br>masked words", "pre-training")
    c.line(thread_x, pre[1] - 3, thread_x, teacher[0] + 3, color=THREAD, width=band, name="thread")
    # row 3: fine-tuning, across both columns
    row3 = max(teacher[1], labelled[1]) + arrow_gap
    tuned = box(left_x, width - 4, row3, ["fine-tuning", "the teacher, and a classifier on top"], "#000000",
                "fine-tuning", thread_lines=(0, None))  # fmt: skip
    arrow(arrow_x, teacher[1], tuned[0], "its weights,<br>to start", "the teacher's weights")
    arrow(right_x + 30, labelled[1], tuned[0], "trains it:<br>labels", "fine-tuning")
    c.line(thread_x, teacher[1] - 3, thread_x, tuned[0] + 3, color=THREAD, width=band, name="thread")
    if labelled_held:
        c.line(right_x + pad - 2 + band / 2, labelled[1] - 3, right_x + pad - 2 + band / 2, tuned[0] + 3,
               color=THREAD, width=band, name="thread from the labels")  # fmt: skip
    # row 4: the test sentences, one line per slice; the thread beside the slices with held-out words
    row4 = tuned[1] + arrow_gap
    slices = counts["slices"]
    names = list(slices)
    held_rows = [k + 1 for k, name in enumerate(names) if name in counts["held_out_slices"]]
    test_lines = ["test sentences, in three slices" if len(names) == 3 else "test sentences, in slices"]
    test_lines += [f"{name}: {slices[name]:,}" + (" (held-out words)" if name in counts["held_out_slices"] else "")
                   for name in names]  # fmt: skip
    test = box(left_x, width - 4, row4, test_lines, plots.color(3), "test sentences",
               thread_lines=(min(held_rows), max(held_rows)) if held_rows else None)  # fmt: skip
    c.arrow(arrow_x, test[0] - 2, arrow_x, tuned[1] + 4, name="tests")  # the test sentences test the model
    c.text(arrow_x + 7, (tuned[1] + test[0]) / 2, "tests it: labels hidden", anchor=("left", "middle"), size=size,
           name="label tests")  # fmt: skip
    if held_rows:
        c.line(thread_x, tuned[1] - 3, thread_x, test[2][0] + 1, color=THREAD, width=band, name="thread")
    return c


def sentiment_task_figure(*, pretraining: int, pretraining_held_out: int, labelled: int, labelled_held_out: int,
                          slices: Mapping[str, int], held_out_slices: Sequence[str],
                          title: str = TASK_TITLE) -> go.Figure:  # fmt: skip
    """Which text reaches the teacher of the sentiment task, as boxes joined by labelled arrows:
    the pre-training text (``pretraining`` sentences, ``pretraining_held_out`` of them with a
    held-out word) trains the teacher; the teacher is the start of fine-tuning, which the
    ``labelled`` sentences train (``labelled_held_out`` of them with a held-out word); the test
    sentences, ``slices`` (name to count), test it. A coloured thread runs through every box that
    holds held-out words, down to the slices ``held_out_slices``; it misses the labelled box when
    ``labelled_held_out`` is 0. On a phone (``layout.meta["narrow_layout"]``) the boxes wrap
    their text in narrower columns."""
    counts = dict(pretraining=_count("pretraining", pretraining),
                  pretraining_held_out=_count("pretraining_held_out", pretraining_held_out),
                  labelled=_count("labelled", labelled), labelled_held_out=_count("labelled_held_out", labelled_held_out))  # fmt: skip
    if counts["pretraining_held_out"] > counts["pretraining"] or counts["labelled_held_out"] > counts["labelled"]:
        raise ValueError(f"expected held-out counts within their totals, got {pretraining_held_out:,} of "
                         f"{pretraining:,} and {labelled_held_out:,} of {labelled:,}")  # fmt: skip
    if not isinstance(slices, Mapping) or not slices:
        raise ValueError(f"expected slices as a non-empty mapping of names to counts, got {slices!r}")
    counts["slices"] = {}
    for name, value in slices.items():
        plots.require_text("a slice's name", name)
        counts["slices"][name] = _count(f"slice {name!r}", value)
    unknown = [name for name in held_out_slices if name not in slices]
    if isinstance(held_out_slices, str) or unknown:
        raise ValueError(f"expected held_out_slices among the slices {list(slices)}, got {held_out_slices!r}")
    counts["held_out_slices"] = tuple(held_out_slices)
    plots.require_text("title", title)
    wide = _task_canvas(counts, canvas.WIDE_DESIGN_PX)
    narrow = _task_canvas(counts, canvas.NARROW_DESIGN_PX)
    return canvas.canvas_figure(wide, narrow, title=title)
