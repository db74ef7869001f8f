"""Lesson 02's mechanism pictures: WordPiece's greedy longest-match split, step by step
(:func:`wordpiece_figure`); an embedding lookup as a one-hot row times the table
(:func:`embedding_lookup_figure`); the rows of the table that a training step's gradient reaches
(:func:`gradient_rows_figure`).
"""

from __future__ import annotations

import html
from typing import Sequence

import numpy as np
import plotly.graph_objects as go

from .. import plots
from ..tokenization import WordPieceStep, wordpiece_pieces
from . import boxes

__all__ = ["embedding_lookup_figure", "gradient_rows_figure", "wordpiece_figure"]


def _tries(step: WordPieceStep, shown: int = 1) -> str:
    """The candidates a step tried and dropped: the first ``shown``, then how many more."""
    dropped = step.tried[:-1] if step.kept is not None else step.tried
    if not dropped:
        return "✗ none: the first try is in the vocabulary"
    names = [html.escape(t) for t in dropped]
    listed = ", ".join(names[:shown]) + (f", … {names[-1]}" if len(names) > shown else "")
    return f"✗ {listed} ({len(dropped)} not in it)"


def wordpiece_figure(word: str, steps: Sequence[WordPieceStep]) -> go.Figure:
    """WordPiece's greedy split of ``word``, one box per step, then the pieces.

    ``steps``: :func:`course_utils.tokenization.wordpiece_steps` of ``word`` (at most 8). Each box:
    where the step starts (``glo|rbiting``: what is done, then the rest), the candidates it tried
    and dropped, longest first (the first, the last and their number), and the piece it kept,
    the longest candidate in the vocabulary; the last box lists the pieces. Laptops get two boxes a
    row where they fit (read in a snake: right, down, left, down, ...), phones one column.
    """
    if not isinstance(word, str) or not word:
        raise ValueError(f"expected the word split, a non-empty string, got {word!r}")
    steps = list(steps)
    if not steps or len(steps) > 8 or not all(isinstance(s, WordPieceStep) for s in steps):
        raise ValueError(f"expected 1 to 8 WordPieceSteps (tokenization.wordpiece_steps), got {steps!r:.120}")
    # each step first tries the whole rest of the word, from where it starts
    if any(not s.tried or s.tried[0].removeprefix("##") != word[s.start:] for s in steps) or steps[0].start:
        raise ValueError(f"expected the steps of word {word!r} (tokenization.wordpiece_steps), got {steps!r:.120}")
    if len(word) > 24:
        raise ValueError(f"expected a word of at most 24 characters (a line of a box holds it), got {len(word)}")
    texts = []
    for k, step in enumerate(steps, start=1):
        at = html.escape(word[:step.start]) + "|" + html.escape(word[step.start:])
        kept = (f"✓ keeps <b>{html.escape(step.kept)}</b>, the longest in it" if step.kept is not None
                else "no candidate in it: the whole word is [UNK]")  # fmt: skip
        texts.append(f"<b>step {k}</b>: {at}<br>{_tries(step)}<br>{kept}")
    pieces = wordpiece_pieces(steps)
    texts.append(f"<b>pieces</b> of {html.escape(word)}:<br>" + " ".join(f"<b>{html.escape(p)}</b>" for p in pieces))
    title = f"WordPiece splits “{html.escape(word)}”: at each step, the longest piece in the vocabulary"
    return boxes.box_diagram(texts, title=title, wide_rows=boxes.snake_that_fits(texts))


