"""Lesson 04's figures and explorer: scaled dot-product attention for one query token, step by step.

:func:`qkv_token_figure` draws one query's scores ``q · k / sqrt(d_k)``, their softmax and the
weighted sum of the values; :func:`qkv_explorer` offers every token as the query in a dropdown
(a :class:`course_utils.widgets.Explorer`); :func:`attention_flow` draws where each token reads from.
"""

from __future__ import annotations

import functools
import html
from typing import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .. import plots
from ..widgets import Choice, Explorer
from . import boxes, canvas

__all__ = [
    "attention_flow",
    "attention_matrices_figure",
    "attention_matrices_numbers",
    "soft_search_figure",
    "soft_search_numbers",
    "multi_head_figure",
    "multi_head_numbers",
    "qkv_explorer",
    "qkv_token_figure",
    "query_path_figure",
    "query_path_numbers",
    "query_weights_figure",
    "shape_journey_figure",
    "shape_journey_steps",
]


def _check_qkv(queries, keys, values, tokens: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    q, k, v = (np.asarray(a, dtype=float) for a in (queries, keys, values))
    if q.ndim != 2 or k.ndim != 2 or v.ndim != 2:
        raise ValueError(f"expected queries (T, d_k), keys (T, d_k), values (T, d_v), got {q.shape}, {k.shape}, {v.shape}")
    if not (q.shape[0] == k.shape[0] == v.shape[0] == len(tokens)) or q.shape[1] != k.shape[1]:
        raise ValueError(
            f"expected queries (T, d_k), keys (T, d_k), values (T, d_v) and T tokens, got {q.shape}, {k.shape}, "
            f"{v.shape} and {len(tokens)} tokens"
        )
    return q, k, v


def _qkv_of(q: np.ndarray, k: np.ndarray, v: np.ndarray, query: int):
    """One query's scaled scores ``(T,)``, weights ``(T,)`` and weighted values ``(T, d_v)``."""
    scores = k @ q[query] / np.sqrt(q.shape[1])  # (T,)
    weights = np.exp(scores - scores.max())
    weights /= weights.sum()  # (T,), sums to 1
    return scores, weights, weights[:, None] * v  # (T, d_v): row j = w_j v_j


def _grey_bars(tokens: Sequence[str], values: np.ndarray, name: str) -> go.Bar:
    """One grey bar per key token: the query's ``name`` ("score" or "weight") for that key."""
    return go.Bar(
        x=tokens, y=plots.significant(values), name=name, showlegend=False,
        marker=dict(color="#777777", line=dict(color="black", width=0.5)),
        hovertemplate=f"key %{{x}}<br>{name} %{{y:.3f}}<extra></extra>",
    )


def qkv_token_figure(queries, keys, values, tokens: Sequence[str], query: int) -> go.Figure:
    """Scaled dot-product attention for one query token, step by step (lesson 04's explorer).

    ``queries (T, d_k)``, ``keys (T, d_k)``, ``values (T, d_v)``, ``tokens (T,)``; ``query`` the
    index of the token that attends. Three panels: its scaled scores ``q . k_j / sqrt(d_k)`` for
    every key ``j``; its weights, their softmax; and its output, ``sum_j w_j v_j``, one bar per
    output number, each stacked from the ``T`` weighted values ``w_j v_j`` (one colour and hatch
    per key token, negative parts stacked below zero), with a diamond at the sum. The axis ranges
    cover every query, so that they stay put while the query changes.
    """
    tokens = plots.unique_labels([str(t) for t in tokens])
    q, k, v = _check_qkv(queries, keys, values, tokens)
    if isinstance(query, bool) or not isinstance(query, (int, np.integer)) or not 0 <= query < len(tokens):
        raise ValueError(f"expected query to be a token index in 0 .. {len(tokens) - 1}, got {query!r}")
    every = [_qkv_of(q, k, v, i) for i in range(len(tokens))]
    scores, weights, weighted = every[query]
    dims = [f"out[{j}]" for j in range(v.shape[1])]
    fig = make_subplots(
        rows=3, cols=1, vertical_spacing=0.13
    )  # fmt: skip, stacked: readable at phone width too
    for row, (name, values) in enumerate([("score", scores), ("weight", weights)], start=1):
        fig.add_trace(_grey_bars(tokens, values, name), row=row, col=1)
    hatches = ["", "/", ".", "x", "-", "|", "+", "\\"]
    for j, token in enumerate(tokens):
        fig.add_trace(
            go.Bar(x=dims, y=plots.significant(weighted[j]), name=f"weight × value of {token}",
                   marker=dict(color=plots.color(j), pattern_shape=hatches[j % len(hatches)],
                               line=dict(color="black", width=0.5)),
                   hovertemplate=f"{token}: " + "%{y:.3f}<extra></extra>"),
            row=3, col=1,
        )  # fmt: skip
    fig.add_trace(
        go.Scatter(x=dims, y=plots.significant(weighted.sum(axis=0)), name="output (the sum)",
                   mode="markers", marker=dict(symbol="diamond", size=12, color="black"),
                   hovertemplate="%{x} = %{y:.3f}<extra></extra>"),
        row=3, col=1,
    )  # fmt: skip
    all_scores = np.array([s for s, _, _ in every])
    low = min(0.0, float(all_scores.min()))
    high = max(0.0, float(all_scores.max()))
    pad = 0.05 * (high - low or 1.0)
    stacked = np.array([[np.where(w > 0, w, 0).sum(0), np.where(w < 0, w, 0).sum(0)] for _, _, w in every])
    top, bottom = max(0.0, float(stacked[:, 0].max())), min(0.0, float(stacked[:, 1].min()))
    margin = 0.05 * (top - bottom or 1.0)
    fig.update_yaxes(range=[low - pad, high + pad], title_text="score", row=1, col=1)
    fig.update_yaxes(range=[0, 1.02], title_text="weight", row=2, col=1)
    fig.update_yaxes(range=[bottom - margin, top + margin], title_text="value", row=3, col=1)
    fig.update_xaxes(type="category", title_text="1. scores q·k / √d_k, one per key token", row=1, col=1)
    fig.update_xaxes(type="category", title_text="2. weights: the softmax of the scores", row=2, col=1)
    fig.update_xaxes(type="category", title_text="3. output: Σ weight × value, number by number", row=3, col=1)
    best = int(np.argmax(weights))
    title = f"Query {tokens[query]}:<br>largest weight {weights[best]:.2f}, on {tokens[best]}"
    fig.update_layout(
        title=dict(text=title, x=0.02, xanchor="left", y=0.975, yanchor="top"),
        template=plots.TEMPLATE,
        barmode="relative",
        height=940,
        margin=dict(l=60, r=30, t=140, b=150),  # the title, then the twin's menu below it
        font=dict(size=13),
        legend=dict(orientation="h", yanchor="top", y=-0.07, xanchor="left", x=0.0),
    )
    return fig


def qkv_explorer(queries, keys, values, tokens: Sequence[str], *, default: int = 0) -> Explorer:
    """The explorer of lesson 04: pick the query token of :func:`qkv_token_figure` in a dropdown.

    Shapes as there; ``default`` the index of the token shown first.
    """
    tokens = [str(t) for t in tokens]
    q, k, v = _check_qkv(queries, keys, values, tokens)
    draw = functools.partial(qkv_token_figure, q, k, v, tokens)
    options = {f"{i}: {token}": i for i, token in enumerate(tokens)}
    return Explorer(draw, [Choice("query", options, default=default, label="query token")])


def attention_flow(
    weights,
    tokens: Sequence[str],
    *,
    title: str,
    key_tokens: Sequence[str] | None = None,
    top_k: int = 2,
    max_width: float = 16.0,
    height: int | None = None,
) -> go.Figure:
    """Where each token reads from: its ``top_k`` strongest attention weights drawn as lines.

    ``weights`` has shape ``(T_q, T_k)``: row ``i`` holds the weights of the query token
    ``tokens[i]`` over the key tokens ``key_tokens`` (default: ``tokens``, as in self-attention).
    Query tokens form the left column and key tokens the right column, both in sentence order from
    top to bottom. Each query token is joined to its ``top_k`` largest weights (ties: the earlier
    key) by lines in its own palette colour whose width is proportional to the weight (a weight of 1
    is ``max_width`` pixels wide), so the figure reads without colour too; hovering over the middle
    of a line shows the weight. One legend entry per query token shows or hides its lines.
    """
    w = plots.significant(weights)
    if w.ndim != 2:
        raise ValueError(f"expected weights of shape (T_q, T_k), got an array of shape {w.shape}")
    keys = list(tokens) if key_tokens is None else list(key_tokens)
    if w.shape != (len(tokens), len(keys)):
        raise ValueError(
            f"expected weights of shape (len(tokens)={len(tokens)}, len(key_tokens)={len(keys)}), got {w.shape}"
        )
    if w.size == 0 or not np.all(np.isfinite(w)) or np.any(w < 0):
        raise ValueError("expected non-empty, finite, non-negative attention weights (a softmax output)")
    if isinstance(top_k, bool) or not isinstance(top_k, (int, np.integer)) or not 1 <= top_k <= len(keys):
        raise ValueError(f"expected top_k to be an integer from 1 to T_k={len(keys)}, got {top_k!r}")
    if not max_width > 0:
        raise ValueError(f"expected a positive max_width (pixels), got {max_width!r}")
    plots.require_text("title", title)
    fig = go.Figure()
    for i, query in enumerate(tokens):
        strongest = np.argsort(-w[i], kind="stable")[:top_k]  # (top_k,) key indices, largest first
        for rank, j in enumerate(strongest):
            fig.add_trace(
                go.Scatter(
                    x=[0.0, 0.5, 1.0],
                    y=[float(i), (i + j) / 2, float(j)],
                    mode="lines",
                    line=dict(color=plots.color(i), dash=plots.DASHES[i % len(plots.DASHES)], width=max(0.5, float(max_width * w[i, j]))),
                    opacity=0.75,
                    name=str(query),
                    legendgroup=f"query {i}",
                    showlegend=bool(rank == 0),
                    hovertemplate=f"{html.escape(str(query))} → {html.escape(str(keys[j]))}: "
                    f"weight {w[i, j]:.3f}<extra></extra>",
                )
            )
    for x, labels, side, name in ((0.0, list(tokens), "middle left", "queries"), (1.0, keys, "middle right", "keys")):
        fig.add_trace(
            go.Scatter(
                x=[x] * len(labels),
                y=[float(k) for k in range(len(labels))],
                mode="markers+text",
                text=[str(label) for label in labels],
                textposition=side,
                marker=dict(size=12, color="white", line=dict(width=2, color="black")),
                name=name,
                showlegend=False,
                hoverinfo="skip",
            )
        )
    rows = max(len(tokens), len(keys))
    for x, text in ((0.0, "query: reads from →"), (1.0, "key: is read")):
        fig.add_annotation(x=x, y=-0.9, text=f"<b>{text}</b>", showarrow=False, xref="x", yref="y")
    fig.update_xaxes(visible=False, range=[-0.55, 1.55])
    fig.update_yaxes(visible=False, range=[rows - 0.4, -1.3])  # token 0 on top
    fig.update_layout(
        title=dict(text=title, x=0.02, xanchor="left"),
        template=plots.TEMPLATE,
        height=height or max(320, 110 + 46 * rows),
        margin=dict(l=30, r=30, t=60, b=20),
        font=dict(size=13),
        legend=dict(title=dict(text="query token"), itemclick="toggle"),
    )
    return fig


# --------------------------------------------------------------------------------------------
# Box diagrams drawn from the numbers (course_utils.figures.boxes): one query's whole path, and
# multi-head split / attend / merge. The query path has a layout in two rows for laptops and one
# in a single column for phones.


def _check_tokens(tokens: Sequence[str], n: int) -> list[str]:
    if isinstance(tokens, str) or len(tokens) != n:
        raise ValueError(f"expected one token per row of x, {n} of them, got {tokens!r}")
    labels = [str(t) for t in tokens]
    if any(not 0 < len(t) <= 8 for t in labels):
        raise ValueError(f"expected tokens of 1 to 8 characters (they label the boxes' lines), got {labels}")
    return labels


def _check_query(query, n: int) -> int:
    if isinstance(query, bool) or not isinstance(query, (int, np.integer)) or not 0 <= query < n:
        raise ValueError(f"expected query to be a token index in 0 .. {n - 1}, got {query!r}")
    return int(query)


def _matrix(name: str, value, shape_text: str) -> np.ndarray:
    array = np.asarray(value, dtype=float)
    if array.ndim != 2 or array.size == 0 or not np.all(np.isfinite(array)):
        raise ValueError(f"expected {name} to be a finite 2-D array {shape_text}, got shape {array.shape}")
    return array


def _softmax(scores: np.ndarray) -> np.ndarray:
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return weights / weights.sum(axis=-1, keepdims=True)


def query_path_numbers(x, W_Q, W_K, W_V, query: int) -> dict[str, np.ndarray]:
    """The numbers :func:`query_path_figure` draws, for the query token ``query`` of ``x (T, D)``.

    ``W_Q, W_K (D, d_k)``, ``W_V (D, d_v)``. Returns ``q (d_k,)``, ``keys (T, d_k)``, ``values
    (T, d_v)``, ``scores (T,)`` (``q · k_j / sqrt(d_k)``), ``weights (T,)`` (their softmax),
    ``weighted (T, d_v)`` (row ``j`` is ``w_j v_j``) and ``output (d_v,)`` (their sum).
    """
    x = _matrix("x", x, "(T, D)")
    W_Q, W_K, W_V = (_matrix(n, w, "(D, d)") for n, w in (("W_Q", W_Q), ("W_K", W_K), ("W_V", W_V)))
    D = x.shape[1]
    if W_Q.shape[0] != D or W_K.shape[0] != D or W_V.shape[0] != D or W_Q.shape[1] != W_K.shape[1]:
        raise ValueError(
            f"expected W_Q (D={D}, d_k), W_K (D={D}, d_k) and W_V (D={D}, d_v), got {W_Q.shape}, {W_K.shape}, {W_V.shape}"
        )
    query = _check_query(query, x.shape[0])
    q, keys, values = x[query] @ W_Q, x @ W_K, x @ W_V
    scores = keys @ q / np.sqrt(W_Q.shape[1])  # (T,)
    weights = _softmax(scores)  # (T,)
    weighted = weights[:, None] * values  # (T, d_v)
    return dict(q=q, keys=keys, values=values, scores=scores, weights=weights, weighted=weighted,
                output=weighted.sum(axis=0))  # fmt: skip


def query_path_figure(x, W_Q, W_K, W_V, tokens: Sequence[str], query: int) -> go.Figure:
    """One query's whole path through self-attention, drawn step by step from its numbers.

    ``x (T, D)`` the token vectors (embedding + position), ``W_Q, W_K (D, d_k)`` and ``W_V (D, d_v)``
    the projections, ``tokens (T,)`` (at most 8 characters each), ``query`` the index of the token
    that attends. 1. every token's vector ``x``, a grid of its numbers (the query's row outlined);
    2. the query's ``q = x W_Q`` and every token's key ``k = x W_K``; 3. the scores
    ``q · k_j / sqrt(d_k)``, one bar per key token from a zero line; 4. their softmax, the weights,
    bars as long as the weights; 5. every token's value ``v = x W_V`` and the same scaled by its
    weight, ``w_j v_j``, row by row, and their column sums, the output strip. Grids are coloured by
    value and write their numbers to 1 decimal, the bars theirs to 2. Laptops: 1 → 2 → 3 → 4, then
    5 under the weights; phones: three rows, each read left to right. At most 6 tokens and vectors
    of at most 5 numbers. Numbers: :func:`query_path_numbers`'.
    """
    x = _matrix("x", x, "(T, D)")
    labels = _check_tokens(tokens, x.shape[0])
    query = _check_query(query, len(labels))
    n = query_path_numbers(x, W_Q, W_K, W_V, query)
    T, D = x.shape
    d_k, d_v = len(n["q"]), n["values"].shape[1]
    if max(D, d_k, d_v) > 5 or T > 6:
        raise ValueError(f"expected at most 6 tokens and vectors of at most 5 numbers (every cell holds its number), "
                         f"got T={T}, D={D}, d_k={d_k}, d_v={d_v}")  # fmt: skip
    name = html.escape(labels[query])
    cell, label_px = (26, 18), 40
    head = 16 + cell[1] + 4 + 16  # a grid's top, under its title lines (and q's strip, over the keys)
    one = lambda a: [[boxes.number(v, 1) for v in row] for row in np.atleast_2d(a)]  # noqa: E731

    def title(c, x0, width, lines):
        for k, line in enumerate(lines):
            c.text(x0 + width / 2, k * 15, line, anchor=("center", "top"), size=11 if k == 0 else 10,
                   color=None if k == 0 else "#555555")  # fmt: skip

    def matrix(key, values, lines, *, labelled=False, outlined=None) -> canvas.Canvas:
        values = np.atleast_2d(values)
        width = cell[0] * values.shape[1]
        c = canvas.Canvas((label_px if labelled else 0) + width)
        x0 = label_px if labelled else 0
        title(c, x0, width, lines)
        canvas.grid(c, x0, head, values, cell=cell, colours=_value_colours(values), texts=one(values), name=key,
                    outline_row=outlined)  # fmt: skip
        if labelled:
            for i, token in enumerate(labels):
                c.text(x0 - 5, head + (i + 0.5) * cell[1], html.escape(token), anchor=("right", "middle"), size=10,
                       name=f"row {key} {i}")  # fmt: skip
        return c

    def bars(key, values, lines, colour, *, labelled=False, low=None, high=None, bar_px=84) -> canvas.Canvas:
        """One horizontal bar per token from a zero line, its value written at its end."""
        text_px = 34
        low = min(0.0, float(values.min())) if low is None else low
        high = max(0.0, float(values.max())) if high is None else high
        per = bar_px / (high - low)
        x0 = (label_px + 6 if labelled else 0) + (text_px if low < 0 else 0)
        c = canvas.Canvas(x0 + bar_px + text_px)
        start = label_px + 6 if labelled else 0
        title(c, start, c.width - start, lines)
        zero = x0 - low * per
        for j, value in enumerate(values):
            y = head + (j + 0.5) * cell[1]
            end = zero + value * per
            if abs(value * per) >= 0.5:
                c.rect(min(zero, end), y - 5, max(zero, end), y + 5, fill=colour, line=colour, name=f"{key} {j}")
            c.text(end + (3 if value >= 0 else -3), y, boxes.number(value), anchor=("left" if value >= 0 else "right",
                   "middle"), size=10, name=f"{key} {j}")  # fmt: skip
            if labelled:
                c.text(label_px - 5, y, html.escape(labels[j]), anchor=("right", "middle"), size=10)
        c.line(zero, head - 3, zero, head + T * cell[1] + 3, color="#777777", name=f"{key} zero")
        return c

    def q_and_keys() -> canvas.Canvas:
        width = cell[0] * d_k
        c = canvas.Canvas(width)
        c.text(width / 2, 0, f"2. q of {name}", anchor=("center", "top"), size=11)
        canvas.grid(c, 0, 16, n["q"][None], cell=cell, colours=_value_colours(n["q"][None]), texts=one(n["q"]),
                    name="q")  # fmt: skip
        c.text(width / 2, 16 + cell[1] + 4, "keys K = x W_K", anchor=("center", "top"), size=10, color="#555555")
        canvas.grid(c, 0, head, n["keys"], cell=cell, colours=_value_colours(n["keys"]), texts=one(n["keys"]),
                    name="K")  # fmt: skip
        return c

    def weighted() -> canvas.Canvas:
        """w_j v_j row by row, a rule, and the output strip: their column sums."""
        width = cell[0] * d_v
        c = canvas.Canvas(width + 30)
        title(c, 30, width, ["5. w_j × v_j", "Σ of the rows"])
        reach = float(np.abs(n["values"]).max())
        colours = _value_colours(n["weighted"], low=-reach, high=reach)  # the values' scale: small weights fade
        canvas.grid(c, 30, head, n["weighted"], cell=cell, colours=colours, texts=one(n["weighted"]), name="wv")
        rule = head + T * cell[1] + 4
        c.line(30, rule, 30 + width, rule, color="#777777", width=1.5, name="sum rule")
        c.text(26, rule + 4 + cell[1] / 2, "Σ", anchor=("right", "middle"), size=13)
        out = n["output"][None]
        canvas.grid(c, 30, rule + 4, out, cell=cell, colours=_value_colours(out, low=-reach, high=reach),
                    texts=one(out), name="output", outline_row=0)  # fmt: skip
        c.text(30 + width / 2, rule + 8 + cell[1], f"output of {name}", anchor=("center", "top"), size=11)
        return c

    parts = dict(
        x=matrix("x", x, ["1. x (T, D)", "embedding + position"], labelled=True, outlined=query),
        qk=q_and_keys(),
        scores=bars("score", n["scores"], [f"3. scores q·k/√{d_k}"], "#777777"),
        weights=bars("weight", n["weights"], ["4. weights", "softmax, sum 1"], plots.color(0), low=0.0, high=1.0),
        values=matrix("V", n["values"], ["values V = x W_V", f"(T, d_v) = ({T}, {d_v})"], labelled=True),
        weighted=weighted(),
    )
    gap, title_y, grid_bottom = 34, 7, head + T * cell[1]

    def side_by_side(c, keys, left, top):
        """Parts left to right from ``left``, their titles level, an arrow at the titles' height
        across each gap; returns each part's left edge."""
        lefts = []
        for key in keys:
            if lefts:
                c.arrow(left - gap + 4, top + title_y, left - 4, top + title_y)
            lefts.append(left)
            c.add(parts[key], left, top)
            left += parts[key].width + gap
        return lefts

    # Laptops: 1 → 2 → 3 → 4 in a row, the rows of the tokens level; 5 under the weights, the values beside it.
    wide = canvas.Canvas(canvas.WIDE_DESIGN_PX)
    lefts = side_by_side(wide, ["x", "qk", "scores", "weights"], 0.0, 0.0)
    w_left = lefts[-1] + (parts["weights"].width - parts["weighted"].width) / 2
    row2 = grid_bottom + 36
    v_left = w_left - gap - parts["values"].width
    side_by_side(wide, ["values", "weighted"], v_left, row2)
    w_x = w_left + 30 + cell[0] * d_v / 2
    wide.arrow(w_x, grid_bottom + 6, w_x, row2 - 4)

    # Phones: x → q, K; then scores → weights; then values → w_j v_j → the output.
    parts["scores"] = bars("score", n["scores"], [f"3. scores q·k/√{d_k}"], "#777777", labelled=True, bar_px=70)
    parts["weights"] = bars("weight", n["weights"], ["4. weights", "softmax, sum 1"], plots.color(0), low=0.0,
                            high=1.0, bar_px=70)  # fmt: skip
    narrow = canvas.Canvas(canvas.NARROW_DESIGN_PX)
    lefts = side_by_side(narrow, ["x", "qk"], 0.0, 0.0)
    y = grid_bottom + 40
    gap = canvas.NARROW_DESIGN_PX - parts["scores"].width - parts["weights"].width  # side_by_side reads it
    side_by_side(narrow, ["scores", "weights"], 0.0, y)
    bend = grid_bottom + 4 + 14
    qk_x, scores_x = lefts[1] + cell[0] * d_k / 2, label_px + 70
    narrow.line(qk_x, grid_bottom + 4, qk_x, bend, color=boxes.ARROW_COLOR, width=2)
    narrow.line(qk_x, bend, scores_x, bend, color=boxes.ARROW_COLOR, width=2)
    narrow.arrow(scores_x, bend, scores_x, y - 4)
    y2 = y + grid_bottom + 30
    gap = canvas.NARROW_DESIGN_PX - parts["values"].width - parts["weighted"].width - 6
    side_by_side(narrow, ["values", "weighted"], 0.0, y2)
    w_x = parts["values"].width + gap + 30 + cell[0] * d_v / 2
    narrow.arrow(w_x, y + grid_bottom + 6, w_x, y2 - 4)
    return canvas.canvas_figure(wide, narrow, title=f"One query's path through self-attention: “{name}”")


def multi_head_numbers(x, params, n_heads: int, query: int) -> dict[str, np.ndarray]:
    """The numbers :func:`multi_head_figure` draws, for the query token ``query`` of ``x (T, D)``.

    ``params`` an :class:`course_utils.attention.AttentionParams` (``W (D, D)``, ``b (D,)``),
    ``n_heads`` dividing ``D``. Returns ``q (D,)`` (the query's projection, before the split),
    ``head_q (H, d_head)`` (its pieces), ``weights (H, T)`` (the query's weights in each head),
    ``head_outputs (H, d_head)``, ``concatenated (D,)`` and ``output (D,)`` (after ``W_o, b_o``),
    computed head by head, as the lesson's shape journey does; and ``queries (T, D)``, every
    token's projection, and ``head_queries (H, T, d_head)``, the same cut into heads; for every
    token, ``head_keys``, ``head_values`` and ``every_head_output``, ``(H, T, d_head)`` each,
    ``every_concatenated (T, D)`` and ``every_output (T, D)``.
    """
    x = _matrix("x", x, "(T, D)")
    T, D = x.shape
    for name in ("W_q", "b_q", "W_k", "b_k", "W_v", "b_v", "W_o", "b_o"):
        if not hasattr(params, name):
            raise ValueError(f"expected params with W_q, b_q, ..., W_o, b_o (an AttentionParams), got {type(params).__name__}")
    W = {n: np.asarray(getattr(params, n), dtype=float) for n in ("W_q", "W_k", "W_v", "W_o")}
    b = {n: np.asarray(getattr(params, n), dtype=float) for n in ("b_q", "b_k", "b_v", "b_o")}
    if any(w.shape != (D, D) for w in W.values()) or any(v.shape != (D,) for v in b.values()):
        raise ValueError(f"expected params of d_model D={D} (W (D, D), b (D,)), the width of x {x.shape}")
    if isinstance(n_heads, bool) or not isinstance(n_heads, (int, np.integer)) or n_heads < 1 or D % n_heads:
        raise ValueError(f"expected n_heads, a positive integer dividing D={D}, got {n_heads!r}")
    query = _check_query(query, T)
    H, d_head = int(n_heads), D // int(n_heads)
    q, k, v = (x @ W[f"W_{n}"] + b[f"b_{n}"] for n in "qkv")  # (T, D) each
    split = [a.reshape(T, H, d_head).transpose(1, 0, 2) for a in (q, k, v)]  # (H, T, d_head) each
    scores = split[0] @ split[1].transpose(0, 2, 1) / np.sqrt(d_head)  # (H, T, T)
    weights = _softmax(scores)  # (H, T, T)
    head_outputs = weights @ split[2]  # (H, T, d_head)
    concatenated = head_outputs.transpose(1, 0, 2).reshape(T, D)  # (T, D)
    output = concatenated @ W["W_o"] + b["b_o"]  # (T, D)
    return dict(q=q[query], queries=q, head_q=split[0][:, query], head_queries=split[0], weights=weights[:, query],
                head_outputs=head_outputs[:, query], concatenated=concatenated[query],
                output=output[query], head_keys=split[1], head_values=split[2], every_head_output=head_outputs,
                every_concatenated=concatenated, every_output=output)  # fmt: skip


HEAD_TINTS = ("#f0b860", "#8fc3e6")  # head 0 orange, head 1 blue: light, yet kept in dark mode (black text)


def multi_head_figure(x, params, n_heads: int, tokens: Sequence[str], query: int) -> go.Figure:
    """Multi-head attention for one sentence, drawn: split into heads, attend per head, merge.

    ``x (T, D)`` the sentence's vectors, ``params`` an :class:`course_utils.attention.AttentionParams`
    of width ``D`` (at most 4), ``n_heads`` (1 or 2) dividing ``D``, ``tokens (T,)``, ``query`` the
    token whose weights are drawn. The queries ``Q = x W_q + b_q``, ``(T, D)``, a grid of numbers
    whose columns are tinted by the head they go to; one block per head (framed in its tint): its
    columns of ``Q``, ``K`` and ``V``, three ``(T, D/H)`` grids, and the query's weights over the
    key tokens as bars as long as the weights, one per row of ``K`` and ``V``; then the heads'
    outputs side by side again, ``(T, D)``, tinted by head, and the output projection
    ``× W_o + b_o``, ``(T, D)``. The query's row is outlined. Numbers: :func:`multi_head_numbers`'
    (1 decimal; the weights 2). Laptops: the heads side by side; phones: one under the other.
    """
    x = _matrix("x", x, "(T, D)")
    labels = _check_tokens(tokens, x.shape[0])
    n = multi_head_numbers(x, params, n_heads, query)
    query = int(query)
    T, D = x.shape
    H, d_head = int(n_heads), D // int(n_heads)
    if D > 4 or H > 2 or T > 6:
        raise ValueError(f"expected D of at most 4, at most 2 heads and 6 tokens (every cell holds its number), "
                         f"got D={D}, H={H}, T={T}")  # fmt: skip
    one = lambda a: [[boxes.number(v, 1) for v in row] for row in a]  # noqa: E731
    tinted = lambda rows, cols, head_of: [[HEAD_TINTS[head_of(j)] for j in range(cols)] for _ in range(rows)]  # noqa: E731
    by_column = lambda j: j // d_head  # noqa: E731
    name = html.escape(labels[query])

    def matrix(c, x0, y0, key, values, cell, colours, title, shape=None, rows_labelled=False, outlined=True):
        width = cell[0] * values.shape[1]
        c.text(x0 + width / 2, y0, title, anchor=("center", "top"), size=11)
        top = y0 + 15
        if shape:
            c.text(x0 + width / 2, top, shape, anchor=("center", "top"), size=10, color="#555555")
            top += 15
        top += 4
        canvas.grid(c, x0, top, values, cell=cell, colours=colours, texts=one(values), name=key,
                    outline_row=query if outlined else None)  # a query's row; not in the keys and values
        if rows_labelled:
            for i, token in enumerate(labels):
                c.text(x0 - 5, top + (i + 0.5) * cell[1], html.escape(token), anchor=("right", "middle"), size=10,
                       name=f"row {key} {i}")  # fmt: skip
        return x0 + width, top, top + cell[1] * T

    def head_block(h: int) -> canvas.Canvas:
        """Head ``h``: its slices of Q, K, V and the query's weights, framed in its tint."""
        c = canvas.Canvas(canvas.NARROW_DESIGN_PX)
        cell, label_px, gap, bar_px = (28, 18), 40, 6, 68
        columns = f"{h * d_head}–{(h + 1) * d_head - 1}" if d_head > 1 else f"{h * d_head}"
        c.text(6, 4, f"<b>head {h}</b>: columns {columns}, (T, D/H) = ({T}, {d_head}) each", anchor=("left", "top"),
               size=11)  # fmt: skip
        y0, left, top = 32, label_px, 0.0
        for key, values in (("Q", n["head_queries"][h]), ("K", n["head_keys"][h]), ("V", n["head_values"][h])):
            sub = "₀₁₂"[h]
            right, top, bottom = matrix(c, left, y0, f"{key}{h}", values, cell, tinted(T, d_head, lambda j: h),
                                        f"{key}{sub}", rows_labelled=key == "Q", outlined=key == "Q")  # fmt: skip
            left = right + gap
        left += 6
        c.text(left, top - 3, f"weights<br>of {name}", anchor=("left", "bottom"), size=10)
        for j, w in enumerate(n["weights"][h]):
            y = top + (j + 0.5) * cell[1]
            if w * bar_px >= 0.5:
                c.rect(left, y - 5, left + w * bar_px, y + 5, fill=plots.color(0), line=plots.color(0),
                       name=f"weight {h} {j}")  # the outline: the site lightens it in dark mode
            c.text(left + w * bar_px + 3, y, boxes.number(w), anchor=("left", "middle"), size=10,
                   name=f"weight {h} {j}")  # fmt: skip
        c.rect(1, 0, canvas.NARROW_DESIGN_PX - 1, bottom + 6, fill="rgba(0,0,0,0)", line=HEAD_TINTS[h],
               line_width=2, name=f"head {h}")  # fmt: skip
        return c

    def q_part(cell) -> canvas.Canvas:
        c = canvas.Canvas(40 + cell[0] * D + 4)
        matrix(c, 40, 0, "Q", n["queries"], cell, tinted(T, D, by_column), "<b>Q</b> = x W_q + b_q",
               f"(T, D) = ({T}, {D})", rows_labelled=True)  # fmt: skip
        return c

    def merge_part(cell) -> canvas.Canvas:
        c = canvas.Canvas(canvas.NARROW_DESIGN_PX)
        right, top, _ = matrix(c, 40, 0, "merged", n["every_concatenated"], cell, tinted(T, D, by_column),
                               "<b>heads side by side</b>", f"(T, D) = ({T}, {D})", rows_labelled=True)  # fmt: skip
        c.text(right + 11, top + cell[1] * T / 2, "→", anchor=("center", "middle"), size=15)
        matrix(c, right + 22, 0, "out", n["every_output"], cell, _value_colours(n["every_output"]),
               "<b>× W_o + b_o</b>", f"(T, D) = ({T}, {D})")  # fmt: skip
        return c

    heads = [head_block(h) for h in range(H)]
    cell = (30, 18)
    q, merge = q_part(cell), merge_part(cell)

    # Laptops: Q on top, the heads side by side under it, the merge under them.
    W = canvas.WIDE_DESIGN_PX
    wide = canvas.Canvas(W)
    q_left = (W - q.width) / 2
    wide.add(q, q_left, 0)
    heads_top = q.bottom + 44
    head_lefts = [(W - H * canvas.NARROW_DESIGN_PX - (H - 1) * 20) / 2 + h * (canvas.NARROW_DESIGN_PX + 20)
                  for h in range(H)]  # fmt: skip
    for h, block in enumerate(heads):
        wide.add(block, head_lefts[h], heads_top)
        column_x = q_left + 40 + cell[0] * d_head * (h + 0.5)
        wide.arrow(column_x, q.bottom + 4, head_lefts[h] + canvas.NARROW_DESIGN_PX / 2, heads_top - 4, name=f"split {h}")
    merge_top = heads_top + max(b.bottom for b in heads) + 44
    merge_left = (W - merge.width) / 2 + 20
    wide.add(merge, merge_left, merge_top)
    for h in range(H):
        column_x = merge_left + 40 + cell[0] * d_head * (h + 0.5)
        wide.arrow(head_lefts[h] + canvas.NARROW_DESIGN_PX / 2, heads_top + heads[h].bottom + 4, column_x,
                   merge_top - 4, name=f"merge {h}")  # fmt: skip

    # Phones: one column.
    narrow = canvas.Canvas(canvas.NARROW_DESIGN_PX)
    narrow.add(q, (canvas.NARROW_DESIGN_PX - q.width) / 2, 0)
    y = q.bottom + 30
    narrow.arrow(canvas.NARROW_DESIGN_PX / 2, q.bottom + 4, canvas.NARROW_DESIGN_PX / 2, y - 4, name="split")
    for block in heads:
        narrow.add(block, 0, y)
        y += block.bottom + 10
    y += 20
    narrow.arrow(canvas.NARROW_DESIGN_PX / 2, y - 26, canvas.NARROW_DESIGN_PX / 2, y - 4, name="merge")
    narrow.add(merge, (canvas.NARROW_DESIGN_PX - merge.width) / 2 + 20, y)
    title = f"Multi-head attention for “{name}”: split the columns, attend per head, merge"
    return canvas.canvas_figure(wide, narrow, title=title)


# --------------------------------------------------------------------------------------------
# The soft search: queries and keys as vectors in the plane of a tiny store


def soft_search_numbers(keys, values, queries: dict) -> dict[str, dict[str, np.ndarray]]:
    """What each query of a soft search finds: ``keys (N, 2)``, ``values (N, d_v)``, ``queries``
    a dict of names to ``(2,)`` vectors. Returns, per query name, ``scores (N,)`` (``keys @ q``,
    unscaled, as the lesson's store computes them), ``weights (N,)`` (their softmax) and ``output
    (d_v,)`` (``weights @ values``).
    """
    keys, values = _matrix("keys", keys, "(N, 2)"), _matrix("values", values, "(N, d_v)")
    if keys.shape[1] != 2 or values.shape[0] != keys.shape[0]:
        raise ValueError(f"expected keys (N, 2) and values (N, d_v) of one row per item, got {keys.shape} and "
                         f"{values.shape}")  # fmt: skip
    if not isinstance(queries, dict) or not queries:
        raise ValueError(f"expected queries as a non-empty dict of names to (2,) vectors, got {queries!r}")
    found = {}
    for name, q in queries.items():
        plots.require_text("a query's name", name)
        q = np.asarray(q, dtype=float)
        if q.shape != (2,) or not np.all(np.isfinite(q)):
            raise ValueError(f"expected the query {name!r} to be a finite vector of shape (2,), got {q.shape}")
        scores = keys @ q  # (N,)
        weights = _softmax(scores)  # (N,)
        found[name] = dict(scores=scores, weights=weights, output=weights @ values)
    return found


SOFT_SEARCH_PLANE_PX = 320  # the plane of the keys, square
SOFT_SEARCH_BLOCK_PX = 330  # the weights and the answers: a phone's width


def _query_scale(keys: np.ndarray, queries: np.ndarray) -> int:
    """The whole factor that draws the longest query a little longer than the longest key."""
    longest_query = float(np.linalg.norm(queries, axis=1).max())
    return max(1, int(np.ceil(1.25 * float(np.linalg.norm(keys, axis=1).max()) / (longest_query or 1.0))))


def _soft_search_plane(keys: np.ndarray, queries: np.ndarray, items: list[str], scale: int,
                       key_axes: tuple[str, str]) -> canvas.Canvas:
    """The plane of the keys, ``SOFT_SEARCH_PLANE_PX`` square: every key ``(N, 2)`` an arrow in its
    item's colour, every query ``(Q, 2)`` a thicker arrow drawn ``scale`` times longer (under the
    keys), each named at its tip; the axes named by ``key_axes``, ticked at whole numbers."""
    drawn = queries * scale  # (Q, 2): the queries at the keys' scale
    points = np.concatenate([keys, drawn, [[0.0, 0.0]]])
    low = min(-0.5, float(points.min()) - 0.3)
    x_high, y_high = (float(v) + 0.8 for v in points.max(axis=0))  # room for the labels at the tips
    side = SOFT_SEARCH_PLANE_PX
    px = (side - 4) / (x_high - low)  # pixels per unit, one scale for both axes

    def at(point) -> tuple[float, float]:
        return 4 + (point[0] - low) * px, (y_high - point[1]) * px

    c = canvas.Canvas(side)
    (x_zero, y_zero), (x_end, y_end) = at([0, 0]), at([x_high - 0.1, y_high - 0.1])
    c.line(at([low + 0.1, 0])[0], y_zero, x_end, y_zero, color="#999999", name="x axis")
    c.line(x_zero, at([0, low + 0.1])[1], x_zero, y_end, color="#999999", name="y axis")
    for tick in range(1, int(np.floor(x_high - 0.3)) + 1):
        x_tick = at([tick, 0])[0]
        c.line(x_tick, y_zero, x_tick, y_zero + 4, color="#999999")
        c.text(x_tick, y_zero + 6, str(tick), anchor=("center", "top"), size=10, color="#777777")
    for tick in range(1, int(np.floor(y_high - 0.3)) + 1):
        y_tick = at([0, tick])[1]
        c.line(x_zero - 4, y_tick, x_zero, y_tick, color="#999999")
        c.text(x_zero - 6, y_tick, str(tick), anchor=("right", "middle"), size=10, color="#777777")
    c.text(x_end, y_zero + 20, f"{html.escape(key_axes[0])} →", anchor=("right", "top"), size=11)
    c.text(x_zero + 6, y_end, f"↑ {html.escape(key_axes[1])}", anchor=("left", "middle"), size=11)
    for i, q in enumerate(drawn):
        c.arrow(x_zero, y_zero, *at(q), color=plots.color(5 if i == 0 else 3), width=5, name=f"query {i}")
    for j, key in enumerate(keys):
        c.arrow(x_zero, y_zero, *at(key), color=_ITEM_COLOURS[j % len(_ITEM_COLOURS)], width=2, name=f"key {j}")
    avoid = c.segments()
    for j, key in enumerate(keys):
        c.label_near(*at(key), f"<b>{html.escape(items[j])}</b>", avoid=avoid,
                     color=_ITEM_COLOURS[j % len(_ITEM_COLOURS)])  # fmt: skip
    for i, q in enumerate(drawn):
        c.label_near(*at(q), f"<b>q{_SUBSCRIPTS[i]}</b>", avoid=avoid, color=plots.color(5 if i == 0 else 3))
    c.text(side / 2, c.bottom + 8, f"keys, and the queries drawn {scale}× longer", anchor=("center", "top"),
           size=11, color="#555555")  # fmt: skip
    return c


_ITEM_COLOURS = (plots.color(0), plots.color(2), plots.color(1), plots.color(4), plots.color(7))
_SUBSCRIPTS = "₁₂₃₄"


def _soft_search_block(found: dict, values: np.ndarray, items: list[str], value_names: Sequence[str]) -> canvas.Canvas:
    """The weights and the answers, ``SOFT_SEARCH_BLOCK_PX`` wide: every item's value as strips
    (one column per value name); then, per query, its weights as bars as long as the weights, and
    what it gets, ``Σ w × value``, as strips stacked from each item's value scaled by its weight."""
    c = canvas.Canvas(SOFT_SEARCH_BLOCK_PX)
    name_px, bar_h, pitch = 60, 11, 18
    columns = len(value_names)
    column_px = (SOFT_SEARCH_BLOCK_PX - name_px) / columns
    strip_px = column_px - 40  # the largest value's strip; its number after it
    per_value = strip_px / max(float(np.abs(values).max()), 1e-12)
    weight_px = SOFT_SEARCH_BLOCK_PX - name_px - 44  # a weight of 1

    def header(y: float, first: str) -> None:
        c.text(0, y, first, anchor=("left", "middle"))
        for d, v_name in enumerate(value_names):
            c.text(name_px + d * column_px, y, html.escape(str(v_name)), anchor=("left", "middle"), size=11,
                   color="#555555")  # fmt: skip

    y = 8
    header(y, "<b>values</b>")
    for j, item in enumerate(items):
        y += pitch
        colour = _ITEM_COLOURS[j % len(_ITEM_COLOURS)]
        c.text(0, y, html.escape(item), color=colour)
        for d in range(columns):
            x0, length = name_px + d * column_px, max(0.0, float(values[j, d])) * per_value
            if length > 0:
                c.rect(x0, y - bar_h / 2, x0 + length, y + bar_h / 2, fill=colour, name=f"value {j} {d}")
            c.text(x0 + length + 4, y, boxes.number(values[j, d], 0 if float(values[j, d]).is_integer() else 1),
                   anchor=("left", "middle"), size=11)  # fmt: skip
    for i, (q_name, f) in enumerate(found.items()):
        y += pitch + 12
        colour = plots.color(5 if i == 0 else 3)
        c.text(0, y, f"<b>q{_SUBSCRIPTS[i]} {html.escape(q_name)}</b>: w = softmax(q · k)", color=colour)
        for j, item in enumerate(items):
            y += pitch
            w = float(f["weights"][j])
            c.text(0, y, html.escape(item), color=_ITEM_COLOURS[j % len(_ITEM_COLOURS)])
            if w * weight_px >= 0.5:
                c.rect(name_px, y - bar_h / 2, name_px + w * weight_px, y + bar_h / 2,
                       fill=_ITEM_COLOURS[j % len(_ITEM_COLOURS)], name=f"weight {i} {j}")  # fmt: skip
            c.text(name_px + w * weight_px + 4, y, boxes.number(w), anchor=("left", "middle"), size=11)
        y += pitch
        header(y, "gets")
        y += pitch - 2
        c.text(0, y, "Σ w×v", size=11)
        for d in range(columns):
            x = x0 = name_px + d * column_px
            for j in range(len(items)):
                part = max(0.0, float(f["weights"][j] * values[j, d])) * per_value
                if part >= 0.5:
                    c.rect(x, y - bar_h / 2, x + part, y + bar_h / 2, fill=_ITEM_COLOURS[j % len(_ITEM_COLOURS)],
                           line="white", line_width=0.5, name=f"gets {i} {d} {j}")  # fmt: skip
                x += part
            c.text(max(x, x0) + 4, y, f"<b>{boxes.number(f['output'][d], 1)}</b>", anchor=("left", "middle"), size=11)
    return c


def soft_search_figure(keys, values, items: Sequence[str], queries: dict, *,
                       key_axes: tuple[str, str] = ("animal-like", "vehicle-like"),
                       value_names: Sequence[str] = ("legs", "wheels")) -> go.Figure:
    """A soft search, drawn: ``keys (N, 2)`` as arrows in their plane, one per item of ``items (N,)``
    (each in its own colour), and each query of ``queries`` (names to ``(2,)`` vectors, at most 4)
    as a thicker arrow drawn a whole number of times longer, at the keys' scale, so that the angles
    read; beside the plane (under it on a phone), every item's value ``values (N, d_v)`` as strips,
    one column per name of ``value_names``; then, per query, its weights ``softmax(keys @ q)`` as
    bars as long as the weights, and what it gets, ``weights @ values``, as strips stacked from
    every item's value scaled by its weight (the answer is a blend of the values). Values must be
    non-negative (they are drawn as lengths). The plane's axes are named by ``key_axes``. Every
    number is :func:`soft_search_numbers`'; weights written to 2 decimals, answers to 1.
    """
    found = soft_search_numbers(keys, values, queries)
    keys, values = np.asarray(keys, dtype=float), np.asarray(values, dtype=float)
    items = [str(i) for i in items]
    if len(items) != len(keys) or len(found) > 4:
        raise ValueError(f"expected one item name per key ({len(keys)}) and at most 4 queries, got {len(items)} "
                         f"names and {len(found)} queries")  # fmt: skip
    if len(value_names) != values.shape[1] or values.shape[1] > 3:
        raise ValueError(f"expected one value name per column of values ({values.shape[1]}, at most 3), got "
                         f"{list(value_names)}")  # fmt: skip
    if np.any(values < 0):
        raise ValueError("expected non-negative values (they are drawn as lengths), got a negative one")
    if any(len(i) > 5 for i in items):
        raise ValueError(f"expected item names of at most 5 characters (they label the bars), got {items}")
    drawn_queries = np.array([np.asarray(q, dtype=float) for q in queries.values()])  # (Q, 2)
    scale = _query_scale(keys, drawn_queries)
    plane = _soft_search_plane(keys, drawn_queries, items, scale, key_axes)
    block = _soft_search_block(found, values, items, value_names)
    gap = 30
    wide = canvas.Canvas(SOFT_SEARCH_PLANE_PX + gap + SOFT_SEARCH_BLOCK_PX)
    wide.add(plane)
    wide.add(block, SOFT_SEARCH_PLANE_PX + gap, 0)
    narrow = canvas.Canvas(canvas.NARROW_DESIGN_PX)
    narrow.add(plane, (canvas.NARROW_DESIGN_PX - SOFT_SEARCH_PLANE_PX) / 2, 0)
    narrow.add(block, 0, plane.bottom + 18)
    title = "A soft search: each query weighs every key, and gets a blend of the values"
    return canvas.canvas_figure(wide, narrow, title=title)


# --------------------------------------------------------------------------------------------
# Self-attention in matrix form: every query at once


def _value_colours(values: np.ndarray, scale: str = plots.DIVERGING, *, low: float | None = None,
                   high: float | None = None) -> list[list[str]]:
    """One ``rgb(...)`` per entry of ``values (R, C)``: a diverging scale symmetric about 0 (blue
    positive, red negative), or ``scale`` from ``low`` to ``high`` when they are given."""
    from plotly.colors import sample_colorscale

    if low is None:
        reach = float(np.abs(values).max()) or 1.0
        low, high = -reach, reach
    t = np.clip((values - low) / (high - low), 0, 1)
    return [sample_colorscale(scale, list(map(float, row))) for row in t]


def attention_matrices_numbers(queries, keys, values) -> dict[str, np.ndarray]:
    """What :func:`attention_matrices_figure` draws: ``queries (T_q, d_k)``, ``keys (T_k, d_k)`` and
    ``values (T_k, d_v)`` in; ``scores (T_q, T_k)`` (``Q Kᵀ / sqrt(d_k)``), ``weights (T_q, T_k)``
    (their softmax, row by row) and ``outputs (T_q, d_v)`` (``weights @ values``) out."""
    q, k, v = (_matrix(n, a, s) for n, a, s in (("queries", queries, "(T_q, d_k)"), ("keys", keys, "(T_k, d_k)"),
                                                ("values", values, "(T_k, d_v)")))  # fmt: skip
    if q.shape[1] != k.shape[1] or k.shape[0] != v.shape[0]:
        raise ValueError(f"expected queries (T_q, d_k), keys (T_k, d_k) and values (T_k, d_v), got {q.shape}, "
                         f"{k.shape} and {v.shape}")  # fmt: skip
    scores = q @ k.T / np.sqrt(q.shape[1])  # (T_q, T_k)
    weights = _softmax(scores)  # (T_q, T_k): each row sums to 1
    return dict(scores=scores, weights=weights, outputs=weights @ v)  # outputs (T_q, d_v)


def attention_matrices_figure(queries, keys, values, tokens: Sequence[str], *, query: int | None = None) -> go.Figure:
    """Self-attention for every query at once, as matrices: ``queries (T, d_k)`` times the keys
    transposed ``(d_k, T)`` give the scores ``(T, T)`` (divided by ``sqrt(d_k)``); a softmax along
    each row gives the weights ``(T, T)``; times ``values (T, d_v)`` they give the outputs ``(T, d_v)``.
    Every matrix is a grid of cells holding its numbers (1 decimal, the weights 2), coloured by
    value (a diverging scale; the weights on the sequential scale of the lesson's heatmap), named
    and shaped above its grid; the rows of the queries and of the weights are labelled by
    ``tokens (T,)``, and the row of the token ``query`` (if given) is outlined in every matrix
    whose rows are the queries'. At most 6 tokens and vectors of at most 5 numbers. Numbers:
    :func:`attention_matrices_numbers`'. Laptops read it in two rows, phones in one column.
    """
    q, k, v = (np.asarray(a, dtype=float) for a in (queries, keys, values))
    n = attention_matrices_numbers(q, k, v)
    labels = _check_tokens(tokens, q.shape[0])
    if k.shape[0] != q.shape[0]:
        raise ValueError(f"expected as many keys as queries (self-attention), got {k.shape[0]} and {q.shape[0]}")
    T, d_k, d_v = q.shape[0], q.shape[1], v.shape[1]
    if T > 6 or max(d_k, d_v) > 5:
        raise ValueError(f"expected at most 6 tokens and vectors of at most 5 numbers (every cell holds its number), "
                         f"got T={T}, d_k={d_k}, d_v={d_v}")  # fmt: skip
    outline = None if query is None else _check_query(query, T)
    one = lambda a: [[boxes.number(x, 1) for x in row] for row in a]  # noqa: E731
    matrices = {  # name: (values, texts, colours, title, shape)
        "Q": (q, one(q), _value_colours(q), "<b>Q</b> = X W_Q", f"(T, d_k) = ({T}, {d_k})"),
        "K": (k.T, one(k.T), _value_colours(k.T), "<b>Kᵀ</b>, keys as columns", f"(d_k, T) = ({d_k}, {T})"),
        "S": (n["scores"], one(n["scores"]), _value_colours(n["scores"]), "<b>S</b> = Q Kᵀ / √d_k",
              f"(T, T) = ({T}, {T})"),
        "W": (n["weights"], [[boxes.number(x) for x in row] for row in n["weights"]],
              _value_colours(n["weights"], plots.SEQUENTIAL, low=0.0, high=1.0), "<b>W</b> = softmax(S)",
              "(T, T), rows sum to 1"),
        "V": (v, one(v), _value_colours(v), "<b>V</b> = X W_V", f"(T, d_v) = ({T}, {d_v})"),
        "O": (n["outputs"], one(n["outputs"]), _value_colours(n["outputs"]), "<b>outputs</b> = W V",
              f"(T, d_v) = ({T}, {d_v})"),
    }  # fmt: skip
    label_px, op_px, head_px = 40, 22, 34  # token labels; an operator's gap; a grid's name and shape

    def block(c: canvas.Canvas, key: str, x: float, y: float, cell: tuple[float, float], size: float, *,
              rows_labelled: bool = False) -> tuple[float, float, float]:
        """Matrix ``key``: its name and shape, then its grid from ``y + head_px``; returns the grid's
        right edge, its vertical middle and its bottom."""
        values_, texts, colours, title, shape = matrices[key]
        width = cell[0] * values_.shape[1]
        c.text(x + width / 2, y, title, anchor=("center", "top"), size=11)
        c.text(x + width / 2, y + 15, shape, anchor=("center", "top"), size=10, color="#555555")
        outlined = outline if key in ("Q", "S", "W", "O") else None
        gw, gh = canvas.grid(c, x, y + head_px, values_, cell=cell, colours=colours, texts=texts, name=key,
                             size=size, outline_row=outlined)  # fmt: skip
        if rows_labelled:
            for i, token in enumerate(labels):
                c.text(x - 5, y + head_px + (i + 0.5) * cell[1], html.escape(token), anchor=("right", "middle"),
                       size=10, name=f"row {key} {i}")  # fmt: skip
        return x + gw, y + head_px + gh / 2, y + head_px + gh

    def op(c: canvas.Canvas, x: float, y: float, symbol: str) -> None:
        c.text(x + op_px / 2, y, symbol, anchor=("center", "middle"), size=15)

    softmax_text = "softmax along each row"

    # Laptops: Q × Kᵀ = S, then (an elbow down to the next row) W × V = outputs.
    cell = (32, 20)
    wide = canvas.Canvas(canvas.WIDE_DESIGN_PX)
    right, middle, _ = block(wide, "Q", label_px, 0, cell, 11, rows_labelled=True)
    op(wide, right, middle, "×")
    right, _, _ = block(wide, "K", right + op_px, 0, cell, 11)
    op(wide, right, middle, "=")
    s_left = right + op_px
    _, _, bottom = block(wide, "S", s_left, 0, cell, 11)
    s_x, w_x, bend = s_left + cell[0] * T / 2, label_px + cell[0] * T / 2, bottom + 16
    row2 = bend + 34
    wide.line(s_x, bottom + 4, s_x, bend, color=boxes.ARROW_COLOR, width=2)
    wide.line(s_x, bend, w_x, bend, color=boxes.ARROW_COLOR, width=2)
    wide.arrow(w_x, bend, w_x, row2 - 4, name="softmax")
    wide.text(w_x + 10, bend + 4, softmax_text, anchor=("left", "top"), size=11)
    right, middle, _ = block(wide, "W", label_px, row2, cell, 11, rows_labelled=True)
    op(wide, right, middle, "×")
    right, _, _ = block(wide, "V", right + op_px, row2, cell, 11)
    op(wide, right, middle, "=")
    block(wide, "O", right + op_px, row2, cell, 11)

    # Phones: Q × Kᵀ, = S under Kᵀ, softmax down, W × V, = outputs under V.
    cell, label_px, op_px = (30, 18), 36, 18  # op() reads op_px when it is called
    narrow = canvas.Canvas(canvas.NARROW_DESIGN_PX)
    right, middle, bottom = block(narrow, "Q", label_px, 0, cell, 10, rows_labelled=True)
    op(narrow, right, middle, "×")
    block(narrow, "K", right + op_px, 0, cell, 10)
    y = bottom + 16
    s_left = right + op_px  # S under Kᵀ
    _, middle, bottom = block(narrow, "S", s_left, y, cell, 10)
    op(narrow, s_left - op_px, middle, "=")
    y2 = bottom + 40
    s_x = s_left + cell[0] * T / 2
    narrow.arrow(s_x, bottom + 4, s_x, y2 - 4, name="softmax")
    narrow.text(s_x - 8, (bottom + y2) / 2, softmax_text, anchor=("right", "middle"), size=11)
    right, middle, bottom = block(narrow, "W", label_px, y2, cell, 10, rows_labelled=True)
    op(narrow, right, middle, "×")
    block(narrow, "V", right + op_px, y2, cell, 10)
    o_left = right + op_px  # the outputs under V
    _, middle, _ = block(narrow, "O", o_left, bottom + 16, cell, 10)
    op(narrow, o_left - op_px, middle, "=")
    title = "Self-attention for every token at once: softmax(Q Kᵀ / √d_k) V"
    return canvas.canvas_figure(wide, narrow, title=title)


# --------------------------------------------------------------------------------------------
# The shape journey of multi-head attention, as tensor blocks


def shape_journey_steps(x, n_heads: int) -> list[tuple[str, str, np.ndarray]]:
    """The moves of multi-head attention's split and merge, applied to ``x (B, T, D)``: a list of
    ``(move, axes, array)``: the input ``(B, T, D)``; ``reshape`` to ``(B, T, H, D/H)``;
    ``transpose`` to ``(B, H, T, D/H)`` (heads first: each head a ``(T, D/H)`` matrix, which one
    batched product attends in); and back, ``transpose`` to ``(B, T, H, D/H)`` and ``reshape`` to
    ``(B, T, D)``. Between the halves, ``attend``: attention keeps the shape ``(B, H, T, D/H)``, each
    head's outputs where its queries stood (drawn with the split's entries: only the places matter).
    The arrays are ``x``'s own entries, moved."""
    x = np.asarray(x, dtype=float)
    if x.ndim != 3 or x.size == 0:
        raise ValueError(f"expected x of shape (B, T, D), got an array of shape {x.shape}")
    B, T, D = x.shape
    if isinstance(n_heads, bool) or not isinstance(n_heads, (int, np.integer)) or n_heads < 1 or D % n_heads:
        raise ValueError(f"expected n_heads, a positive integer dividing D={D}, got {n_heads!r}")
    H = int(n_heads)
    split = x.reshape(B, T, H, D // H)  # (B, T, H, D/H)
    heads_first = split.transpose(0, 2, 1, 3)  # (B, H, T, D/H)
    back = heads_first.transpose(0, 2, 1, 3)  # (B, T, H, D/H)
    return [("", "(B, T, D)", x), ("reshape", "(B, T, H, D/H)", split), ("transpose", "(B, H, T, D/H)", heads_first),
            ("attend", "(B, H, T, D/H)", heads_first), ("transpose", "(B, T, H, D/H)", back),
            ("reshape", "(B, T, D)", back.reshape(B, T, D))]  # fmt: skip


def shape_journey_figure(x, n_heads: int, *, name: str = "Q") -> go.Figure:
    """Multi-head attention's shape journey as tensor blocks: ``x (B, T, D)`` (the queries ``name``
    of a batch), every cell tinted by the head its column goes to, then each move of
    :func:`shape_journey_steps`, drawn as the array it gives: ``(B, T, H, D/H)``, each token's row
    cut into ``H`` pieces; ``(B, H, T, D/H)``, each sentence's heads as separate ``(T, D/H)``
    matrices, one under the other; attention in every head at once; and back, ``(B, T, H, D/H)``
    and ``(B, T, D)``. Sentences are framed panels, one under the other; under every block, its
    axes and its shape. At most 2 sentences, 8 tokens, 2 or 3 heads and ``D`` of 8."""
    steps = shape_journey_steps(x, n_heads)
    B, T, D = steps[0][2].shape
    H, d_head = int(n_heads), D // int(n_heads)
    if B > 2 or T > 8 or D > 8 or not 2 <= H <= 3:
        raise ValueError(f"expected at most 2 sentences of 8 tokens, D of at most 8 and 2 or 3 heads, got "
                         f"B={B}, T={T}, D={D}, H={H}")  # fmt: skip
    plots.require_text("name", name)
    tints = (*HEAD_TINTS, "#a8d8a0")[:H]

    def block(c: canvas.Canvas, k: int, left: float, top: float, cell: tuple[float, float]) -> tuple[float, float]:
        """Step ``k``'s array, its top left at ``(left, top)``; returns its width and height."""
        array = steps[k][2]
        cw, ch = cell
        gap, panel_gap = 4, 10
        if array.ndim == 3:  # (B, T, D)
            width, panel_h = cw * D, ch * T
        elif steps[k][1] == "(B, T, H, D/H)":
            width, panel_h = cw * D + gap * (H - 1), ch * T
        else:  # (B, H, T, D/H): the heads one under the other
            width, panel_h = cw * d_head, H * ch * T + gap * (H - 1)
        for b in range(B):
            y0 = top + b * (panel_h + panel_gap)
            for t in range(T):
                for column in range(D):
                    h, i = divmod(column, d_head)
                    if array.ndim == 3:
                        xs, ys = left + column * cw, y0 + t * ch
                    elif steps[k][1] == "(B, T, H, D/H)":
                        xs, ys = left + column * cw + h * gap, y0 + t * ch
                    else:
                        xs, ys = left + i * cw, y0 + h * (ch * T + gap) + t * ch
                    c.rect(xs, ys, xs + cw, ys + ch, fill=tints[h], line="#ffffff", line_width=1,
                           name=f"step {k} b{b} t{t} h{h} i{i}")  # fmt: skip
            c.rect(left - 2, y0 - 2, left + width + 2, y0 + panel_h + 2, fill="rgba(0,0,0,0)", line="#777777",
                   line_width=1, name=f"step {k} sentence {b}")  # fmt: skip
        return width, B * panel_h + (B - 1) * panel_gap

    def row(c: canvas.Canvas, ks: Sequence[int], left: float, top: float, cell, op_px: float) -> list:
        """Steps ``ks`` left to right from ``left``; the moves above the arrows between them, the
        axes and shapes under the blocks; returns each block's (left, right, bottom)."""
        placed = []
        for n_, k in enumerate(ks):
            if n_:
                x0 = placed[-1][1]
                c.arrow(x0 + 6, top + 40, x0 + op_px - 6, top + 40, name=f"move {k}")
                c.text(x0 + op_px / 2, top + 34, steps[k][0], anchor=("center", "bottom"), size=10)
                left = x0 + op_px
            width, height = block(c, k, left, top, cell)
            placed.append((left, left + width, top + height))
        base = max(p[2] for p in placed) + 8
        for (l_, r_, _), k in zip(placed, ks):
            shape = "(" + ", ".join(str(s) for s in steps[k][2].shape) + ")"
            c.text((l_ + r_) / 2, base, f"{steps[k][1]}<br>= {shape}", anchor=("center", "top"), size=10,
                   name=f"shape {k}")  # fmt: skip
        return placed

    def legend(c: canvas.Canvas, left: float) -> None:
        x0 = left
        c.text(x0, 8, f"{html.escape(name)}'s columns:", anchor=("left", "middle"), size=11)
        x0 += canvas.text_width(f"{name}'s columns:", 11) + 8
        for h in range(H):
            c.rect(x0, 2, x0 + 12, 14, fill=tints[h], name=f"legend {h}")
            c.text(x0 + 16, 8, f"head {h}", anchor=("left", "middle"), size=11)
            x0 += 16 + canvas.text_width(f"head {h}", 11) + 12

    # Laptops: the whole journey in one row.
    wide = canvas.Canvas(canvas.WIDE_DESIGN_PX)
    legend(wide, 32)
    cell, top = (14, 12), 30
    row(wide, range(len(steps)), 32, top, cell, 72)
    for b in range(B):
        wide.text(28, top + b * (cell[1] * T + 10) + cell[1] * T / 2, f"b={b}", anchor=("right", "middle"), size=10)

    # Phones: there in one row, back in the next.
    narrow = canvas.Canvas(canvas.NARROW_DESIGN_PX)
    legend(narrow, 0)
    cell = (13, 10)
    placed = row(narrow, [0, 1, 2], 32, top, cell, 66)
    for b in range(B):
        narrow.text(28, top + b * (cell[1] * T + 10) + cell[1] * T / 2, f"b={b}", anchor=("right", "middle"), size=10)
    c_x, bottom = (placed[-1][0] + placed[-1][1]) / 2, narrow.bottom + 6
    row2, back_x = bottom + 44, 32 + cell[0] * d_head / 2
    narrow.line(c_x, bottom, c_x, bottom + 16, color=boxes.ARROW_COLOR, width=2)
    narrow.line(c_x, bottom + 16, back_x, bottom + 16, color=boxes.ARROW_COLOR, width=2)
    narrow.arrow(back_x, bottom + 16, back_x, row2 - 4, name="attend")
    narrow.text(back_x + 10, bottom + 20, "attend: every head at once", anchor=("left", "top"), size=10)
    row(narrow, [3, 4, 5], 32, row2, cell, 66)
    return canvas.canvas_figure(wide, narrow, title="The shape journey: split into heads, attend, merge back")


# --------------------------------------------------------------------------------------------
# One query's weights over a sentence, the kinds of its words marked


KIND_STYLES = {  # kind -> (colour, hatch): the kinds read without colour too
    "singular noun": (plots.color(0), ""),
    "plural noun": (plots.color(1), "/"),
    "": ("#9a9a9a", ""),
}


def query_weights_figure(weights, tokens: Sequence[str], *, query: int, marks: dict, title: str) -> go.Figure:
    """One query's attention weights over a sentence: ``weights (T,)`` (a softmax row), one
    horizontal bar per token of ``tokens (T,)``, top to bottom in sentence order, its value written
    at its end; ``marks`` maps ``"singular noun"`` and ``"plural noun"`` to ``(T,)`` masks (0/1 or
    bool) of the tokens that are one (colour, hatching, a legend entry and the token's label:
    ``drir (sg. noun)``); the query's own token ``query`` is named in its label. Every token keeps
    its label at every width (one row each)."""
    w = plots.significant(weights)
    if w.ndim != 1 or w.size == 0 or not np.all(np.isfinite(w)) or np.any(w < 0):
        raise ValueError(f"expected one query's weights, a non-negative vector (T,), got shape {w.shape}")
    if isinstance(tokens, str) or len(tokens) != w.size:
        raise ValueError(f"expected one token per weight ({w.size}), got {len(tokens)}")
    if not isinstance(marks, dict) or sorted(set(marks) - set(KIND_STYLES)):
        raise ValueError(f"expected marks, a dict from kinds among {[k for k in KIND_STYLES if k]} to (T,) masks, "
                         f"got {marks!r}")  # fmt: skip
    kinds = [""] * w.size
    for kind, mask in marks.items():
        mask = np.asarray(mask).astype(bool)
        if mask.shape != w.shape:
            raise ValueError(f"expected the mask of {kind!r} to have one entry per token, shape {w.shape}, got {mask.shape}")
        for i in np.flatnonzero(mask):
            if kinds[i]:
                raise ValueError(f"expected each token marked once, token {i} is a {kinds[i]} and a {kind}")
            kinds[i] = kind
    query = _check_query(query, w.size)
    plots.require_text("title", title)
    labels = [f"{i}" for i in range(w.size)]  # plotly's categories: the positions (a word may repeat)
    suffix = {"singular noun": " (sg. noun)", "plural noun": " (pl. noun)", "": ""}
    ticks = [html.escape(str(t)) + suffix[k] + "\u00a0" for t, k in zip(tokens, kinds)]  # clear of the bars
    ticks[query] = f"<b>{html.escape(str(tokens[query]))}</b> (the query)\u00a0"
    fig = go.Figure()
    for kind, (colour, hatch) in KIND_STYLES.items():
        rows = [i for i, k in enumerate(kinds) if k == kind]
        if not rows:
            continue
        fig.add_trace(go.Bar(
            x=w[rows], y=[labels[i] for i in rows], orientation="h", name=kind or "other word",
            marker=dict(color=colour, pattern_shape=hatch, line=dict(color="black", width=0.5)),
            text=[f"{v:.2f}" for v in w[rows]], textposition="outside", cliponaxis=False,
            hovertext=[ticks[i] for i in rows], hovertemplate="%{hovertext}: weight %{x:.3f}<extra></extra>",
        ))  # fmt: skip
    fig.update_yaxes(type="category", categoryorder="array", categoryarray=labels, autorange="reversed",
                     tickmode="array", tickvals=labels, ticktext=ticks, automargin=True)  # fmt: skip
    fig.update_xaxes(range=[0, float(w.max()) * 1.25 or 1.0],
                     title_text=f"the weight “{html.escape(str(tokens[query]))}” gives each token")  # fmt: skip
    fig.update_layout(
        title=dict(text=title, x=0.02, xanchor="left"), template=plots.TEMPLATE, height=140 + 22 * w.size,
        margin=dict(l=20, r=20, t=60, b=50), font=dict(size=13), barmode="overlay", bargap=0.25,
        legend=dict(orientation="h", yanchor="bottom", y=1.0, xanchor="right", x=1.0),
    )  # fmt: skip
    return fig
