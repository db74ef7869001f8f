"""Lesson 01's mechanism pictures: one LSTM step box by box, and a BiLSTM's states with its two
readers' order. The numbers drawn are those of course_utils.rnn and of torch's LSTM."""

from __future__ import annotations

import html
import re

import numpy as np
import pytest
import torch

from course_utils import figures, rnn
from course_utils.data import running_example
from course_utils.figures import boxes

EXAMPLE = running_example()
TOKENS = list(EXAMPLE.tokens)
INPUTS = EXAMPLE.embeddings  # (T, D_in)
PARAMS = rnn.init_lstm_params(d_in=4, d_hidden=4, seed=2)
NUMBER = re.compile(r"−?\d+\.\d\d")


def numbers(text: str) -> list[float]:
    plain = html.unescape(re.sub(r"<[^>]+>", "", text))
    return [float(n.replace("−", "-")) for n in NUMBER.findall(plain)]


def close(drawn, expected):
    np.testing.assert_allclose(drawn, np.round(np.ravel(expected), 2), atol=0.0051)


def strip(layout, key) -> list[float]:
    """The numbers a layout writes in one vector's strip, top to bottom."""
    cells = sorted((int(a["name"].split()[-1]), a["text"]) for a in layout["annotations"]
                   if a.get("name", "").startswith(f"strip {key} "))  # fmt: skip
    return [numbers(text)[0] for _, text in cells]


def layouts(fig):
    return {"laptop": fig.to_plotly_json()["layout"], "phone": fig.layout.meta["narrow_layout"]}


@pytest.mark.parametrize("t", [1, 2, 4])
def test_the_lstm_step_draws_the_gates_and_states_of_torch_lstm(t):
    hidden, cells = rnn.lstm_forward(INPUTS, PARAMS)
    fig = figures.lstm_cell_figure(INPUTS[t], hidden[t - 1], cells[t - 1], PARAMS, TOKENS[t], t)
    i, f, g, o = rnn.lstm_gates(INPUTS[t], hidden[t - 1], *PARAMS)
    # the new states, from torch's own LSTM given the same weights (not from the builder's helpers)
    with torch.no_grad():
        torch_h, _ = rnn.to_torch_lstm(PARAMS)(torch.from_numpy(INPUTS[None].copy()))
    expected = dict(x_t=INPUTS[t], h_prev=hidden[t - 1], c_prev=cells[t - 1], i=i, f=f, g=g, o=o,
                    kept=f * cells[t - 1], written=i * g, c=cells[t], shown=np.tanh(cells[t]), h=torch_h[0, t].numpy())
    for layout in layouts(fig).values():
        for key, values in expected.items():
            close(strip(layout, key), values)
    assert f"“{TOKENS[t]}”" in fig.layout.title.text and f"t = {t}" in fig.layout.title.text


def test_the_lstm_step_draws_the_cell_state_as_a_line_with_its_two_nodes_and_shaded_gates():
    from course_utils.figures.rnn import TINT_MAX

    hidden, cells = rnn.lstm_forward(INPUTS, PARAMS)
    fig = figures.lstm_cell_figure(INPUTS[2], hidden[1], cells[1], PARAMS, "love", 2)
    f = rnn.lstm_gates(INPUTS[2], hidden[1], *PARAMS)[1]
    for name, layout in layouts(fig).items():
        notes = {a.get("name"): a for a in layout["annotations"]}
        rects = {s["name"]: s for s in layout["shapes"] if s["type"] == "rect"}
        (belt,) = [s for s in layout["shapes"] if s.get("name") == "cell state"]
        assert belt["y0"] == belt["y1"]  # a horizontal line ...
        keep, add = notes["node keep"], notes["node add"]
        assert keep["text"] == "<b>⊙</b>" and add["text"] == "<b>+</b>"
        assert keep["y"] == add["y"] == belt["y0"] and belt["x0"] < keep["x"] < add["x"] < belt["x1"]  # ... with ⊙f, then +
        # c_t−1, then f⊙c, then c_t ride the line, in that order, across the nodes
        centres = {k: (rects[f"header {k}"]["x0"] + rects[f"header {k}"]["x1"]) / 2 for k in ("c_prev", "kept", "c")}
        assert centres["c_prev"] < keep["x"] < centres["kept"] < add["x"] < centres["c"]
        # f feeds the ⊙ on the line, from below: an arrow up to the node
        (f_arrow,) = [a for a in layout["annotations"] if a.get("name") == "f into ⊙"]
        assert f_arrow["x"] == pytest.approx(keep["x"]) and f_arrow["ay"] > f_arrow["y"] > keep["y"]
        # a gate's cells are shaded by its value: 0 shut (white), 1 open (the deepest green)
        alphas = [float(rects[f"strip f {j}"]["fillcolor"].split(",")[-1].rstrip(")")) for j in range(len(f))]
        np.testing.assert_allclose(alphas, TINT_MAX * f, atol=1e-3)
        # no arrowhead under a strip or a node, and everything inside the width designed for
        design = boxes.NARROW_DESIGN_PX if name == "phone" else boxes.WIDE_DESIGN_PX
        assert max(s.get("x1", 0) for s in layout["shapes"]) <= design
        for a in layout["annotations"]:
            if a.get("showarrow"):
                for r in rects.values():
                    assert not (r["x0"] < a["x"] < r["x1"] and r["y0"] < a["y"] < r["y1"]), (a["name"], r["name"])