def embedding_lookup_figure(table, tokens: Sequence[str], token: int) -> go.Figure:
    """An embedding lookup as a product: ``onehot(token) (1, V)`` × ``E (V, D)`` = row ``token``.

    ``table (V, D)`` the embedding table, ``tokens (V,)`` its rows' tokens (``V`` at most 12, ``D``
    at most 8), ``token`` the id looked up. One grid, so that it reads the same on a phone: the
    one-hot vector as a first column (0 or 1 written in each cell, grey scale), beside the rows of
    the table it multiplies (every value written, diverging scale), the picked row framed; under
    them, the product, the picked row's values, framed too.
    """
    table = np.asarray(table, dtype=float)
    if table.ndim != 2 or table.size == 0 or not np.all(np.isfinite(table)):
        raise ValueError(f"expected a finite embedding table (V, D), got shape {table.shape}")
    V, D = table.shape
    tokens = [str(t) for t in tokens]
    if len(tokens) != V or V > 12 or D > 8:
        raise ValueError(f"expected one token per row of the table (V = {V} at most 12, D at most 8), "
                         f"got {len(tokens)} tokens and D = {D}")  # fmt: skip
    if isinstance(token, bool) or not isinstance(token, (int, np.integer)) or not 0 <= token < V:
        raise ValueError(f"expected token, the id looked up, in 0 .. {V - 1}, got {token!r}")
    one_hot = np.eye(V)[token]  # (V,)
    result = one_hot @ table  # (D,): the product, row `token`
    name = html.escape(tokens[token])
    rows = [f"{i}: {html.escape(t)}" for i, t in enumerate(tokens)] + ["= onehot · E"]
    columns = ["one-hot"] + [f"dim {d}" for d in range(D)]
    span = float(np.abs(table).max()) or 1.0
    fig = go.Figure()
    fig.add_trace(go.Heatmap(
        z=one_hot[:, None], x=columns[:1], y=rows[:V], colorscale=[[0, "#FFFFFF"], [1, "#555555"]], zmin=0, zmax=1,
        showscale=False, text=[[f"{int(v)}"] for v in one_hot], texttemplate="%{text}", xgap=2, ygap=2,
        name="one-hot", hovertemplate="%{y}: %{z}<extra></extra>",
    ))  # fmt: skip
    # the values rounded once, to the 2 decimals written in the cells: 4 significant digits (-1.2654 kept
    # as -1.265) written with 2 decimals would show -1.26, not the -1.27 the other lessons print. Not a
    # `text` array: on this trace, which shares its x axis with the one-hot column, plotly.js writes
    # text[i][j] in the j-th column of the axis, one column to the left (seen on the site).
    values = np.round(np.vstack([table, result]), 2)  # (V + 1, D)
    fig.add_trace(go.Heatmap(
        z=values, x=columns[1:], y=rows, colorscale=plots.DIVERGING, zmin=-span, zmax=span, showscale=False,
        texttemplate="%{z:.2f}", xgap=2, ygap=2, name="table, then the product",
        hovertemplate="%{y}, %{x}: %{z:.2f}<extra></extra>",
    ))  # fmt: skip
    for y in (token, V):  # the picked row, and the product
        fig.add_shape(type="rect", x0=0.5, x1=D + 0.5, y0=y - 0.5, y1=y + 0.5, line=dict(color="black", width=3))
    fig.add_shape(type="line", x0=-0.5, x1=D + 0.5, y0=V - 0.5, y1=V - 0.5, line=dict(color="black", width=1))
    fig.update_yaxes(type="category", autorange="reversed", title_text="row of E = token id")
    fig.update_xaxes(type="category", side="top", tickangle=0)
    fig.update_layout(
        title=dict(text=f"Looking up “{name}”: its one-hot vector times the table E keeps row {token}", x=0.02,
                   xanchor="left"),
        template=plots.TEMPLATE, height=150 + 42 * (V + 1), margin=dict(l=110, r=10, t=110, b=20), font=dict(size=12),
    )  # fmt: skip
    return fig


