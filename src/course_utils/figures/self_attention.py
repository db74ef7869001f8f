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

__all__ = ["attention_flow", "qkv_explorer", "qkv_token_figure"]


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
