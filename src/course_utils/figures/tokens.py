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

__all__ = [
    "attention_mask_figure",
    "embedding_lookup_figure",
    "extremes_first",
    "gradient_rows_figure",
    "label_sides",
    "word_scatter_figure",
    "wordpiece_figure",
]


def _tries(step: WordPieceStep) -> str:
    """How many candidates a step tried and dropped before the one it kept."""
    dropped = len(step.tried) - 1 if step.kept is not None else len(step.tried)
    if not dropped:
        return "the first try is in the vocabulary:"
    return f"tries, longest first ({dropped} not in it):"


WINDOW_LINES = 5  # a step's shrinking window: at most this many candidates written, the rest counted


def _window(step: WordPieceStep) -> str:
    """The candidates a step tried, one a line, longest first: a window shrinking from the right
    (``glorbiting ✗``, ``glorbitin ✗``, ..., ``glo ✓``), so that "longest match first" is seen. At
    most :data:`WINDOW_LINES` lines: the first ones, a count of those left out, the last two."""
    tried = list(step.tried)
    width = len(tried[0])
    marks = ["✗"] * len(tried)
    if step.kept is not None:
        marks[-1] = "✓"
    lines = [html.escape(t.ljust(width)).replace(" ", "\u00a0") + "\u00a0" + m for t, m in zip(tried, marks)]
    if len(lines) > WINDOW_LINES:
        hidden = len(lines) - (WINDOW_LINES - 1)
        lines = lines[:WINDOW_LINES - 3] + [f"⋮ {hidden} more ✗"] + lines[-2:]
    lines[-1] = f"<b>{lines[-1]}</b>" if step.kept is not None else lines[-1]
    return "<br>".join(lines)


