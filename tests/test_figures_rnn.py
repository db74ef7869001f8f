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
from tests.test_figures_boxes import assert_fits, boxes_of

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


@pytest.mark.parametrize("t", [1, 2, 4])
def test_the_lstm_step_draws_the_gates_and_states_of_torch_lstm(t):
    hidden, cells = rnn.lstm_forward(INPUTS, PARAMS)
    fig = figures.lstm_cell_figure(INPUTS[t], hidden[t - 1], cells[t - 1], PARAMS, TOKENS[t], t)
    reads, gates, cell, shown = [a["text"] for a in boxes_of(fig.to_plotly_json()["layout"])]
    close(numbers(reads), np.concatenate([INPUTS[t], hidden[t - 1], cells[t - 1]]))
    i, f, g, o = rnn.lstm_gates(INPUTS[t], hidden[t - 1], *PARAMS)
    close(numbers(gates)[-16:], np.concatenate([i, f, g, o]))
    close(numbers(cell), np.concatenate([f * cells[t - 1], i * g, cells[t]]))
    # the new states, from torch's own LSTM given the same weights (not from the builder's helpers)
    with torch.no_grad():
        torch_h, _ = rnn.to_torch_lstm(PARAMS)(torch.from_numpy(INPUTS[None]))
    close(numbers(shown)[-4:], torch_h[0, t].numpy())
    close(numbers(shown)[:4], np.tanh(cells[t]))
    assert f"“{TOKENS[t]}”" in reads and f"t = {t}" in fig.layout.title.text


def test_the_lstm_step_is_one_column_that_fits_a_phone():
    hidden, cells = rnn.lstm_forward(INPUTS, PARAMS)
    fig = figures.lstm_cell_figure(INPUTS[2], hidden[1], cells[1], PARAMS, "love", 2)
    layout = fig.to_plotly_json()["layout"]
    assert len({a["x"] for a in boxes_of(layout)}) == 1
    assert_fits(layout, boxes.NARROW_DESIGN_PX)


def test_the_bilstm_heatmap_draws_both_readers_states_and_their_order():
    backward_params = rnn.init_lstm_params(d_in=4, d_hidden=4, seed=3)
    forward, _ = rnn.lstm_forward(INPUTS, PARAMS)
    backward, _ = rnn.lstm_forward(INPUTS[::-1], backward_params)
    fig = figures.bilstm_states_figure(forward, backward[::-1], TOKENS)
    heat = fig.data[0]
    package = rnn.bilstm_forward(INPUTS, PARAMS, backward_params)
    np.testing.assert_allclose(np.array(heat.z, dtype=float), package, rtol=1e-3, atol=1e-6)
    assert list(heat.x) == [f"→ h[{j}]" for j in range(4)] + [f"← h[{j}]" for j in range(4)]
    T = len(TOKENS)
    # the forward reader reaches token t at step t + 1, the backward reader at step T - t
    assert list(heat.y) == [f"{tok} ↓{t + 1} ↑{T - t}" for t, tok in enumerate(TOKENS)]
    assert fig.layout.shapes[0].x0 == 3.5  # the line between the halves


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
