"""Tests of course_utils.rnn: parity with torch.nn.RNN / LSTM, parameter counts, laws, validation.

Parity tests build the torch module first (torch's own initialisation, both of its biases
non-zero) and read the course's parameters out of it, so they check the course's conventions
against code nobody here wrote:

- torch stores weights transposed: ``W_xh = weight_ih_l0.T`` and ``W_hh = weight_hh_l0.T``;
- torch keeps two bias vectors that are always added: ``b_h = bias_ih_l0 + bias_hh_l0``. This is
  why torch counts one more bias vector per gate (and direction) than the course;
- torch stacks the LSTM gates in the order ``i, f, g, o``, as the course does.
"""

from __future__ import annotations

import time

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from course_utils import rnn

TOL = dict(rtol=0, atol=1e-10)

SIZES = [(1, 1), (3, 5), (4, 4), (6, 2)]  # (D_in, D_h): square and not


def _numpy(tensor: torch.Tensor) -> np.ndarray:
    return tensor.detach().numpy()


def _params_from_torch(module: torch.nn.Module, kind: type, suffix: str = "l0"):
    """The course's params of a torch RNN/LSTM layer: transposed weights, the two biases summed."""
    return kind(
        W_xh=_numpy(getattr(module, f"weight_ih_{suffix}")).T.copy(),
        W_hh=_numpy(getattr(module, f"weight_hh_{suffix}")).T.copy(),
        b_h=_numpy(getattr(module, f"bias_ih_{suffix}") + getattr(module, f"bias_hh_{suffix}")),
    )


def _torch_module(cls, d_in: int, d_hidden: int, seed: int, **kwargs) -> torch.nn.Module:
    torch.manual_seed(seed)
    return cls(d_in, d_hidden, batch_first=True, dtype=torch.float64, **kwargs)


