"""Lesson 04's figure and explorer: scaled dot-product attention for one query token, step by step.

:func:`qkv_token_figure` draws one query's scores ``q · k / sqrt(d_k)``, their softmax and the
weighted sum of the values; :func:`qkv_explorer` offers every token as the query in a dropdown
(a :class:`course_utils.widgets.Explorer`).
"""

from __future__ import annotations

import functools
from typing import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from .. import plots
from ..widgets import Choice, Explorer

__all__ = ["qkv_token_figure", "qkv_explorer"]


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
