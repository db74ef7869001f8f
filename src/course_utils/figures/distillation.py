"""Lesson 07's figure and explorer: one position's predicted distribution, softened by a temperature.

:func:`softened` is ``softmax(logits / T)`` and :func:`entropy` its spread in nats;
:func:`temperature_figure` draws the softened distribution of the top tokens against the model's
own (``T = 1``); :func:`temperature_explorer` puts it behind a slider for ``T`` (a
:class:`course_utils.widgets.Explorer`).
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

__all__ = ["entropy", "softened", "temperature_figure", "temperature_explorer"]


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
