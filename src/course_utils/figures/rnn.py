"""Lesson 01's figures: one LSTM step box by box, with its numbers (:func:`lstm_cell_figure`); a
BiLSTM's states with the order in which its two readers reach each token
(:func:`bilstm_states_figure`); the RNN's sequential steps against attention's one step."""

from __future__ import annotations

import html
from typing import Sequence

import numpy as np
import plotly.graph_objects as go

from .. import plots, rnn
from . import boxes

__all__ = ["bilstm_states_figure", "lstm_cell_figure", "lstm_cell_numbers", "lstm_step_layout", "rnn_unrolled_figure",
           "rnn_unrolled_layout", "sequential_steps_figure"]

RNN_ROW, ATTENTION_ROW = 1.0, 0.0  # heights of the two rows of tokens
OPENING_STEP = 1  # the slider step the sequential-steps figure opens at


def _token_row(tokens: Sequence[str], y: float, color_index: int, labelled: bool = True) -> go.Scatter:
    """The tokens as dots on one row of the figure, labelled above (or on hover only)."""
    return go.Scatter(
        x=list(range(len(tokens))), y=[y] * len(tokens), mode="markers+text" if labelled else "markers",
        text=list(tokens), textposition="top center", hoverinfo="text", showlegend=False,
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


ARC_HEIGHTS = {1: 0.22, 2: -0.26, 3: 0.42, 4: -0.5}  # each span's arc: odd spans above the row, even below


def arc_height(span: int) -> float:
    """How far above (positive) or below (negative) the attention row the arc joining two tokens
    ``span`` apart rises: odd spans above, even spans below, each span higher than the last on
    its side, so that no two arcs bundle at a token and all ``T (T - 1) / 2`` can be counted."""
    if span in ARC_HEIGHTS:
        return ARC_HEIGHTS[span]
    side = 1 if span % 2 else -1
    return side * (0.22 + 0.1 * (span - 1))


def _attention_links(n_tokens: int, n_points: int = 24) -> go.Scatter:
    """Every pair of tokens joined by a dotted arc (one trace), above the attention row for pairs
    an odd number of places apart, below it for an even number (:func:`arc_height`)."""
    s = np.linspace(0, 1, n_points)
    xs, ys = [], []
    for a in range(n_tokens):
        for b in range(a + 1, n_tokens):  # None separates the curves
            xs += [*(a + (b - a) * s), None]
            ys += [*(ATTENTION_ROW + arc_height(b - a) * 4 * s * (1 - s)), None]
    return go.Scatter(
        x=[None if v is None else round(float(v), 4) for v in xs],
        y=[None if v is None else round(float(v), 4) for v in ys], mode="lines", line=dict(color=plots.color(1), width=2, dash="dot"),
        name="attention: all pairs", hoverinfo="name", showlegend=False, visible=False,
    )


def _slider_step(steps: int, n_tokens: int) -> dict:
    """Slider position ``steps``: that many RNN arrows shown; attention's links from step 1 on."""
    # the traces: the RNN's row, attention's links (under its dots), attention's row, the RNN's arrows
    visible = [True, steps >= 1, True] + [t < steps for t in range(n_tokens - 1)]
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
        _attention_links(n_tokens),  # drawn first: the dots cover the arcs' ends
        _token_row(tokens, ATTENTION_ROW, 2, labelled=False),  # the RNN row above names the same columns
        *map(_rnn_arrow, range(n_tokens - 1)),
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


STRIP_CELL_W, STRIP_CELL_H = 44, 16  # a vector's cell: one number of up to 5 characters at 11 px
CELL_LINE_Y = 50  # the cell state's line, in the design's pixels (y downwards)
# Where each vector's strip (its centre) and each node stand in the phone's design, 330 px wide;
# the laptop's spreads the same x positions over 640 px. Rows: the cell state's line (c_t−1, f⊙c,
# c_t), what is written (i⊙g), what is shown (tanh(c_t), h_t), the gates, the inputs.
LSTM_STRIPS = {
    "c_prev": (26, CELL_LINE_Y), "kept": (130, CELL_LINE_Y), "c": (234, CELL_LINE_Y),
    "written": (182, 150), "shown": (290, 190), "h": (236, 245),
    "f": (78, 340), "i": (160, 340), "g": (208, 340), "o": (290, 340),
    "x_t": (26, 450), "h_prev": (78, 450),
}  # fmt: skip
LSTM_NODES = {"keep": ("⊙", 78, CELL_LINE_Y), "add": ("+", 182, CELL_LINE_Y), "mix": ("⊙", 182, 222),
              "tanh": ("tanh", 290, 122), "show": ("⊙", 290, 262)}  # fmt: skip
LSTM_HEADERS = {"c_prev": "c<sub>t−1</sub>", "kept": "f⊙c", "c": "c<sub>t</sub>", "written": "i⊙g",
                "shown": "tanh c<sub>t</sub>", "h": "h<sub>t</sub>", "f": "f", "i": "i", "g": "g", "o": "o",
                "x_t": "x<sub>t</sub>", "h_prev": "h<sub>t−1</sub>"}  # fmt: skip
GATE_FILL = (0, 158, 115)  # the palette's bluish green: a gate's cell, from white (0, shut) to green (1, open)
SIGNED_FILLS = ((0, 114, 178), (230, 159, 0))  # blue below 0, orange above: other vectors, by |value| up to 1
TINT_MAX = 0.4  # the deepest tint's opacity: the numbers on it keep 4.5:1, black on the light page, light on the dark
BUS_Y = 400  # the inputs' line into the four gates


def _cell_fill(value: float, gate: bool) -> str:
    """A cell's tint: a gate's from white (0, shut) to green (1, open); a signed value's blue
    (negative) or orange (positive), deeper with ``|value|`` (up to 1). At most :data:`TINT_MAX`
    opaque, so that its number reads on it on the light page and on the site's dark one."""
    if gate:
        rgb, alpha = GATE_FILL, float(np.clip(value, 0, 1))
    else:
        rgb, alpha = SIGNED_FILLS[value > 0], float(np.clip(abs(value), 0, 1))
    return f"rgba({rgb[0]}, {rgb[1]}, {rgb[2]}, {TINT_MAX * alpha:.3f})"


def lstm_step_layout(numbers: dict[str, np.ndarray], design_px: float) -> dict:
    """One LSTM step drawn for ``design_px`` pixels (330: a phone; wider: the positions spread):
    annotations, shapes, height and axes, both axes counting pixels (y downwards).

    ``numbers``: :func:`lstm_cell_numbers`' vectors, ``(D_h,)`` each, with ``x_t (D_in,)``,
    ``h_prev`` and ``c_prev`` added. Each vector a vertical strip of cells under a header, its
    numbers to 2 decimals: the gates' cells shaded from white (0, shut) to green (1, open), the
    others blue (negative) or orange (positive). The cell state is a horizontal line from
    ``c_t−1`` to ``c_t`` and on to the next step, with a ``⊙`` node where ``f`` multiplies it and
    a ``+`` node where ``i⊙g`` is added; from it, ``tanh`` and a ``⊙`` with ``o`` give ``h_t``.
    The inputs ``x_t`` and ``h_t−1`` feed the four gates through one line. Shapes and notes are
    named (``"strip f 0"``, ``"node keep"``) so that tests can find them.
    """
    scale = (design_px - 60) / (330 - 60) if design_px > 330 else 1.0
    offset = 0.0 if design_px <= 330 else 30 - 26 * scale + 26  # keep c_t−1 at the left edge
    X = lambda x: offset + 26 + (x - 26) * scale  # noqa: E731
    longest = max(len(v) for key, v in numbers.items() if key in LSTM_STRIPS)
    half_h = (longest + 1) * STRIP_CELL_H / 2  # a header cell, then one cell a number
    notes, shapes = [], []
    box = {}  # each strip's and node's extent: left, top, right, bottom

    def arrow(x0, y0, x1, y1, name):
        notes.append(dict(x=x1, y=y1, ax=x0, ay=y0, xref="x", yref="y", axref="x", ayref="y", text="",
                          showarrow=True, arrowhead=2, arrowsize=1.1, arrowwidth=1.8,
                          arrowcolor=boxes.ARROW_COLOR, name=name))  # fmt: skip

    def line(x0, y0, x1, y1, name, width=1.8, color=boxes.ARROW_COLOR):
        shapes.append(dict(type="line", xref="x", yref="y", x0=x0, y0=y0, x1=x1, y1=y1, layer="below",
                           line=dict(color=color, width=width), name=name))  # fmt: skip

    # the cell state's line, under everything on it, and on to the next step
    right = design_px - 4
    line(X(26), CELL_LINE_Y, right - 12, CELL_LINE_Y, "cell state", width=4, color="#555555")
    notes.append(dict(x=right, y=CELL_LINE_Y, ax=right - 14, ay=CELL_LINE_Y, xref="x", yref="y", axref="x", ayref="y",
                      text="", showarrow=True, arrowhead=2, arrowsize=1, arrowwidth=4, arrowcolor="#555555",
                      name="cell state to step t+1"))  # fmt: skip
    for key, (x, y) in LSTM_STRIPS.items():
        values = np.ravel(numbers[key])
        x = X(x)
        top = y - half_h
        left = x - STRIP_CELL_W / 2
        gate = key in "ifo"
        for j in range(len(values) + 1):
            y0 = top + j * STRIP_CELL_H
            header = j == 0
            fill = "white" if header else _cell_fill(float(values[j - 1]), gate)
            shapes.append(dict(type="rect", xref="x", yref="y", x0=left, x1=left + STRIP_CELL_W, y0=y0,
                               y1=y0 + STRIP_CELL_H, fillcolor="white", line=dict(width=0),
                               name=f"base {key} {j}"))  # fmt: skip
            shapes.append(dict(type="rect", xref="x", yref="y", x0=left, x1=left + STRIP_CELL_W, y0=y0,
                               y1=y0 + STRIP_CELL_H, fillcolor=fill, line=dict(color="black", width=1),
                               name=f"header {key}" if header else f"strip {key} {j - 1}"))  # fmt: skip
            text = f"<b>{LSTM_HEADERS[key]}</b>" if header else boxes.number(values[j - 1])
            notes.append(dict(x=x, y=y0 + STRIP_CELL_H / 2, xref="x", yref="y", text=text, showarrow=False,
                              xanchor="center", yanchor="middle", font=boxes.BOX_FONT,
                              name=f"header {key}" if header else f"strip {key} {j - 1}"))  # fmt: skip
        box[key] = (left, top, left + STRIP_CELL_W, top + (len(values) + 1) * STRIP_CELL_H)
    for key, (symbol, x, y) in LSTM_NODES.items():
        x = X(x)
        half_w = 18 if symbol == "tanh" else 10
        notes.append(dict(x=x, y=y, xref="x", yref="y", text=f"<b>{symbol}</b>", showarrow=False, xanchor="center",
                          yanchor="middle", bgcolor="white", bordercolor="black", borderwidth=1.5, borderpad=2,
                          font=dict(size=13), name=f"node {key}"))  # fmt: skip
        box[key] = (x - half_w, y - 10, x + half_w, y + 10)

    gap = 3  # an arrow stops this far from what it points at

    def up(source, target, name):  # from the top of one to the bottom of the other
        (l0, t0, r0, _), (l1, _, r1, b1) = box[source], box[target]
        arrow((l0 + r0) / 2, t0 - 1, (l1 + r1) / 2, b1 + gap, name)

    def down(source, target, name):
        (l0, _, r0, b0), (l1, t1, r1, _) = box[source], box[target]
        arrow((l0 + r0) / 2, b0 + 1, (l1 + r1) / 2, t1 - gap, name)

    up("f", "keep", "f into ⊙")
    up("written", "add", "i⊙g into +")
    up("mix", "written", "⊙ gives i⊙g")
    up("i", "mix", "i into ⊙")
    up("g", "mix", "g into ⊙")
    up("o", "show", "o into ⊙")
    down("tanh", "shown", "tanh gives tanh(c_t)")
    down("shown", "show", "tanh(c_t) into ⊙")
    tanh_x = (box["tanh"][0] + box["tanh"][2]) / 2  # the cell state branches down to tanh
    arrow(tanh_x, CELL_LINE_Y + 2, tanh_x, box["tanh"][1] - gap, "c_t into tanh")
    left_h = box["h"][2]
    arrow(box["show"][0] - 1, LSTM_NODES["show"][2], left_h + gap, LSTM_NODES["show"][2], "⊙ gives h_t")
    # the inputs, into every gate through one line
    inputs_top = min(box["x_t"][1], box["h_prev"][1])
    line(X(26), BUS_Y, box["o"][2] - STRIP_CELL_W / 2, BUS_Y, "inputs to the gates")
    for key in ("x_t", "h_prev"):
        x = (box[key][0] + box[key][2]) / 2
        line(x, inputs_top, x, BUS_Y, f"{key} to the gates")
    for key in "figo":
        x = (box[key][0] + box[key][2]) / 2
        arrow(x, BUS_Y, x, box[key][3] + gap, f"inputs into {key}")
    bottom = max(b for _, _, _, b in box.values()) + 8
    legend = ["gates f, i, o: σ, 0 shut (clear) … 1 open (green)", "others: −1 blue … +1 orange; g = tanh(…)"]
    for n, text in enumerate(legend):
        notes.append(dict(x=0, y=bottom + (n + 0.5) * boxes.LINE_PX, xref="x", yref="y", text=text, showarrow=False,
                          xanchor="left", yanchor="middle", font=boxes.BOX_FONT, name=f"legend {n}"))  # fmt: skip
    plot_height = bottom + len(legend) * boxes.LINE_PX + 4
    return dict(
        annotations=notes, shapes=shapes, height=int(round(plot_height + boxes.TOP_PX + 12)),
        xaxis=dict(visible=False, range=[-2, design_px], fixedrange=True),
        yaxis=dict(visible=False, range=[plot_height, -2], fixedrange=True),
    )  # fmt: skip


def lstm_cell_figure(x_t, h_prev, c_prev, params, token: str, step: int) -> go.Figure:
    """One LSTM step drawn as its mechanism, with its numbers: the cell state ``c_t−1 (D_h,)`` runs
    along a horizontal line, multiplied entry by entry by the forget gate ``f`` (a ``⊙`` node,
    giving ``f⊙c_t−1``, what is kept), then added to ``i⊙g`` (a ``+`` node: what is written),
    giving ``c_t``, which goes on to the next step and down through ``tanh`` and a ``⊙`` with the
    output gate ``o`` to ``h_t``. The gates ``i, f, g, o`` are computed from ``x_t (D_in,)`` and
    ``h_prev (D_h,)`` (one line feeds all four). Every vector is a strip of cells with its numbers
    (:func:`lstm_cell_numbers`' to 2 decimals), a gate's shaded from 0 (shut) to 1 (open).
    ``params`` an :class:`course_utils.rnn.LSTMParams`, ``token`` (1 to 8 characters) and ``step``
    (its index ``t``) name the step; vectors of up to 5 numbers. Laid out by
    :func:`lstm_step_layout`, for a laptop and (``layout.meta["narrow_layout"]``) a phone.
    """
    n = lstm_cell_numbers(x_t, h_prev, c_prev, params)
    if len(n["c"]) > 5 or np.size(x_t) > 5:
        raise ValueError(f"expected vectors of at most 5 numbers (a strip holds 5 cells), got D_in={np.size(x_t)}, "
                         f"D_h={len(n['c'])}")  # fmt: skip
    if not isinstance(token, str) or not 0 < len(token) <= 8:
        raise ValueError(f"expected a token of 1 to 8 characters, got {token!r}")
    if isinstance(step, bool) or not isinstance(step, (int, np.integer)) or step < 0:
        raise ValueError(f"expected step, the token's index t, to be a non-negative integer, got {step!r}")
    numbers = dict(n, x_t=np.ravel(x_t), h_prev=np.ravel(h_prev), c_prev=np.ravel(c_prev))
    wide = lstm_step_layout(numbers, boxes.WIDE_DESIGN_PX)
    narrow = lstm_step_layout(numbers, boxes.NARROW_DESIGN_PX)
    word = token.replace("&", "&amp;").replace("<", "&lt;")
    fig = go.Figure()
    fig.update_layout(
        title=dict(text=f"One LSTM step: “{word}” at t = {step}; the cell state runs along the line: ⊙f, then +i⊙g",
                   x=0.02, xanchor="left"),
        template=plots.TEMPLATE, margin=dict(l=4, r=4, t=boxes.TOP_PX, b=8), showlegend=False, font=dict(size=13),
        meta=dict(narrow_layout={key: narrow[key] for key in ("annotations", "shapes", "height", "xaxis", "yaxis")}),
        **wide,
    )  # fmt: skip
    return fig


def bilstm_states_figure(forward_states, backward_states, tokens: Sequence[str]) -> go.Figure:
    """A BiLSTM's states as a heatmap, one row per token, labelled with its two readers' order.

    ``forward_states (T, D_h)``: the left-to-right LSTM's (row ``t`` has read tokens ``0 .. t``);
    ``backward_states (T, D_h)``: the right-to-left LSTM's, already in token order (row ``t`` has
    read tokens ``t .. T-1``); ``tokens (T,)``. Columns ``→ h[j]`` then ``← h[j]``; each row's
    label says at which step each reader reached the token: ``↓1`` to ``↓T`` from the top for the
    forward reader, ``↑T`` to ``↑1`` for the backward one, which starts at the bottom. Beside the
    halves, the readers as arrow chains: ``→`` down the left, ``←`` up the right.
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
        x_title="state h[j]: the → reader's left of the line, the ← reader's right",
        y_title="token, ↓ and ↑ the readers' steps", colorscale=plots.DIVERGING, zmin=-1, zmax=1,
    )  # fmt: skip
    fig.add_vline(x=D_h - 0.5, line=dict(color="black", width=3))  # between the two readers' halves
    # the two readers as arrow chains beside their halves: → down the left, from [CLS]; ← up the
    # right, from [SEP]; each row then joins the two states read so far
    left, right = -0.85, 2 * D_h - 0.5 + 0.35
    for t in range(T - 1):
        for x, start, end, colour, name in ((left, t, t + 1, plots.color(0), "forward"),
                                            (right, t + 1, t, plots.color(5), "backward")):  # fmt: skip
            fig.add_annotation(x=x, y=end, ax=x, ay=start, xref="x", yref="y", axref="x", ayref="y", text="",
                               showarrow=True, arrowhead=2, arrowsize=1.1, arrowwidth=2, arrowcolor=colour,
                               standoff=6, startstandoff=6, name=f"{name} {start} to {end}")  # fmt: skip
    for x, text, colour in ((left, "→", plots.color(0)), (right, "←", plots.color(5))):
        fig.add_annotation(x=x, y=-0.75, xref="x", yref="y", text=f"<b>{text}</b>", showarrow=False,
                           font=dict(size=16, color=colour), name=f"{text} reader")  # fmt: skip
    # upright ticks, short enough for a phone (the hover keeps each column's full name)
    fig.update_xaxes(range=[-1.25, 2 * D_h - 0.5 + 0.75], tickmode="array", tickvals=columns,
                     ticktext=[f"h<sub>{j}</sub>" for j in range(D_h)] * 2, tickangle=0)
    fig.update_yaxes(autorange=False, range=[T - 0.5, -1.1])
    return fig


UNROLLED_ROWS = {"h": 40, "tanh": 130, "x": 210}  # the centres of each column's h_t strip, tanh node, x_t strip
UNROLLED_MAX_T = 6


def rnn_unrolled_layout(inputs, hidden_states, tokens: Sequence[str], design_px: float) -> dict:
    """The vanilla RNN over a sentence, unrolled, for ``design_px`` pixels: annotations, shapes,
    height and axes (pixels, y downwards).

    ``inputs (T, D_in)``, ``hidden_states (T, D_h)``, ``tokens (T,)``. One column a step: the
    token's vector ``x_t`` (a strip of its numbers, the token under it) goes up into a ``tanh``
    node, which gives ``h_t`` (a strip above it); ``h_{t−1}``, the strip of the column before,
    goes into the same node (the first node's is 0). Cells tinted blue (negative) or orange
    (positive), as in the LSTM's picture.
    """
    T = len(tokens)
    step = (design_px - STRIP_CELL_W) / max(T - 1, 1)
    xs = [STRIP_CELL_W / 2 + t * step for t in range(T)]
    notes, shapes = [], []
    gap = 3

    def strip(key, t, values, y_centre):
        values = np.ravel(values)
        top = y_centre - (len(values) + 1) * STRIP_CELL_H / 2
        left = xs[t] - STRIP_CELL_W / 2
        header = {"h": f"h<sub>{t}</sub>", "x": f"x<sub>{t}</sub>"}[key]
        for j in range(len(values) + 1):
            y0 = top + j * STRIP_CELL_H
            fill = "white" if j == 0 else _cell_fill(float(values[j - 1]), gate=False)
            name = f"header {key} {t}" if j == 0 else f"strip {key} {t} {j - 1}"
            shapes.append(dict(type="rect", xref="x", yref="y", x0=left, x1=left + STRIP_CELL_W, y0=y0,
                               y1=y0 + STRIP_CELL_H, fillcolor=fill, line=dict(color="black", width=1), name=name))
            notes.append(dict(x=xs[t], y=y0 + STRIP_CELL_H / 2, xref="x", yref="y", showarrow=False,
                              text=f"<b>{header}</b>" if j == 0 else boxes.number(values[j - 1]), xanchor="center",
                              yanchor="middle", font=boxes.BOX_FONT, name=name))  # fmt: skip
        return top, top + (len(values) + 1) * STRIP_CELL_H

    def arrow(x0, y0, x1, y1, name):
        notes.append(dict(x=x1, y=y1, ax=x0, ay=y0, xref="x", yref="y", axref="x", ayref="y", text="",
                          showarrow=True, arrowhead=2, arrowsize=1.1, arrowwidth=1.8,
                          arrowcolor=boxes.ARROW_COLOR, name=name))  # fmt: skip

    node_y = UNROLLED_ROWS["tanh"]
    h_top = UNROLLED_ROWS["h"]
    for t in range(T):
        h_span = strip("h", t, hidden_states[t], UNROLLED_ROWS["h"])
        x_span = strip("x", t, inputs[t], UNROLLED_ROWS["x"])
        h_top = min(h_top, h_span[0])
        notes.append(dict(x=xs[t], y=node_y, xref="x", yref="y", text="<b>tanh</b>", showarrow=False,
                          xanchor="center", yanchor="middle", bgcolor="white", bordercolor="black", borderwidth=1.5,
                          borderpad=2, font=dict(size=12), name=f"node {t}"))  # fmt: skip
        arrow(xs[t], x_span[0] - 1, xs[t], node_y + 10 + gap, f"x_{t} into tanh")
        arrow(xs[t], node_y - 10 - 1, xs[t], h_span[1] + gap, f"tanh gives h_{t}")
        if t:  # the state before, from the previous column's strip into this node
            arrow(xs[t - 1] + STRIP_CELL_W / 2 + 1, (h_span[0] + h_span[1]) / 2 + 14, xs[t] - 18 - gap, node_y - 4,
                  f"h_{t - 1} into tanh")  # fmt: skip
        notes.append(dict(x=xs[t], y=x_span[1] + 4 + boxes.LINE_PX / 2, xref="x", yref="y",
                          text=f"“{html.escape(tokens[t])}”", showarrow=False, xanchor="center", yanchor="middle",
                          font=boxes.BOX_FONT, name=f"token {t}"))  # fmt: skip
    plot_height = x_span[1] + 8 + boxes.LINE_PX
    return dict(
        annotations=notes, shapes=shapes, height=int(round(plot_height - h_top + boxes.TOP_PX + 12)),
        xaxis=dict(visible=False, range=[-2, design_px + 2], fixedrange=True),
        yaxis=dict(visible=False, range=[plot_height, h_top - 4], fixedrange=True),
    )  # fmt: skip


def rnn_unrolled_figure(inputs, hidden_states, tokens: Sequence[str]) -> go.Figure:
    """A vanilla RNN unrolled over a sentence: one ``tanh`` a token, each fed the token's vector
    ``x_t`` and the state before, ``h_{t−1}``, each giving ``h_t``: the same weights ``W_xh,
    W_hh, b_h`` at every step.

    ``inputs (T, D_in)`` and ``hidden_states (T, D_h)`` (from :func:`course_utils.rnn.rnn_forward`
    or the lesson's loop), ``tokens (T,)`` of at most 6 characters; ``T`` at most 6, vectors of at
    most 5 numbers. Every number drawn to 2 decimals. Laid out by :func:`rnn_unrolled_layout`, for
    a laptop and (``layout.meta["narrow_layout"]``) a phone.
    """
    inputs, hidden_states = np.asarray(inputs, dtype=float), np.asarray(hidden_states, dtype=float)
    tokens = [str(t) for t in tokens]
    if inputs.ndim != 2 or hidden_states.ndim != 2 or not len(tokens) == len(inputs) == len(hidden_states):
        raise ValueError(f"expected inputs (T, D_in), hidden states (T, D_h) and T tokens, got {inputs.shape}, "
                         f"{hidden_states.shape} and {len(tokens)} tokens")  # fmt: skip
    if not 1 <= len(tokens) <= UNROLLED_MAX_T or max(inputs.shape[1], hidden_states.shape[1]) > 5:
        raise ValueError(f"expected 1 to {UNROLLED_MAX_T} tokens and vectors of at most 5 numbers, got T={len(tokens)}, "
                         f"D_in={inputs.shape[1]}, D_h={hidden_states.shape[1]}")  # fmt: skip
    if any(not 0 < len(t) <= 6 for t in tokens):
        raise ValueError(f"expected tokens of 1 to 6 characters, got {tokens}")
    wide = rnn_unrolled_layout(inputs, hidden_states, tokens, boxes.WIDE_DESIGN_PX)
    narrow = rnn_unrolled_layout(inputs, hidden_states, tokens, boxes.NARROW_DESIGN_PX)
    fig = go.Figure()
    fig.update_layout(
        title=dict(text=f"An RNN unrolled over {len(tokens)} tokens: x_t and h_t−1 into tanh, out comes h_t, "
                        "with the same weights at every step", x=0.02, xanchor="left"),
        template=plots.TEMPLATE, margin=dict(l=4, r=4, t=boxes.TOP_PX, b=8), showlegend=False, font=dict(size=13),
        meta=dict(narrow_layout={key: narrow[key] for key in ("annotations", "shapes", "height", "xaxis", "yaxis")}),
        **wide,
    )  # fmt: skip
    return fig
