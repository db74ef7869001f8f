"""Lesson 01's figures: one LSTM step box by box, with its numbers (:func:`lstm_cell_figure`); a
BiLSTM's states with the order in which its two readers reach each token
(:func:`bilstm_states_figure`); the RNN's sequential steps against attention's one step."""

from __future__ import annotations

from typing import Sequence

import numpy as np
import plotly.graph_objects as go

from .. import plots, rnn
from . import boxes

__all__ = ["bilstm_states_figure", "lstm_cell_figure", "lstm_cell_numbers", "sequential_steps_figure"]

RNN_ROW, ATTENTION_ROW = 1.0, 0.0  # heights of the two rows of tokens
OPENING_STEP = 1  # the slider step the sequential-steps figure opens at


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
    in one step. It opens at step 1 (:data:`OPENING_STEP`): one RNN arrow, every attention link."""
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
    # it opens at step 1, where the contrast already shows (one RNN arrow, every attention link);
    # at step 0 a reader who does not drag the slider would see dots only
    first = OPENING_STEP
    for trace, visible in zip(fig.data, steps[first]["args"][0]["visible"]):
        trace.visible = visible
    fig.update_layout(
        sliders=[dict(active=first, steps=steps, currentvalue=dict(prefix="sequential steps: "), pad=dict(t=40))],
        title=dict(text=steps[first]["args"][1]["title.text"], x=0.02, xanchor="left"),
        template=plots.TEMPLATE, height=450, margin=dict(l=90, r=30, t=90, b=40), font=dict(size=13),
    )
    fig.update_xaxes(visible=False, range=[-0.5, n_tokens - 0.5])
    fig.update_yaxes(
        tickvals=[RNN_ROW, ATTENTION_ROW], ticktext=["RNN<br>(solid arrows)", "attention<br>(dotted links)"],
        range=[-0.75, 1.45], showgrid=False, zeroline=False, title_text="model",
    )
    return fig


# --------------------------------------------------------------------------------------------
# The LSTM cell, one step, and the BiLSTM's two readers


def lstm_cell_numbers(x_t, h_prev, c_prev, params) -> dict[str, np.ndarray]:
    """The numbers :func:`lstm_cell_figure` draws for one LSTM step, each ``(D_h,)``: the gates
    ``i, f, g, o`` (:func:`course_utils.rnn.lstm_gates`), ``kept = f * c_prev``, ``written = i * g``,
    the new cell state ``c = kept + written``, ``shown = tanh(c)`` and the new hidden state
    ``h = o * tanh(c)``. ``x_t (D_in,)``, ``h_prev, c_prev (D_h,)``, ``params`` an
    :class:`course_utils.rnn.LSTMParams`.
    """
    if not isinstance(params, rnn.LSTMParams):
        raise TypeError(f"expected params to be an rnn.LSTMParams, got {type(params).__name__}")
    i, f, g, o = rnn.lstm_gates(x_t, h_prev, *params)
    c_prev = np.asarray(c_prev, dtype=float)
    if c_prev.shape != f.shape:
        raise ValueError(f"expected c_prev of shape (D_h,) = {f.shape}, got {c_prev.shape}")
    kept, written = f * c_prev, i * g
    c = kept + written
    return dict(i=i, f=f, g=g, o=o, kept=kept, written=written, c=c, shown=np.tanh(c), h=o * np.tanh(c))


def lstm_cell_figure(x_t, h_prev, c_prev, params, token: str, step: int) -> go.Figure:
    """One LSTM step as boxes joined by arrows, with its numbers: 1. what the step reads, the token's
    vector ``x_t (D_in,)``, the previous hidden state ``h_prev (D_h,)`` and cell state ``c_prev
    (D_h,)``; 2. the four gates ``i, f, g, o`` computed from ``x_t`` and ``h_prev``; 3. the new cell
    state, ``f ⊙ c_prev`` (what is kept) plus ``i ⊙ g`` (what is written); 4. the new hidden state,
    ``o ⊙ tanh(c)``. ``params`` an :class:`course_utils.rnn.LSTMParams`, ``token`` (1 to 8
    characters) and ``step`` (its index ``t``) name the step. Every number is
    :func:`lstm_cell_numbers`' rounded to 2 decimals; hidden sizes up to 5 fit. One column, at
    every width.
    """
    n = lstm_cell_numbers(x_t, h_prev, c_prev, params)
    if len(n["c"]) > 5 or np.size(x_t) > 5:
        raise ValueError(f"expected vectors of at most 5 numbers (a line of a box holds one), got D_in={np.size(x_t)}, "
                         f"D_h={len(n['c'])}")  # fmt: skip
    if not isinstance(token, str) or not 0 < len(token) <= 8:
        raise ValueError(f"expected a token of 1 to 8 characters, got {token!r}")
    if isinstance(step, bool) or not isinstance(step, (int, np.integer)) or step < 0:
        raise ValueError(f"expected step, the token's index t, to be a non-negative integer, got {step!r}")
    lines, vector = boxes.labelled_lines, boxes.vector
    word = token.replace("&", "&amp;").replace("<", "&lt;")
    texts = [
        f"<b>1. step t = {step} reads “{word}”</b><br>"
        + lines(["x_t", "h_t−1", "c_t−1"], [vector(x_t), vector(h_prev), vector(c_prev)]),
        "<b>2. four gates</b> from x_t and h_t−1<br>σ: 0 shut … 1 open; tanh: −1 … 1<br>"
        + lines(["i write", "f keep", "g new", "o show"], [vector(n[k]) for k in "ifgo"]),
        "<b>3. cell state</b>: keep, then write<br>"
        + lines(["f⊙c_t−1", "+ i⊙g", "= c_t"], [vector(n["kept"]), vector(n["written"]), f"<b>{vector(n['c'])}</b>"]),
        "<b>4. hidden state</b>: show<br>"
        + lines(["tanh(c_t)", "h_t = o⊙tanh"], [vector(n["shown"]), f"<b>{vector(n['h'])}</b>"]),
    ]
    title = f"One LSTM step: “{word}” at t = {step}, gates, cell state, hidden state"
    return boxes.box_diagram(texts, title=title, wide_rows=[[0], [1], [2], [3]])


def bilstm_states_figure(forward_states, backward_states, tokens: Sequence[str]) -> go.Figure:
    """A BiLSTM's states as a heatmap, one row per token, labelled with its two readers' order.

    ``forward_states (T, D_h)``: the left-to-right LSTM's (row ``t`` has read tokens ``0 .. t``);
    ``backward_states (T, D_h)``: the right-to-left LSTM's, already in token order (row ``t`` has
    read tokens ``t .. T-1``); ``tokens (T,)``. Columns ``→ h[j]`` then ``← h[j]``; each row's
    label says at which step each reader reached the token: ``↓1`` to ``↓T`` from the top for the
    forward reader, ``↑T`` to ``↑1`` for the backward one, which starts at the bottom.
    """
    forward = np.asarray(forward_states, dtype=float)
    backward = np.asarray(backward_states, dtype=float)
    tokens = [str(t) for t in tokens]
    if forward.ndim != 2 or forward.shape != backward.shape or forward.shape[0] != len(tokens) or not len(tokens):
        raise ValueError(f"expected forward and backward states of one shape (T, D_h) and T tokens, got "
                         f"{forward.shape}, {backward.shape} and {len(tokens)} tokens")  # fmt: skip
    T, D_h = forward.shape
    # the forward reader reaches token t at its step t + 1, the backward reader at its step T - t
    rows = [f"{token} ↓{t + 1} ↑{T - t}" for t, token in enumerate(tokens)]
    columns = [f"→ h[{j}]" for j in range(D_h)] + [f"← h[{j}]" for j in range(D_h)]
    fig = plots.heatmap(
        np.concatenate([forward, backward], axis=1), columns, rows,
        title="BiLSTM: the → reader goes down (↓ its step), the ← reader up (↑); their states side by side",
        x_title="state dimension (→ read left to right, ← read right to left)",
        y_title="token, ↓ and ↑ the readers' steps", colorscale=plots.DIVERGING, zmin=-1, zmax=1,
    )  # fmt: skip
    fig.add_vline(x=D_h - 0.5, line=dict(color="black", width=3))  # between the two readers' halves
    return fig