def test_the_bilstm_heatmap_draws_both_readers_states_and_their_order():
    backward_params = rnn.init_lstm_params(d_in=4, d_hidden=4, seed=3)
    forward, _ = rnn.lstm_forward(INPUTS, PARAMS)
    backward, _ = rnn.lstm_forward(INPUTS[::-1], backward_params)
    fig = figures.bilstm_states_figure(forward, backward[::-1], TOKENS)
    heat = fig.data[0]
    package = rnn.bilstm_forward(INPUTS, PARAMS, backward_params)
    np.testing.assert_allclose(np.array(heat.z, dtype=float), package, rtol=1e-3, atol=1e-6)
    assert list(heat.x) == [f"→ h[{j}]" for j in range(4)] + [f"← h[{j}]" for j in range(4)]
    # upright, short ticks (a phone had them rotated): each half numbers its own states
    assert fig.layout.xaxis.tickangle == 0 and list(fig.layout.xaxis.tickvals) == list(heat.x)
    assert list(fig.layout.xaxis.ticktext) == [f"h<sub>{j}</sub>" for j in range(4)] * 2
    T = len(TOKENS)
    # the forward reader reaches token t at step t + 1, the backward reader at step T - t
    assert list(heat.y) == [f"{tok} ↓{t + 1} ↑{T - t}" for t, tok in enumerate(TOKENS)]
    assert fig.layout.shapes[0].x0 == 3.5  # the line between the halves
    # the two readers as arrow chains: → down beside the forward half, ← up beside the backward half
    arrows = [a for a in fig.layout.annotations if a.showarrow]
    forward_chain = [(a.ay, a.y) for a in arrows if a.x < 0]
    backward_chain = [(a.ay, a.y) for a in arrows if a.x > 7.5]
    assert forward_chain == [(t, t + 1) for t in range(T - 1)]  # row t to row t + 1: down the rows
    assert backward_chain == [(t + 1, t) for t in range(T - 1)]  # row t + 1 to row t: up the rows
    assert len(arrows) == 2 * (T - 1)


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda: figures.lstm_cell_figure(INPUTS[0], np.zeros(4), np.zeros(3), PARAMS, "a", 0), ValueError, r"c_prev of shape"),
        (lambda: figures.lstm_cell_figure(INPUTS[0], np.zeros(4), np.zeros(4), (1, 2, 3), "a", 0), TypeError, "LSTMParams"),
        (lambda: figures.lstm_cell_figure(INPUTS[0], np.zeros(4), np.zeros(4), PARAMS, "x" * 9, 0), ValueError, "1 to 8"),
        (lambda: figures.lstm_cell_figure(INPUTS[0], np.zeros(4), np.zeros(4), PARAMS, "a", -1), ValueError, "non-negative"),
        (lambda: figures.bilstm_states_figure(np.zeros((5, 4)), np.zeros((5, 3)), TOKENS), ValueError, "one shape"),
        (lambda: figures.bilstm_states_figure(np.zeros((5, 4)), np.zeros((5, 4)), TOKENS[:4]), ValueError, "T tokens"),
    ],
)
def test_bad_inputs_get_clear_errors(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_the_unrolled_rnn_draws_every_step_with_its_numbers_and_the_state_passed_on():
    params = rnn.init_rnn_params(d_in=4, d_hidden=4, seed=1)
    states = rnn.rnn_forward(INPUTS, params)
    fig = figures.rnn_unrolled_figure(INPUTS, states, TOKENS)
    T = len(TOKENS)
    for name, layout in layouts(fig).items():
        notes = {a.get("name"): a for a in layout["annotations"]}
        for t in range(T):
            close(strip(layout, f"x {t}"), INPUTS[t])
            close(strip(layout, f"h {t}"), states[t])
            assert notes[f"node {t}"]["text"] == "<b>tanh</b>"  # one node a step, the same function
            assert notes[f"token {t}"]["text"] == f"“{html.escape(TOKENS[t])}”"
            # x_t goes up into the node, the node up into h_t: one column a step
            into, out = notes[f"x_{t} into tanh"], notes[f"tanh gives h_{t}"]
            assert into["x"] == into["ax"] == out["x"] == notes[f"node {t}"]["x"]
            assert into["ay"] > into["y"] > notes[f"node {t}"]["y"] > out["y"]
        # the state is passed on: from each h_{t-1} into the next node, and nowhere else
        passed = [a for a in layout["annotations"] if a.get("name", "").startswith("h_")]
        assert [a["name"] for a in passed] == [f"h_{t - 1} into tanh" for t in range(1, T)]
        for t, a in enumerate(passed, start=1):
            assert notes[f"node {t - 1}"]["x"] < a["ax"] < a["x"] < notes[f"node {t}"]["x"]
        design = boxes.NARROW_DESIGN_PX if name == "phone" else boxes.WIDE_DESIGN_PX
        assert max(s["x1"] for s in layout["shapes"]) <= design and min(s["x0"] for s in layout["shapes"]) >= 0
    with pytest.raises(ValueError, match="T tokens"):
        figures.rnn_unrolled_figure(INPUTS, states[:4], TOKENS)


def test_the_crossing_is_where_attention_stops_being_faster():
    lengths = np.array([8, 16, 32, 64])
    rnn_s = np.array([1.0, 2.0, 4.0, 8.0])
    attention_s = np.array([0.1, 0.4, 2.0, 16.0])  # faster at 32, slower at 64
    crossing = rnn.crossing_length(rnn.Timings(lengths, rnn_s, attention_s))
    # log(attention / rnn) goes from log(0.5) to log(2): zero half way, at sqrt(32 * 64) on a log scale
    assert crossing == pytest.approx(np.sqrt(32 * 64))
    assert rnn.crossing_length(rnn.Timings(lengths, rnn_s, attention_s / 100)) is None
    assert rnn.crossing_length(rnn.Timings(lengths, rnn_s, attention_s * 100)) == 8


def test_a_mark_names_its_line_in_the_legend_or_beside_it_on_log_axes_too():
    from course_utils import plots

    fig = plots.lines([1, 10, 100], {"a": [1.0, 1e-3, 1e-8]}, title="t", x_title="x", y_title="y", log_x=True,
                      log_y=True)
    plots.mark(fig, "1e-6", y=1e-6)
    line = fig.data[-1]
    assert list(line.y) == [1e-6, 1e-6] and list(line.x) == [1, 100] and line.name == "1e-6"  # in the legend
    assert line.line.dash not in {t.line.dash or "solid" for t in fig.data[:-1]}  # told apart without colour
    plots.mark(fig, "T = 30", x=30)
    (rule,) = fig.layout.shapes
    assert rule.x0 == rule.x1 == 30
    (label,) = fig.layout.annotations
    assert label.x == pytest.approx(np.log10(30)) and label.xanchor == "left"  # on a log axis: its logarithm
    with pytest.raises(ValueError, match="one of x"):
        plots.mark(fig, "both", x=1, y=1)
    fig = plots.lines([1, 2], {"a": [1, 2], "b": [2, 3], "c": [3, 4]}, title="t", x_title="x", y_title="y")
    assert plots.mark(fig, "ref", y=2).data[-1].line.dash == "dashdot"  # solid, dash and dot are taken