def wordpiece_figure(word: str, steps: Sequence[WordPieceStep]) -> go.Figure:
    """WordPiece's greedy split of ``word``, one box per step, then the pieces.

    ``steps``: :func:`course_utils.tokenization.wordpiece_steps` of ``word`` (at most 8). Each box:
    where the step starts (``glo|rbiting``: what is done, then the rest), how many candidates it
    dropped, the window of candidates shrinking from the right (:func:`_window`), and the piece it kept,
    the longest candidate in the vocabulary; the last box lists the pieces. Laptops get two boxes a
    row where they fit, each row read left to right (an arrow runs down to the next row's first
    box), phones one column.
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
        texts.append(f"<b>step {k}</b>: {at}<br>{_tries(step)}<br>{_window(step)}<br>{kept}")
    pieces = wordpiece_pieces(steps)
    texts.append(f"<b>pieces</b> of {html.escape(word)}:<br>" + " ".join(f"<b>{html.escape(p)}</b>" for p in pieces))
    title = f"WordPiece splits “{html.escape(word)}”: at each step, the longest piece in the vocabulary"
    rows = [sorted(row) for row in boxes.snake_that_fits(texts)]  # every row read left to right, as text is
    return boxes.box_diagram(texts, title=title, wide_rows=rows)


REAL_COLOR, PADDING_COLOR = "#6CB8E6", plots.BLOCKED_COLOR  # mid blue, light grey: 58 grey levels apart (greyscale), dark text reads on both


def attention_mask_figure(tokens: Sequence[Sequence[str]], attention_mask) -> go.Figure:
    """A padded batch's attention mask with its tokens written in the cells: one column a sentence.

    ``tokens``: ``B`` lists of ``T`` tokens (padding included); ``attention_mask (B, T)``: 1 = real
    token, 0 = padding. Positions run down and sentences across (the batch as the printout above
    it reads, and wide enough cells for a token on a phone); each cell holds its token and is
    coloured by its mask value, two colours named in the legend (real, padding), so that the
    mask is a picture of the batch rather than a colour bar of 0 and 1.
    """
    mask = np.asarray(attention_mask)
    if mask.ndim != 2 or mask.size == 0 or not np.isin(mask, (0, 1)).all():
        raise ValueError(f"expected an attention_mask (B, T) of 0 and 1, got shape {mask.shape}")
    B, T = mask.shape
    if len(tokens) != B or any(len(row) != T for row in tokens):
        raise ValueError(f"expected B = {B} lists of T = {T} tokens, got lengths {[len(r) for r in tokens]}")
    text = np.array([[_shown(str(tokens[b][t])) for b in range(B)] for t in range(T)], dtype=object)  # (T, B)
    columns = [f"sentence {b}" for b in range(B)]
    fig = go.Figure(go.Heatmap(
        z=mask.T.astype(float), x=columns, y=[str(t) for t in range(T)], text=text, texttemplate="%{text}",
        colorscale=[[0, PADDING_COLOR], [0.5, PADDING_COLOR], [0.5, REAL_COLOR], [1, REAL_COLOR]], zmin=0, zmax=1,
        showscale=False, xgap=2, ygap=2, textfont=dict(color="#1A1A1A", size=12), name="attention_mask",
        hovertemplate="%{x}, position %{y}: %{text}<br>attention_mask = %{z}<extra></extra>",
    ))  # fmt: skip
    for name, colour in (("real token: 1", REAL_COLOR), ("padding: 0", PADDING_COLOR)):  # the legend's two colours
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name=name,
                                 marker=dict(symbol="square", size=14, color=colour, line=dict(color="#555555", width=1))))
    fig.update_xaxes(type="category", side="top", title_text=None, showgrid=False)
    fig.update_yaxes(type="category", autorange="reversed", title_text="position t", showgrid=False)
    real = [int(n) for n in mask.sum(axis=1)]
    fig.update_layout(
        title=dict(text=f"Attention mask of the batch: {', '.join(map(str, real))} real tokens, then padding",
                   x=0.02, xanchor="left"),
        template=plots.TEMPLATE, height=150 + 26 * T, margin=dict(l=70, r=10, t=110, b=20), font=dict(size=12),
        legend=dict(orientation="h", yanchor="bottom", y=1.06, xanchor="left", x=0),
    )  # fmt: skip
    return fig


def _faded(colorscale: str, share: float = 0.7) -> list[list]:
    """A plotly colour scale with each colour mixed ``share`` of the way to white."""
    from plotly.colors import get_colorscale, unlabel_rgb

    faded = []
    for edge, colour in get_colorscale(colorscale):
        r, g, b = (round(c + (255 - c) * share) for c in unlabel_rgb(colour))
        faded.append([edge, f"rgb({r},{g},{b})"])
    return faded


FADED_DIVERGING = _faded(plots.DIVERGING)  # the rows a one-hot's zeros cancel
FADED_TEXT = "#9A9A9A"


def embedding_lookup_figure(table, tokens: Sequence[str], token: int) -> go.Figure:
    """An embedding lookup as a product: ``onehot(token) (1, V)`` × ``E (V, D)`` = row ``token``.

    ``table (V, D)`` the embedding table, ``tokens (V,)`` its rows' tokens (``V`` at most 12, ``D``
    at most 8), ``token`` the id looked up. One grid, so that it reads the same on a phone: the
    one-hot vector as a first column (0 or 1 written in each cell, grey scale), beside the rows of
    the table it multiplies (every value written, diverging scale), the picked row framed; under
    them, the product, the picked row's values, framed too. The rows the one-hot's zeros cancel are
    faded (paler colours, grey values), so that "every 0 cancels a row" is seen.
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
    kept = np.zeros(V + 1, dtype=bool)
    kept[[token, V]] = True  # the row the 1 keeps, and the product; the zeros cancel the others
    fig.add_trace(go.Heatmap(
        z=np.where(kept[:, None], values, np.nan), x=columns[1:], y=rows, colorscale=plots.DIVERGING, zmin=-span,
        zmax=span, showscale=False, texttemplate="%{z:.2f}", xgap=2, ygap=2, name="table, then the product",
        hovertemplate="%{y}, %{x}: %{z:.2f}<extra></extra>", hoverongaps=False,
    ))  # fmt: skip
    fig.add_trace(go.Heatmap(  # the cancelled rows, faded: the same colours, mixed with white
        z=np.where(kept[:, None], np.nan, values), x=columns[1:], y=rows, colorscale=FADED_DIVERGING, zmin=-span,
        zmax=span, showscale=False, texttemplate="%{z:.2f}", textfont=dict(color=FADED_TEXT), xgap=2, ygap=2,
        name="rows times 0: cancelled", hovertemplate="%{y}, %{x}: %{z:.2f} × 0<extra></extra>", hoverongaps=False,
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


def _shown(token: str) -> str:
    """A token as a label: punctuation (``,`` ``.``), a dot at 11 px, in quotes, so that it shows."""
    return f"“{token}”" if token and not any(c.isalnum() for c in token) else token


def _runs(positions: Sequence[int]) -> str:
    """Positions as runs: ``[5, 6, 7, 9]`` -> ``"5–7, 9"``."""
    runs, first = [], None
    for k, t in enumerate(positions):
        if first is None:
            first = t
        if k + 1 == len(positions) or positions[k + 1] != t + 1:
            runs.append(f"{first}–{t}" if t > first else f"{t}")
            first = None
    return ", ".join(runs)


def gradient_rows_figure(ids, tokens_of: Sequence[str], moved, pad_id: int) -> go.Figure:
    """Which rows of an embedding table one training step moves, position by position.

    ``ids (B, T)``: the batch's token ids; ``tokens_of``: the vocabulary's tokens (``tokens_of[i]``
    is id ``i``'s); ``moved``: the ids whose row of ``∂loss/∂E`` is not zero (measured);
    ``pad_id``: the padding id (its row frozen by ``padding_idx``). Left, every real position of
    the batch, sentence by sentence (``b·t``: sentence ``b`` and position ``t``, both counted from 0
    as the lessons print them), then the ``[PAD]`` positions gathered in one bracket; right, the
    rows that moved, each with the number of positions whose gradients it sums (``×3``), then the
    ``[PAD]`` row and the rows no position reached, which stay where they are. A line joins each
    real position to the row of its token: solid for the first sentence, dashed, dotted for the
    next (readable without colour); one grey arrow joins the bracket of ``[PAD]`` positions to the
    frozen row. Punctuation tokens are quoted, so that a lone ``,`` shows.
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
    pad_name = tokens_of[pad_id]
    n_pads = int((ids == pad_id).sum())
    right = [f"{_shown(tokens_of[i])} ×{counts[i]}" for i in real]
    rest = V - len(real) - 1
    right += [f"{pad_name}: frozen", f"{rest:,} other rows: 0"]
    row_of = {i: k for k, i in enumerate(real)}
    positions = [(b, t) for b in range(B) for t in range(T) if ids[b, t] != pad_id]  # the real positions
    left = [f"{b}·{t} {_shown(tokens_of[int(ids[b, t])])}" for b, t in positions]  # b, t from 0, as printed
    n_left = len(positions) + (2 if n_pads else 0)  # the [PAD] bracket one slot below the last real position
    scale = max(n_left, len(right)) - 1
    y_left = np.linspace(0, scale, n_left)
    y_right = np.linspace(0, scale, len(right)) if len(right) > 1 else np.zeros(1)
    fig = go.Figure()
    for b in range(B):
        xs, ys = [], []
        for k, (b_k, t) in enumerate(positions):
            if b_k == b:
                xs.extend([0.0, 1.0, None])
                ys.extend([float(y_left[k]), float(y_right[row_of[int(ids[b, t])]]), None])
        fig.add_trace(go.Scatter(x=xs, y=plots.significant([v if v is not None else np.nan for v in ys]).tolist(),
                                 mode="lines", line=dict(color=plots.color(b), width=1.6, dash=plots.DASHES[b % 6]),
                                 name=f"sentence {b}", hoverinfo="name", connectgaps=False))  # fmt: skip
    for x, labels, ys, side, name in ((0.0, left, y_left[:len(positions)], "middle left", "positions"),
                                      (1.0, right, y_right, "middle right", "rows")):  # fmt: skip
        fig.add_trace(go.Scatter(x=[x] * len(labels), y=plots.significant(ys), mode="markers+text", text=labels,
                                 textposition=side, marker=dict(size=6, color="black"), name=name,
                                 showlegend=False, hoverinfo="text", textfont=dict(size=11)))  # fmt: skip
    if n_pads:  # one bracket for every [PAD] position, one arrow to the frozen row
        where = [f"{b}·{_runs([t for t in range(T) if ids[b, t] == pad_id])}" for b in range(B)
                 if (ids[b] == pad_id).any()]  # fmt: skip
        y_pad, y_frozen = float(y_left[-1]), float(y_right[len(real)])
        fig.add_annotation(x=0.0, y=y_pad, xref="x", yref="y", xanchor="right", showarrow=False, align="right",
                           xshift=-10, text=f"{n_pads} {pad_name} positions<br>{', '.join(where)}",
                           font=dict(size=11, color=plots.REFERENCE_COLOR))  # fmt: skip
        fig.add_shape(type="path", path=f"M -0.03 {y_pad - 0.8:.4g} L 0 {y_pad - 0.8:.4g} L 0 {y_pad + 0.8:.4g} "
                                        f"L -0.03 {y_pad + 0.8:.4g}", xref="x", yref="y",
                      line=dict(color=plots.REFERENCE_COLOR, width=2))  # the bracket: ] round the two lines
        fig.add_annotation(x=1.0, y=y_frozen, ax=0.0, ay=y_pad, xref="x", yref="y", axref="x", ayref="y", text="",
                           showarrow=True, arrowhead=2, arrowsize=1.1, arrowwidth=1.4, standoff=5,
                           arrowcolor=plots.REFERENCE_COLOR)  # fmt: skip
    for x, text in ((0.0, "position: sentence·t"), (1.0, "row of E it moves")):
        fig.add_annotation(x=x, y=-1.2, text=f"<b>{text}</b>", showarrow=False, xref="x", yref="y")
    fig.update_xaxes(visible=False, range=[-0.75, 1.75])
    fig.update_yaxes(visible=False, range=[scale + 1.2, -2.0])
    fig.update_layout(
        title=dict(text=f"One backward pass: {len(real)} of {V:,} rows of E move, each by the sum of its positions",
                   x=0.02, xanchor="left"),
        template=plots.TEMPLATE, height=140 + 17 * max(n_left, len(right)), margin=dict(l=10, r=10, t=70, b=10),
        font=dict(size=12), legend=dict(orientation="h", yanchor="bottom", y=1.0, xanchor="right", x=1.0),
    )  # fmt: skip
    return fig


def extremes_first(points) -> np.ndarray:
    """The order in which points ``(N, 2)`` are labelled: the furthest from the centre first, in
    units of each axis's spread (the ends of the sentiment axis, then the next), the crowded
    middle last."""
    xy = np.asarray(points, dtype=float)
    if xy.ndim != 2 or xy.shape[1] != 2 or len(xy) == 0 or not np.all(np.isfinite(xy)):
        raise ValueError(f"expected finite points of shape (N, 2), got {xy.shape}")
    spread = xy.std(axis=0)
    reach = np.abs((xy - xy.mean(axis=0)) / np.where(spread > 0, spread, 1.0)).max(axis=1)  # (N,)
    return np.argsort(-reach, kind="stable")


def word_scatter_figure(points, words: Sequence[str], groups: Sequence[str], *, title: str, x_title: str,
                        y_title: str) -> go.Figure:
    """Words as points ``(N, 2)``: a colour and marker symbol per group (legend), and the words'
    labels beside their points, placed extreme points first (:func:`extremes_first`).

    Each label takes the first place around its point that covers no marker and no earlier label
    (:func:`label_sides`), on a laptop's plot, and again on a phone's (``layout.meta["narrow_layout"]``);
    a label with no free place is not written (its point shows it on hover). So a phone labels the
    extremes and leaves the crowded middle bare, rather than dropping labels at random.
    """
    xy = plots.significant(points)
    words, groups = [str(w) for w in words], [str(g) for g in groups]
    if xy.ndim != 2 or xy.shape[1] != 2 or len(words) != len(xy) or len(groups) != len(xy):
        raise ValueError(f"expected points (N, 2) with a word and a group each, got {xy.shape}, {len(words)} words "
                         f"and {len(groups)} groups")  # fmt: skip
    for name, text in (("title", title), ("x_title", x_title), ("y_title", y_title)):
        plots.require_text(name, text)
    fig = go.Figure()
    for i, group in enumerate(dict.fromkeys(groups)):
        rows = [j for j, g in enumerate(groups) if g == group]
        fig.add_trace(go.Scatter(
            x=xy[rows, 0], y=xy[rows, 1], name=group, mode="markers", hovertext=[words[j] for j in rows],
            hoverinfo="text", marker=dict(size=10, color=plots.color(i), symbol=plots.SYMBOLS[i % len(plots.SYMBOLS)]),
        ))  # fmt: skip
    order = extremes_first(xy)
    pad = 0.08 * np.ptp(xy, axis=0) + 1e-9
    x_range = [round(float(xy[:, 0].min() - pad[0]), 4), round(float(xy[:, 0].max() + pad[0]), 4)]
    y_range = [round(float(xy[:, 1].min() - pad[1]), 4), round(float(xy[:, 1].max() + pad[1]), 4)]
    ordered = [words[j] for j in order]

    def notes(plot_px):  # every label that has a free place at this plot size, as annotations
        sides = label_sides(xy[order], ordered, x_range, y_range, plot_px)
        return [_point_label(xy[j], word, side) for j, word, side in zip(order, ordered, sides) if side]

    fig.update_layout(
        title=dict(text=title, x=0.02, xanchor="left"), template=plots.TEMPLATE, height=460,
        margin=dict(l=70, r=30, t=60, b=60), font=dict(size=13), annotations=notes(LAPTOP_PLOT_PX),
        legend=dict(orientation="h", yanchor="bottom", y=1.0, xanchor="right", x=1.0),
        meta=dict(narrow_layout=dict(annotations=notes(PHONE_PLOT_PX))),  # a phone: the extremes that fit
    )  # fmt: skip
    fig.update_xaxes(title_text=x_title, range=x_range)
    fig.update_yaxes(title_text=y_title, range=y_range)
    return fig


def _point_label(point, text: str, side: str) -> dict:
    """A point's label as an annotation on the ``side`` (a :data:`SIDES` place) of it, 7 px off."""
    vertical, horizontal = side.split()
    return dict(
        x=float(point[0]), y=float(point[1]), xref="x", yref="y", text=html.escape(text), showarrow=False,
        xanchor={"center": "center", "right": "left", "left": "right"}[horizontal],
        yanchor={"top": "bottom", "bottom": "top", "middle": "middle"}[vertical],
        xshift={"center": 0, "right": 7, "left": -7}[horizontal], yshift={"top": 7, "bottom": -7, "middle": 0}[vertical],
        font=dict(size=12),
    )  # fmt: skip


SIDES = ("top center", "bottom center", "middle right", "middle left", "top right", "top left", "bottom right",
         "bottom left")  # a point label's places, tried in this order
LAPTOP_PLOT_PX = (660, 340)  # the plot area of a scatter on a laptop (width, height)
PHONE_PLOT_PX = (270, 300)  # and on a phone: a 358 px box less the margins


def _label_box(x: float, y: float, side: str, width: float, height: float = 15.0, gap: float = 7.0):
    vertical, horizontal = side.split()
    left = {"center": x - width / 2, "right": x + gap, "left": x - gap - width}[horizontal]
    top = {"top": y - gap - height, "bottom": y + gap, "middle": y - height / 2}[vertical]
    return left, top, left + width, top + height


def label_sides(points, labels: Sequence[str], x_range, y_range, plot_px=LAPTOP_PLOT_PX) -> list[str]:
    """Each point's label place (a plotly ``textposition``), in the order given: the first of
    :data:`SIDES` where, on a laptop's plot (``plot_px``), the label covers no point's marker, no
    label placed before it and stays inside the plot; ``None`` where none is free (the label is not
    written; its point keeps it on hover). ``points (N, 2)`` in data units, axes spanning the ranges."""
    xy = np.asarray(points, dtype=float)
    sx, sy = plot_px[0] / (x_range[1] - x_range[0]), plot_px[1] / (y_range[1] - y_range[0])
    px = np.column_stack([(xy[:, 0] - x_range[0]) * sx, (y_range[1] - xy[:, 1]) * sy])  # pixels, y down
    markers = [(x - 6, y - 6, x + 6, y + 6) for x, y in px]
    placed, sides = [], []

    def hits(a, b):
        return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]

    for k, ((x, y), label) in enumerate(zip(px, labels)):
        width = 7.2 * len(label)
        for side in SIDES:
            box = _label_box(x, y, side, width)
            inside = box[0] >= 0 and box[2] <= plot_px[0] and box[1] >= 0 and box[3] <= plot_px[1]
            if inside and not any(hits(box, m) for j, m in enumerate(markers) if j != k) and \
                    not any(hits(box, other) for other in placed):
                placed.append(box)
                sides.append(side)
                break
        else:
            sides.append(None)
    return sides