def _inputs(seq_len: int, d_in: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((seq_len, d_in))


def _batch(array: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(array).unsqueeze(0)  # (1, T, D)


# --------------------------------------------------------------------------------------------
# Parity with torch


@pytest.mark.parametrize("d_in, d_hidden", SIZES)
def test_rnn_forward_matches_torch_rnn(d_in, d_hidden):
    module = _torch_module(torch.nn.RNN, d_in, d_hidden, seed=d_in + 10 * d_hidden)
    params = _params_from_torch(module, rnn.RNNParams)
    inputs = _inputs(7, d_in)
    h_0 = np.random.default_rng(1).uniform(-1, 1, d_hidden)

    expected, _ = module(_batch(inputs), torch.from_numpy(h_0).reshape(1, 1, d_hidden))
    np.testing.assert_allclose(rnn.rnn_forward(inputs, params, h_0=h_0), _numpy(expected[0]), **TOL)
    expected_zero_start, _ = module(_batch(inputs))
    np.testing.assert_allclose(rnn.rnn_forward(inputs, params), _numpy(expected_zero_start[0]), **TOL)


@pytest.mark.parametrize("d_in, d_hidden", SIZES)
def test_rnn_step_matches_torch_rnn_cell(d_in, d_hidden):
    torch.manual_seed(0)
    cell = torch.nn.RNNCell(d_in, d_hidden, dtype=torch.float64)
    rng = np.random.default_rng(2)
    x_t, h_prev = rng.standard_normal(d_in), rng.uniform(-1, 1, d_hidden)
    expected = cell(torch.from_numpy(x_t)[None], torch.from_numpy(h_prev)[None])[0]
    W_xh, W_hh = _numpy(cell.weight_ih).T, _numpy(cell.weight_hh).T
    b_h = _numpy(cell.bias_ih + cell.bias_hh)
    np.testing.assert_allclose(rnn.rnn_step(x_t, h_prev, W_xh, W_hh, b_h), _numpy(expected), **TOL)


@pytest.mark.parametrize("d_in, d_hidden", SIZES)
def test_lstm_step_and_gates_match_torch_lstm_cell(d_in, d_hidden):
    torch.manual_seed(3)
    cell = torch.nn.LSTMCell(d_in, d_hidden, dtype=torch.float64)
    rng = np.random.default_rng(4)
    x_t, h_prev, c_prev = rng.standard_normal(d_in), rng.uniform(-1, 1, d_hidden), rng.standard_normal(d_hidden)
    W_xh, W_hh = _numpy(cell.weight_ih).T, _numpy(cell.weight_hh).T
    b_h = _numpy(cell.bias_ih + cell.bias_hh)

    h_t, c_t = rnn.lstm_step(x_t, h_prev, c_prev, W_xh, W_hh, b_h)
    x, h, c = (torch.from_numpy(a)[None] for a in (x_t, h_prev, c_prev))  # batches of one
    expected_h, expected_c = cell(x, (h, c))
    np.testing.assert_allclose(h_t, _numpy(expected_h[0]), **TOL)
    np.testing.assert_allclose(c_t, _numpy(expected_c[0]), **TOL)

    # The gates, in torch's i, f, g, o order, from torch's stacked pre-activations.
    z = x[0] @ cell.weight_ih.T + h[0] @ cell.weight_hh.T + cell.bias_ih + cell.bias_hh  # (4*D_h,)
    z_i, z_f, z_g, z_o = z.chunk(4)
    expected_gates = (torch.sigmoid(z_i), torch.sigmoid(z_f), torch.tanh(z_g), torch.sigmoid(z_o))
    for name, gate, expected in zip(rnn.GATES, rnn.lstm_gates(x_t, h_prev, W_xh, W_hh, b_h), expected_gates):
        np.testing.assert_allclose(gate, _numpy(expected), err_msg=f"gate {name}", **TOL)


@pytest.mark.parametrize("d_in, d_hidden", SIZES)
def test_lstm_forward_matches_torch_lstm(d_in, d_hidden):
    module = _torch_module(torch.nn.LSTM, d_in, d_hidden, seed=5)
    params = _params_from_torch(module, rnn.LSTMParams)
    inputs = _inputs(6, d_in)
    rng = np.random.default_rng(6)
    h_0, c_0 = rng.uniform(-1, 1, d_hidden), rng.standard_normal(d_hidden)

    hidden_states, cell_states = rnn.lstm_forward(inputs, params, h_0=h_0, c_0=c_0)
    state = (torch.from_numpy(h_0).reshape(1, 1, -1), torch.from_numpy(c_0).reshape(1, 1, -1))
    expected, (h_n, c_n) = module(_batch(inputs), state)
    np.testing.assert_allclose(hidden_states, _numpy(expected[0]), **TOL)
    np.testing.assert_allclose(hidden_states[-1], _numpy(h_n[0, 0]), **TOL)
    np.testing.assert_allclose(cell_states[-1], _numpy(c_n[0, 0]), **TOL)
    # Every cell state: torch returns only the last, so run torch on each prefix.
    for t in range(len(inputs)):
        _, (_, c_t) = module(_batch(inputs[: t + 1]), state)
        np.testing.assert_allclose(cell_states[t], _numpy(c_t[0, 0]), **TOL)


@pytest.mark.parametrize("d_in, d_hidden", SIZES)
def test_bilstm_forward_matches_torch_bidirectional_lstm(d_in, d_hidden):
    module = _torch_module(torch.nn.LSTM, d_in, d_hidden, seed=7, bidirectional=True)
    forward_params = _params_from_torch(module, rnn.LSTMParams, "l0")
    backward_params = _params_from_torch(module, rnn.LSTMParams, "l0_reverse")
    inputs = _inputs(5, d_in, seed=8)
    expected, _ = module(_batch(inputs))  # (1, T, 2*D_h): forward half, then backward half
    states = rnn.bilstm_forward(inputs, forward_params, backward_params)
    assert states.shape == (5, 2 * d_hidden)
    np.testing.assert_allclose(states, _numpy(expected[0]), **TOL)


def test_to_torch_modules_compute_the_numpy_functions():
    inputs = _inputs(6, 3, seed=9)
    rnn_params = rnn.init_rnn_params(3, 5, seed=1)
    module = rnn.to_torch_rnn(rnn_params)
    assert module.weight_ih_l0.dtype == torch.float64 and module.batch_first
    assert not torch.any(module.bias_hh_l0)  # the course's one bias lives in bias_ih
    np.testing.assert_allclose(_numpy(module(_batch(inputs))[0][0]), rnn.rnn_forward(inputs, rnn_params), **TOL)

    forward_params, backward_params = rnn.init_lstm_params(3, 5, seed=2), rnn.init_lstm_params(3, 5, seed=3)
    lstm = rnn.to_torch_lstm(forward_params)
    assert not lstm.bidirectional
    np.testing.assert_allclose(_numpy(lstm(_batch(inputs))[0][0]), rnn.lstm_forward(inputs, forward_params)[0], **TOL)
    bilstm = rnn.to_torch_lstm(forward_params, backward_params)
    assert bilstm.bidirectional
    np.testing.assert_allclose(
        _numpy(bilstm(_batch(inputs))[0][0]), rnn.bilstm_forward(inputs, forward_params, backward_params), **TOL
    )


def test_to_torch_modules_validate_their_params():
    with pytest.raises(TypeError, match="expected params to be an RNNParams"):
        rnn.to_torch_rnn(rnn.init_lstm_params(2, 2))
    with pytest.raises(TypeError, match="expected backward_params to be an LSTMParams"):
        rnn.to_torch_lstm(rnn.init_lstm_params(2, 2), rnn.init_rnn_params(2, 2))
    message = r"expected backward_params.W_xh of shape \(D_in, 4\*D_h\)=\(2, 8\), got \(3, 8\)"
    with pytest.raises(ValueError, match=message):
        rnn.to_torch_lstm(rnn.init_lstm_params(2, 2), rnn.init_lstm_params(3, 2))


def test_sigmoid_matches_torch_and_never_overflows():
    z = np.array([-1000.0, -30.0, -1.5, 0.0, 0.7, 30.0, 1000.0])
    with np.errstate(all="raise"):
        values = rnn.sigmoid(z)
    np.testing.assert_allclose(values, _numpy(torch.sigmoid(torch.from_numpy(z))), rtol=1e-12, atol=1e-15)
    assert values[0] == 0.0 and values[-1] == 1.0
    assert rnn.sigmoid(np.zeros((2, 3))).shape == (2, 3)


# --------------------------------------------------------------------------------------------
# Parameter counts


def _torch_count(module: torch.nn.Module) -> int:
    return sum(p.numel() for p in module.parameters())


@pytest.mark.parametrize("d_in, d_hidden", [*SIZES, (300, 128)])
def test_param_counts_match_torch_minus_its_second_bias(d_in, d_hidden):
    # torch keeps bias_ih AND bias_hh (always summed): one extra bias vector of D_h per gate and
    # direction. The course, like Elman's and Hochreiter & Schmidhuber's equations, has one.
    assert rnn.rnn_param_count(d_in, d_hidden) == _torch_count(torch.nn.RNN(d_in, d_hidden)) - d_hidden
    assert rnn.lstm_param_count(d_in, d_hidden) == _torch_count(torch.nn.LSTM(d_in, d_hidden)) - 4 * d_hidden
    bidirectional = torch.nn.LSTM(d_in, d_hidden, bidirectional=True)
    assert rnn.bilstm_param_count(d_in, d_hidden) == _torch_count(bidirectional) - 2 * 4 * d_hidden
    # and the course's count is exactly the size of its own parameters
    assert rnn.rnn_param_count(d_in, d_hidden) == sum(p.size for p in rnn.init_rnn_params(d_in, d_hidden))
    assert rnn.lstm_param_count(d_in, d_hidden) == sum(p.size for p in rnn.init_lstm_params(d_in, d_hidden))


@pytest.mark.parametrize("d_model, n_heads, d_ff", [(4, 2, 16), (4, 1, 4), (8, 4, 32), (12, 3, 7), (768, 12, 3072)])
def test_transformer_encoder_layer_param_count_matches_torch(d_model, n_heads, d_ff):
    layer = torch.nn.TransformerEncoderLayer(d_model, n_heads, dim_feedforward=d_ff)
    assert rnn.transformer_encoder_layer_param_count(d_model, n_heads, d_ff) == _torch_count(layer)


def test_running_example_counts():
    assert [rnn.rnn_param_count(4, 4), rnn.lstm_param_count(4, 4), rnn.bilstm_param_count(4, 4)] == [36, 144, 288]
    assert rnn.transformer_encoder_layer_param_count(4, 2, 16) == 244


@pytest.mark.parametrize("count", [rnn.rnn_param_count, rnn.lstm_param_count, rnn.bilstm_param_count])
@pytest.mark.parametrize("bad", [0, -3, 2.5, True, "4", None])
def test_param_counts_reject_bad_sizes(count, bad):
    with pytest.raises(ValueError, match="expected d_in to be a positive integer"):
        count(bad, 4)
    with pytest.raises(ValueError, match="expected d_hidden to be a positive integer"):
        count(4, bad)


def test_transformer_count_rejects_bad_sizes():
    with pytest.raises(ValueError, match="expected n_heads to divide d_model, got d_model=4 and n_heads=3"):
        rnn.transformer_encoder_layer_param_count(4, 3, 16)
    with pytest.raises(ValueError, match="expected d_ff to be a positive integer"):
        rnn.transformer_encoder_layer_param_count(4, 2, 0)
    with pytest.raises(ValueError, match="expected d_model to be a positive integer"):
        rnn.transformer_encoder_layer_param_count(4.0, 2, 16)


# --------------------------------------------------------------------------------------------
# Parameters


def test_init_params_shapes_bounds_and_seeding():
    params = rnn.init_rnn_params(3, 5, seed=7)
    assert isinstance(params, rnn.RNNParams)
    assert [p.shape for p in params] == [(3, 5), (5, 5), (5,)]
    assert all(p.dtype == np.float64 and np.all(np.abs(p) <= 1 / np.sqrt(5)) for p in params)
    again = rnn.init_rnn_params(3, 5, seed=7)
    assert all(np.array_equal(a, b) for a, b in zip(params, again))
    other = rnn.init_rnn_params(3, 5, seed=8)
    assert not np.array_equal(params.W_xh, other.W_xh)
    from_generator = rnn.init_rnn_params(3, 5, seed=np.random.default_rng(7))
    assert all(np.array_equal(a, b) for a, b in zip(params, from_generator))

    lstm = rnn.init_lstm_params(3, 5, seed=7)
    assert isinstance(lstm, rnn.LSTMParams)
    assert [p.shape for p in lstm] == [(3, 20), (5, 20), (20,)]
    shifted = rnn.init_lstm_params(3, 5, seed=7, forget_bias=1.0)
    difference = shifted.b_h - lstm.b_h
    np.testing.assert_allclose(difference[5:10], 1.0)  # the f block, second of i, f, g, o
    assert not np.any(np.delete(difference, np.s_[5:10]))


def test_init_params_reject_bad_arguments():
    with pytest.raises(ValueError, match="expected d_hidden to be a positive integer, got 0"):
        rnn.init_rnn_params(3, 0)
    with pytest.raises(ValueError, match="expected seed to be a non-negative integer or a numpy Generator, got -1"):
        rnn.init_lstm_params(3, 2, seed=-1)
    with pytest.raises(TypeError, match="numpy Generator"):
        rnn.init_rnn_params(3, 2, seed="zero")


# --------------------------------------------------------------------------------------------
# Laws (hypothesis)

dims = st.integers(min_value=1, max_value=5)
values = st.floats(min_value=-50, max_value=50, allow_nan=False, allow_infinity=False)


@st.composite
def rnn_problems(draw):
    seq_len, d_in, d_hidden = draw(st.integers(1, 8)), draw(dims), draw(dims)
    inputs = draw(arrays(np.float64, (seq_len, d_in), elements=values))
    seed = draw(st.integers(0, 2**16))
    return inputs, d_in, d_hidden, seed


@settings(max_examples=40, deadline=None)
@given(rnn_problems())
def test_rnn_hidden_states_are_in_minus_one_one(problem):
    inputs, d_in, d_hidden, seed = problem
    params = rnn.init_rnn_params(d_in, d_hidden, seed)
    states = rnn.rnn_forward(inputs, params)
    assert states.shape == (len(inputs), d_hidden)
    assert np.all(np.abs(states) <= 1.0)  # tanh: in (-1, 1), reaching ±1 only by float64 rounding


@settings(max_examples=40, deadline=None)
@given(rnn_problems())
def test_rnn_forward_is_rnn_step_in_a_loop_and_causal(problem):
    inputs, d_in, d_hidden, seed = problem
    params = rnn.init_rnn_params(d_in, d_hidden, seed)
    states = rnn.rnn_forward(inputs, params)
    h = np.zeros(d_hidden)
    for t, x_t in enumerate(inputs):
        h = rnn.rnn_step(x_t, h, *params)
        np.testing.assert_array_equal(states[t], h)
    # Causality: changing the last token changes no earlier state.
    edited = inputs.copy()
    edited[-1] += 1.0
    np.testing.assert_array_equal(rnn.rnn_forward(edited, params)[:-1], states[:-1])


@settings(max_examples=40, deadline=None)
@given(rnn_problems())
def test_lstm_states_are_bounded(problem):
    inputs, d_in, d_hidden, seed = problem
    hidden_states, cell_states = rnn.lstm_forward(inputs, rnn.init_lstm_params(d_in, d_hidden, seed))
    assert np.all(np.abs(hidden_states) <= 1.0)  # h_t = o * tanh(c_t)
    steps = np.arange(1, len(inputs) + 1)[:, None]
    assert np.all(np.abs(cell_states) <= steps)  # |c_t| <= |c_{t-1}| + 1 since f, i in (0, 1), |g| < 1


@settings(max_examples=40, deadline=None)
@given(rnn_problems())
def test_bilstm_halves_are_lstms_and_reversal_swaps_them(problem):
    inputs, d_in, d_hidden, seed = problem
    forward_params = rnn.init_lstm_params(d_in, d_hidden, seed)
    backward_params = rnn.init_lstm_params(d_in, d_hidden, seed + 1)
    states = rnn.bilstm_forward(inputs, forward_params, backward_params)
    np.testing.assert_array_equal(states[:, :d_hidden], rnn.lstm_forward(inputs, forward_params)[0])
    np.testing.assert_array_equal(states[:, d_hidden:], rnn.lstm_forward(inputs[::-1], backward_params)[0][::-1])
    # Reading the reversed sentence with the two LSTMs swapped gives the same states, reversed and swapped.
    swapped = rnn.bilstm_forward(inputs[::-1], backward_params, forward_params)[::-1]
    np.testing.assert_array_equal(swapped, np.concatenate([states[:, d_hidden:], states[:, :d_hidden]], axis=1))


# --------------------------------------------------------------------------------------------
# Validation: messages a learner can act on


def _rnn_args(d_in=3, d_hidden=4):
    rng = np.random.default_rng(0)
    return [rng.standard_normal(d_in), rng.standard_normal(d_hidden), rng.standard_normal((d_in, d_hidden)),
            rng.standard_normal((d_hidden, d_hidden)), rng.standard_normal(d_hidden)]


@pytest.mark.parametrize(
    "position, bad, message",
    [
        (3, np.zeros((4, 3)), r"expected W_hh of shape \(D_h, D_h\)=\(4, 4\), got \(4, 3\)"),
        (2, np.zeros((4, 3)), r"expected W_xh of shape \(D_in, D_h\)=\(3, 4\), got \(4, 3\)"),
        (4, np.zeros(3), r"expected b_h of shape \(D_h,\)=\(4,\), got \(3,\)"),
        (0, np.zeros((1, 3)), r"expected x_t of shape \(D_in,\), a 1-D array, got shape \(1, 3\)"),
        (3, np.zeros(4), r"expected W_hh of shape \(D_h, D_h\)=\(4, 4\), a 2-D array, got shape \(4,\)"),
    ],
)
def test_rnn_step_rejects_wrong_shapes(position, bad, message):
    args = _rnn_args()
    args[position] = bad
    with pytest.raises(ValueError, match=message):
        rnn.rnn_step(*args)


def test_rnn_step_rejects_non_numeric_input():
    args = _rnn_args()
    args[0] = "I love NLP"
    with pytest.raises(TypeError, match="expected x_t to be a numeric array, got str"):
        rnn.rnn_step(*args)


def test_rnn_step_accepts_lists_and_float32():
    args = _rnn_args()
    expected = rnn.rnn_step(*args)
    assert rnn.rnn_step(*(a.tolist() for a in args)).dtype == np.float64
    np.testing.assert_allclose(rnn.rnn_step(*args), expected)
    np.testing.assert_allclose(rnn.rnn_step(*(a.astype(np.float32) for a in args)), expected, atol=1e-5)


def test_lstm_functions_reject_wrong_shapes():
    rng = np.random.default_rng(0)
    x_t, h, c = rng.standard_normal(3), np.zeros(4), np.zeros(4)
    W_xh, W_hh, b_h = rng.standard_normal((3, 16)), rng.standard_normal((4, 16)), rng.standard_normal(16)
    with pytest.raises(ValueError, match=r"expected W_hh of shape \(D_h, 4\*D_h\)=\(4, 16\), got \(4, 12\)"):
        rnn.lstm_step(x_t, h, c, W_xh, W_hh[:, :12], b_h)
    with pytest.raises(ValueError, match=r"expected c_prev of shape \(D_h,\)=\(4,\), got \(5,\)"):
        rnn.lstm_step(x_t, h, np.zeros(5), W_xh, W_hh, b_h)
    message = r"expected params.W_xh of shape \(D_in, 4\*D_h\), got \(3, 10\): 10 is not a multiple of 4"
    with pytest.raises(ValueError, match=message):
        rnn.to_torch_lstm(rnn.LSTMParams(W_xh[:, :10], W_hh[:, :10], b_h[:10]))
    with pytest.raises(ValueError, match=r"expected b_h of shape \(4\*D_h,\)=\(16,\), got \(4,\)"):
        rnn.lstm_gates(x_t, h, W_xh, W_hh, b_h[:4])


def test_forward_functions_reject_wrong_inputs():
    params = rnn.init_rnn_params(4, 3)
    with pytest.raises(ValueError, match=r"expected inputs of shape \(T, D_in\), a 2-D array, got shape \(4,\)"):
        rnn.rnn_forward(np.zeros(4), params)
    with pytest.raises(ValueError, match=r"expected params.W_xh of shape \(D_in, D_h\)=\(5, D_h\), got \(4, 3\)"):
        rnn.rnn_forward(np.zeros((2, 5)), params)
    with pytest.raises(ValueError, match=r"expected h_0 of shape \(D_h,\)=\(3,\), got \(4,\)"):
        rnn.rnn_forward(np.zeros((2, 4)), params, h_0=np.zeros(4))
    with pytest.raises(TypeError, match=r"expected params to be an RNNParams \(see init_rnn_params\), got tuple"):
        rnn.rnn_forward(np.zeros((2, 4)), tuple(params))
    with pytest.raises(TypeError, match=r"expected params to be an LSTMParams \(see init_lstm_params\), got RNNParams"):
        rnn.lstm_forward(np.zeros((2, 4)), params)
    lstm = rnn.init_lstm_params(4, 3)
    with pytest.raises(ValueError, match=r"expected c_0 of shape \(D_h,\)=\(3,\)"):
        rnn.lstm_forward(np.zeros((2, 4)), lstm, c_0=np.zeros(2))
    message = r"expected backward_params.W_xh of shape \(D_in, 4\*D_h\)=\(4, 12\), got \(4, 8\)"
    with pytest.raises(ValueError, match=message):
        rnn.bilstm_forward(np.zeros((2, 4)), lstm, rnn.init_lstm_params(4, 2))


# --------------------------------------------------------------------------------------------
# Vanishing gradients


def _finite_difference_norms(forward, inputs: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """Norms of d h_{T-1} / d x_t by central differences, indexed by distance k = T-1-t."""
    seq_len, d_in = inputs.shape
    jacobian = np.zeros((seq_len, d_in, forward(inputs)[-1].size))
    for t in range(seq_len):
        for j in range(d_in):
            step = np.zeros_like(inputs)
            step[t, j] = eps
            jacobian[t, j] = (forward(inputs + step)[-1] - forward(inputs - step)[-1]) / (2 * eps)
    return np.sqrt((jacobian**2).sum(axis=(1, 2)))[::-1]


@pytest.mark.parametrize("cell", ["rnn", "lstm"])
def test_gradient_norms_match_finite_differences_of_the_numpy_model(cell):
    seq_len, d_in, d_hidden, seed = 6, 3, 4, 11
    norms = rnn.gradient_norms_by_distance(cell, seq_len, d_in, d_hidden, seed=seed, forget_bias=0.5)
    assert norms.shape == (seq_len,) and norms.dtype == np.float64
    # The documented recipe: one generator, the weights first, then the inputs.
    rng = np.random.default_rng(seed)
    if cell == "rnn":
        params = rnn.init_rnn_params(d_in, d_hidden, rng)
        forward = lambda x: rnn.rnn_forward(x, params)  # noqa: E731
    else:
        params = rnn.init_lstm_params(d_in, d_hidden, rng, forget_bias=0.5)
        forward = lambda x: rnn.lstm_forward(x, params)[0]  # noqa: E731
    inputs = rng.standard_normal((seq_len, d_in))
    np.testing.assert_allclose(norms, _finite_difference_norms(forward, inputs), rtol=1e-6, atol=1e-9)


def test_gradients_vanish_faster_in_an_rnn_than_in_an_lstm():
    rnn_norms = rnn.gradient_norms_by_distance("rnn", 60, 4, 4, seed=0)
    lstm_norms = rnn.gradient_norms_by_distance("lstm", 60, 4, 4, seed=0)
    open_gates = rnn.gradient_norms_by_distance("lstm", 60, 4, 4, seed=0, forget_bias=1.0)
    assert np.all(rnn_norms >= 0)
    assert rnn_norms[50] < 1e-6 * rnn_norms[0]  # exponential decay
    assert rnn_norms[30] < lstm_norms[30] < open_gates[30]
    np.testing.assert_array_equal(rnn_norms, rnn.gradient_norms_by_distance("rnn", 60, 4, 4, seed=0))


def test_gradient_norms_reject_bad_arguments():
    with pytest.raises(ValueError, match="expected cell to be 'rnn' or 'lstm', got 'gru'"):
        rnn.gradient_norms_by_distance("gru", 10, 4, 4)
    with pytest.raises(ValueError, match="expected seq_len to be a positive integer"):
        rnn.gradient_norms_by_distance("rnn", 0, 4, 4)


# --------------------------------------------------------------------------------------------
# Timing


def test_time_rnn_vs_attention_is_fast_and_well_formed():
    lengths = [2**k for k in range(3, 11)]  # the lesson's lengths
    start = time.perf_counter()
    timings = rnn.time_rnn_vs_attention(lengths, d_model=4, repeats=7)
    assert time.perf_counter() - start < 3.0
    assert isinstance(timings, rnn.Timings)
    np.testing.assert_array_equal(timings.lengths, lengths)
    assert timings.rnn_seconds.shape == timings.attention_seconds.shape == (len(lengths),)
    assert np.all(timings.rnn_seconds > 0) and np.all(timings.attention_seconds > 0)
    assert timings.rnn_seconds[-1] > 10 * timings.rnn_seconds[0]  # 128 times more sequential steps


def test_time_rnn_vs_attention_rejects_bad_arguments():
    with pytest.raises(ValueError, match="expected at least one sequence length"):
        rnn.time_rnn_vs_attention([])
    with pytest.raises(ValueError, match="expected each length to be a positive integer, got 0"):
        rnn.time_rnn_vs_attention([8, 0])
    with pytest.raises(ValueError, match="expected repeats to be a positive integer"):
        rnn.time_rnn_vs_attention([8], repeats=0)
