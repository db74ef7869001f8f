"""Lesson 01's figure: the RNN's sequential steps against attention's one step."""

from __future__ import annotations

from typing import Sequence

import numpy as np
import plotly.graph_objects as go

from .. import plots

__all__ = ["sequential_steps_figure"]

RNN_ROW, ATTENTION_ROW = 1.0, 0.0  # heights of the two rows of tokens


def _token_row(tokens: Sequence[str], y: float, color_index: int) -> go.Scatter:
    """The tokens as labelled dots on one row of the figure."""
    return go.Scatter(
        x=list(range(len(tokens))), y=[y] * len(tokens), mode="markers+text", text=list(tokens),
        textposition="top center", hoverinfo="text", showlegend=False,
        marker=dict(size=22, color=plots.color(color_index), line=dict(width=1, color="black")),
    )


def _rnn_arrow(t: int) -> go.Scatter:
    """Step t + 1 of the RNN: an arrow from token t to token t + 1, hidden until the slider reaches it."""
    return go.Scatter(
        x=[t + 0.12, t + 0.88], y=[RNN_ROW, RNN_ROW], mode="lines+markers",
        line=dict(color=plots.color(0), width=3),
        marker=dict(symbol="arrow", angleref="previous", size=[0, 16], color=plots.color(0)),
        name=f"RNN step {t + 1}", hoverinfo="name", showlegend=False, visible=False,
    )


def _attention_links(n_tokens: int, depth: float = 0.12, n_points: int = 20) -> go.Scatter:
    """Every pair of tokens joined by a dotted curve under the attention row (one trace)."""
    s = np.linspace(0, 1, n_points)
    xs, ys = [], []
    for a in range(n_tokens):
        for b in range(a + 1, n_tokens):  # None separates the curves
            xs += [*(a + (b - a) * s), None]
            ys += [*(ATTENTION_ROW - 0.08 - depth * (b - a) * 4 * s * (1 - s)), None]
    return go.Scatter(
        x=xs, y=ys, mode="lines", line=dict(color=plots.color(1), width=2, dash="dot"),
        name="attention: all pairs", hoverinfo="name", showlegend=False, visible=False,
    )


def _slider_step(steps: int, n_tokens: int) -> dict:
    """Slider position ``steps``: that many RNN arrows shown; attention's links from step 1 on."""
    visible = [True, True] + [t < steps for t in range(n_tokens - 1)] + [steps >= 1]
    plural = "" if steps == 1 else "s"
    rnn_text = f"the RNN has carried [CLS] {steps} token{plural} to the right"
    attention_text = "attention links every pair" if steps >= 1 else "attention has not run yet"
    title = f"After {steps} sequential step{plural}:<br>{rnn_text}; {attention_text}"
    return dict(label=str(steps), method="update", args=[{"visible": visible}, {"title.text": title}])


def sequential_steps_figure(tokens: Sequence[str]) -> go.Figure:
    """The tokens twice: on top the RNN, which needs ``T - 1`` steps to carry the first token to the
    last (a slider takes them one by one); below attention, which links all ``T (T - 1) / 2`` pairs
    in one step."""
    tokens = list(tokens)
    if len(tokens) < 2 or not all(isinstance(t, str) for t in tokens):
        raise ValueError(f"expected at least two tokens (strings), got {tokens!r}")
    n_tokens = len(tokens)
    steps = [_slider_step(k, n_tokens) for k in range(n_tokens)]
    fig = go.Figure([
        _token_row(tokens, RNN_ROW, 0),
        _token_row(tokens, ATTENTION_ROW, 2),
        *map(_rnn_arrow, range(n_tokens - 1)),
        _attention_links(n_tokens),
    ])
    fig.update_layout(
        sliders=[dict(active=0, steps=steps, currentvalue=dict(prefix="sequential steps: "), pad=dict(t=40))],
        title=dict(text=steps[0]["args"][1]["title.text"], x=0.02, xanchor="left"),
        template=plots.TEMPLATE, height=450, margin=dict(l=90, r=30, t=90, b=40), font=dict(size=13),
    )
    fig.update_xaxes(visible=False, range=[-0.5, n_tokens - 0.5])
    fig.update_yaxes(
        tickvals=[RNN_ROW, ATTENTION_ROW], ticktext=["RNN<br>(solid arrows)", "attention<br>(dotted links)"],
        range=[-0.75, 1.45], showgrid=False, zeroline=False, title_text="model",
    )
    return fig
