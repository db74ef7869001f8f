"""course_utils.compare: the side-by-side measurements of lesson 01's table."""

import numpy as np
import pytest
import torch

from course_utils import compare, rnn
from course_utils.encoder_pieces import encoder_layer_param_count


@pytest.mark.parametrize("name", compare.MODEL_NAMES)
def test_models_map_a_batch_to_outputs_of_their_width(name):
    model = compare.build(name, 8)
    out = model(torch.zeros(3, 5, 8, dtype=torch.float64))
    assert out.shape == (3, 5, 16 if name == "BiLSTM" else 8)


def test_parameter_counts_match_the_formulas_of_the_lessons():
    d = 16
    counts = {name: compare.parameter_count(compare.build(name, d)) for name in compare.MODEL_NAMES}
    bias_per_gate = d  # torch keeps bias_ih and bias_hh: one extra bias vector per gate and direction
    assert counts["RNN"] == rnn.rnn_param_count(d, d) + bias_per_gate
    assert counts["LSTM"] == rnn.lstm_param_count(d, d) + 4 * bias_per_gate
    assert counts["BiLSTM"] == rnn.bilstm_param_count(d, d) + 8 * bias_per_gate
    assert counts["DistilBERT block"] == encoder_layer_param_count(d, 4 * d)


def test_context_patterns_left_for_recurrent_models_all_for_bidirectional_ones():
    described = {
        name: compare.describe_context(compare.context_pattern(compare.build(name, 4), 5, 4))
        for name in compare.MODEL_NAMES
    }
    assert described == {
        "RNN": "tokens 0..t (left)",
        "LSTM": "tokens 0..t (left)",
        "BiLSTM": "all T tokens",
        "DistilBERT block": "all T tokens",
    }


def test_the_batched_jacobian_equals_autograds():
    model = compare.build("LSTM", 3, seed=1)
    x = compare._inputs(4, 3, seed=2)
    full = torch.autograd.functional.jacobian(lambda v: model(v)[0], x)[:, :, 0]  # (T, D_out, T, D)
    rows = compare._jacobian_rows(model, x, torch.arange(4))  # (T, D_out, T, D)
    torch.testing.assert_close(rows, full)
    norm = compare.gradient_at_distance(model, 4, 3, distance=2, seed=2)
    assert norm == pytest.approx(float(full[3, :, 1].norm()))


def test_gradients_far_back_vanish_for_the_rnn_not_for_attention():
    far = {name: compare.gradient_at_distance(compare.build(name, 16), 40, 16, 30) for name in compare.MODEL_NAMES}
    assert far["RNN"] < far["LSTM"] < far["DistilBERT block"]
    assert far["DistilBERT block"] > 1e-3


def test_describe_context_names_other_patterns_and_rejects_bad_shapes():
    assert compare.describe_context(np.eye(3, dtype=bool)) == "another pattern"
    with pytest.raises(ValueError, match=r"square \(T, T\)"):
        compare.describe_context(np.ones((2, 3), dtype=bool))


def test_bad_inputs_get_clear_errors():
    with pytest.raises(ValueError, match="expected a model name"):
        compare.build("GRU", 8)
    with pytest.raises(ValueError, match="positive integer"):
        compare.build("RNN", 0)
    with pytest.raises(ValueError, match="divisible by n_heads"):
        compare.build("DistilBERT block", 5)
    with pytest.raises(ValueError, match="0 <= distance < seq_len"):
        compare.gradient_at_distance(compare.build("RNN", 4), 5, 4, distance=5)


def test_forward_seconds_is_positive_and_restores_the_thread_count():
    threads = torch.get_num_threads()
    assert compare.forward_seconds(compare.build("RNN", 4), 8, 4, repeats=2) > 0
    assert torch.get_num_threads() == threads