def gradient_rows_figure(ids, tokens_of: Sequence[str], moved, pad_id: int) -> go.Figure:
    """Which rows of an embedding table one training step moves, position by position.

    ``ids (B, T)``: the batch's token ids; ``tokens_of``: the vocabulary's tokens (``tokens_of[i]``
    is id ``i``'s); ``moved``: the ids whose row of ``∂loss/∂E`` is not zero (measured);
    ``pad_id``: the padding id (its row frozen by ``padding_idx``). Left, every position of the
    batch, sentence by sentence (``b·t``: sentence ``b`` and position ``t``, both counted from 0 as
    the lessons print them); right, the rows that moved, each with the number of positions
    whose gradients it sums (``×3``), then the ``[PAD]`` row and the rows no position reached,
    which stay where they are. A line joins each position to the row of its token: solid for the
    first sentence, dashed, dotted for the next (readable without colour); the ``[PAD]``
    positions' lines are thin and grey and end at the frozen row.
    """
    ids = np.asarray(ids)
    if ids.ndim != 2 or ids.size == 0 or ids.dtype.kind not in "iu":
        raise ValueError(f"expected integer ids of shape (B, T), got {ids.dtype} {ids.shape}")
    V = len(tokens_of)
    if ids.min() < 0 or ids.max() >= V:
        raise ValueError(f"expected ids in 0 .. {V - 1} (one token per id in tokens_of), got {ids.min()} .. {ids.max()}")
    moved = [int(i) for i in np.ravel(moved)]
    real = [int(i) for i in dict.fromkeys(ids[ids != pad_id].tolist())]  # distinct real ids, first seen first
    if sorted(moved) != sorted(real):
        raise ValueError(f"expected the moved rows to be the batch's real tokens {sorted(real)}, got {sorted(moved)}: "
                         "is the gradient of another batch?")  # fmt: skip
    B, T = ids.shape
    counts = {i: int((ids == i).sum()) for i in real}
    right = [f"{tokens_of[i]} ×{counts[i]}" for i in real]
    rest = V - len(real) - 1
    right += [f"{tokens_of[pad_id]}: frozen", f"{rest:,} other rows: 0"]
    row_of = {i: k for k, i in enumerate(real)}
    n_left = B * T
    scale = max(n_left, len(right)) - 1
    y_left = np.linspace(0, scale, n_left)
    y_right = np.linspace(0, scale, len(right)) if len(right) > 1 else np.zeros(1)
    fig = go.Figure()
    for b in range(B):
        xs, ys, pad_xs, pad_ys = [], [], [], []
        for t in range(T):
            i = int(ids[b, t])
            end = y_right[row_of[i]] if i != pad_id else y_right[len(real)]
            target = (xs, ys) if i != pad_id else (pad_xs, pad_ys)
            target[0].extend([0.0, 1.0, None])
            target[1].extend([float(y_left[b * T + t]), float(end), None])
        fig.add_trace(go.Scatter(x=xs, y=plots.significant([v if v is not None else np.nan for v in ys]).tolist(),
                                 mode="lines", line=dict(color=plots.color(b), width=1.6, dash=plots.DASHES[b % 6]),
                                 name=f"sentence {b}", hoverinfo="name", connectgaps=False))  # fmt: skip
        if pad_xs:
            fig.add_trace(go.Scatter(x=pad_xs, y=plots.significant([v if v is not None else np.nan for v in pad_ys]).tolist(),
                                     mode="lines", line=dict(color=plots.REFERENCE_COLOR, width=0.8),
                                     name=f"sentence {b}: [PAD]", hoverinfo="name", showlegend=False))  # fmt: skip
    left = [f"{b}·{t} {tokens_of[int(ids[b, t])]}" for b in range(B) for t in range(T)]  # b, t from 0, as printed
    for x, labels, ys, side, name in ((0.0, left, y_left, "middle left", "positions"),
                                      (1.0, right, y_right, "middle right", "rows")):  # fmt: skip
        fig.add_trace(go.Scatter(x=[x] * len(labels), y=plots.significant(ys), mode="markers+text", text=labels,
                                 textposition=side, marker=dict(size=6, color="black"), name=name,
                                 showlegend=False, hoverinfo="text", textfont=dict(size=11)))  # fmt: skip
    for x, text in ((0.0, "position: sentence·t"), (1.0, "row of E it moves")):
        fig.add_annotation(x=x, y=-1.2, text=f"<b>{text}</b>", showarrow=False, xref="x", yref="y")
    fig.update_xaxes(visible=False, range=[-0.75, 1.75])
    fig.update_yaxes(visible=False, range=[scale + 0.8, -2.0])
    fig.update_layout(
        title=dict(text=f"One backward pass: {len(real)} of {V:,} rows of E move, each by the sum of its positions",
                   x=0.02, xanchor="left"),
        template=plots.TEMPLATE, height=120 + 15 * max(n_left, len(right)), margin=dict(l=10, r=10, t=70, b=10),
        font=dict(size=12), legend=dict(orientation="h", yanchor="bottom", y=1.0, xanchor="right", x=1.0),
    )  # fmt: skip
    return fig
