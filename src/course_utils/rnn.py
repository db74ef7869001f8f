"""Recurrent networks in numpy: the vanilla (Elman) RNN, the LSTM and the BiLSTM (lesson 01).

Everything here is float64 numpy, one small pure function per idea, so that every number of the
lesson can be printed and checked against ``torch.nn.RNN`` / ``torch.nn.LSTM`` (see the tests).

Conventions
-----------
**Row vectors.** A token vector is a row, and weights multiply it from the right::

    h_t = tanh(x_t @ W_xh + h_prev @ W_hh + b_h)

so ``W_xh`` has shape ``(D_in, D_h)`` ("from input to hidden") and ``W_hh`` has shape
``(D_h, D_h)``. This is the orientation of the code you write in numpy (``x @ W``); torch stores
the transposes (``weight_ih_l0`` has shape ``(D_h, D_in)``). :func:`to_torch_rnn` and
:func:`to_torch_lstm` do the transposition.

**One bias per cell (per gate).** The equations of Elman (1990) and of the LSTM have one bias
vector; torch keeps two, ``bias_ih`` and ``bias_hh``, that are always added together. Their sum is
the one bias here, so torch counts ``D_h`` (RNN) or ``4 * D_h`` (LSTM) more parameters per layer
and direction than :func:`rnn_param_count` and :func:`lstm_param_count`.

**LSTM gates are stacked** along the last axis in torch's order ``[i | f | g | o]``: input gate,
forget gate, candidate cell values, output gate. ``W_xh`` is ``(D_in, 4 * D_h)``, ``W_hh`` is
``(D_h, 4 * D_h)``, ``b_h`` is ``(4 * D_h,)``.

Axis names used in the docstrings: ``T`` sequence length (time steps), ``D_in`` input size,
``D_h`` hidden size.
"""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING, NamedTuple, Sequence

import numpy as np

from .encoder_pieces import encoder_layer_param_count
from .validation import array_with_axes, positive_int

if TYPE_CHECKING:  # torch is imported lazily: the numpy functions do not need it
    import torch

__all__ = [
    "GATES",
    "LSTMParams",
    "RNNParams",
    "Timings",
    "bilstm_forward",
    "bilstm_param_count",
    "crossing_length",
    "gradient_norms_by_distance",
    "init_lstm_params",
    "init_rnn_params",
    "lstm_forward",
    "lstm_gates",
    "lstm_param_count",
    "lstm_step",
    "rnn_forward",
    "rnn_param_count",
    "rnn_step",
    "sigmoid",
    "time_rnn_vs_attention",
    "to_torch_lstm",
    "to_torch_rnn",
    "transformer_encoder_layer_param_count",
]

GATES = ("i", "f", "g", "o")  # the order of the stacked LSTM gates (torch's order)


class RNNParams(NamedTuple):
    """The weights of a vanilla RNN cell (row-vector convention).

    ``W_xh``: ``(D_in, D_h)``; ``W_hh``: ``(D_h, D_h)``; ``b_h``: ``(D_h,)``.
    """

    W_xh: np.ndarray
    W_hh: np.ndarray
    b_h: np.ndarray


class LSTMParams(NamedTuple):
    """The weights of an LSTM cell, the four gates stacked as ``[i | f | g | o]``.

    ``W_xh``: ``(D_in, 4*D_h)``; ``W_hh``: ``(D_h, 4*D_h)``; ``b_h``: ``(4*D_h,)``.
    """

    W_xh: np.ndarray
    W_hh: np.ndarray
    b_h: np.ndarray


class Timings(NamedTuple):
    """Median wall-clock seconds per sequence length: all arrays have shape ``(L,)``."""

    lengths: np.ndarray
    rnn_seconds: np.ndarray
    attention_seconds: np.ndarray


# --------------------------------------------------------------------------------------------
# Seeds


def _rng(seed: int | np.random.Generator) -> np.random.Generator:
    if isinstance(seed, np.random.Generator):
        return seed
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"expected seed to be a non-negative integer or a numpy Generator, got {seed!r}")
    if seed < 0:
        raise ValueError(f"expected seed to be a non-negative integer or a numpy Generator, got {seed!r}")
    return np.random.default_rng(int(seed))


# --------------------------------------------------------------------------------------------
# Parameters


def init_rnn_params(d_in: int, d_hidden: int, seed: int | np.random.Generator = 0) -> RNNParams:
    """Random weights of a vanilla RNN cell, drawn like torch's: uniform in ±1/sqrt(D_h).

    Returns :class:`RNNParams` with ``W_xh`` ``(D_in, D_h)``, ``W_hh`` ``(D_h, D_h)``,
    ``b_h`` ``(D_h,)``. ``seed`` is an integer or a ``numpy.random.Generator``, so the same seed
    always gives the same weights, whatever else a notebook has drawn.
    """
    d_in, d_hidden = positive_int("d_in", d_in), positive_int("d_hidden", d_hidden)
    rng, bound = _rng(seed), 1.0 / math.sqrt(d_hidden)
    return RNNParams(
        W_xh=rng.uniform(-bound, bound, (d_in, d_hidden)),
        W_hh=rng.uniform(-bound, bound, (d_hidden, d_hidden)),
        b_h=rng.uniform(-bound, bound, (d_hidden,)),
    )


def init_lstm_params(
    d_in: int, d_hidden: int, seed: int | np.random.Generator = 0, *, forget_bias: float = 0.0
) -> LSTMParams:
    """Random weights of an LSTM cell (uniform in ±1/sqrt(D_h), like torch), gates ``[i | f | g | o]``.

    Returns :class:`LSTMParams` with ``W_xh`` ``(D_in, 4*D_h)``, ``W_hh`` ``(D_h, 4*D_h)``,
    ``b_h`` ``(4*D_h,)``. ``forget_bias`` is added to the forget-gate block of ``b_h``: a positive
    value starts the cell "remembering" (forget gate near 1), a common initialisation.
    """
    d_in, d_hidden = positive_int("d_in", d_in), positive_int("d_hidden", d_hidden)
    rng, bound = _rng(seed), 1.0 / math.sqrt(d_hidden)
    W_xh = rng.uniform(-bound, bound, (d_in, 4 * d_hidden))
    W_hh = rng.uniform(-bound, bound, (d_hidden, 4 * d_hidden))
    b_h = rng.uniform(-bound, bound, (4 * d_hidden,))
    b_h[d_hidden : 2 * d_hidden] += float(forget_bias)  # the f block of [i | f | g | o]
    return LSTMParams(W_xh=W_xh, W_hh=W_hh, b_h=b_h)


def _params(name: str, params, kind: type, sizes: dict[str, int], gates: int):
    """The three weight arrays of ``params``, validated against (and recorded in) ``sizes``."""
    if not isinstance(params, kind):
        maker = "init_rnn_params" if kind is RNNParams else "init_lstm_params"
        raise TypeError(f"expected {name} to be an {kind.__name__} (see {maker}), got {type(params).__name__}")
    out_axis = "D_h" if gates == 1 else f"{gates}*D_h"
    W_xh = array_with_axes(f"{name}.W_xh", params.W_xh, ("D_in", out_axis), sizes)
    W_hh = array_with_axes(f"{name}.W_hh", params.W_hh, ("D_h", out_axis), sizes)
    b_h = array_with_axes(f"{name}.b_h", params.b_h, (out_axis,), sizes)
    return W_xh, W_hh, b_h


# --------------------------------------------------------------------------------------------
# The vanilla RNN


def _rnn_step(x_t, h_prev, W_xh, W_hh, b_h):
    return np.tanh(x_t @ W_xh + h_prev @ W_hh + b_h)  # (D_h,)


def rnn_step(x_t, h_prev, W_xh, W_hh, b_h) -> np.ndarray:
    """One step of a vanilla RNN: ``h_t = tanh(x_t @ W_xh + h_prev @ W_hh + b_h)``.

    Shapes: ``x_t`` ``(D_in,)``, ``h_prev`` ``(D_h,)``, ``W_xh`` ``(D_in, D_h)``,
    ``W_hh`` ``(D_h, D_h)``, ``b_h`` ``(D_h,)``. Returns ``h_t`` of shape ``(D_h,)``, every entry
    in ``(-1, 1)`` (in ``[-1, 1]`` once tanh saturates in float64).
    """
    sizes: dict[str, int] = {}
    x_t = array_with_axes("x_t", x_t, ("D_in",), sizes)
    h_prev = array_with_axes("h_prev", h_prev, ("D_h",), sizes)
    W_xh = array_with_axes("W_xh", W_xh, ("D_in", "D_h"), sizes)
    W_hh = array_with_axes("W_hh", W_hh, ("D_h", "D_h"), sizes)
    b_h = array_with_axes("b_h", b_h, ("D_h",), sizes)
    return _rnn_step(x_t, h_prev, W_xh, W_hh, b_h)


def rnn_forward(inputs, params: RNNParams, h_0=None) -> np.ndarray:
    """Run a vanilla RNN over a sequence, one step per token, left to right.

    ``inputs`` ``(T, D_in)``; ``params`` an :class:`RNNParams`; ``h_0`` ``(D_h,)``, zeros by
    default. Returns the hidden states ``(T, D_h)``: row ``t`` is ``h_t``, which has seen tokens
    ``0 .. t``. The loop is the point: step ``t`` needs ``h_{t-1}``, so the ``T`` steps run one
    after the other.
    """
    sizes: dict[str, int] = {}
    inputs = array_with_axes("inputs", inputs, ("T", "D_in"), sizes)
    W_xh, W_hh, b_h = _params("params", params, RNNParams, sizes, gates=1)
    h = np.zeros(sizes["D_h"]) if h_0 is None else array_with_axes("h_0", h_0, ("D_h",), sizes)
    hidden_states = np.empty((sizes["T"], sizes["D_h"]))  # (T, D_h)
    for t, x_t in enumerate(inputs):
        h = _rnn_step(x_t, h, W_xh, W_hh, b_h)
        hidden_states[t] = h
    return hidden_states


# --------------------------------------------------------------------------------------------
# The LSTM


def sigmoid(z) -> np.ndarray:
    """The logistic function ``1 / (1 + exp(-z))``, elementwise; any shape, values in ``(0, 1)``.

    Computed as ``(1 + tanh(z / 2)) / 2``, which never overflows.
    """
    return 0.5 * (1.0 + np.tanh(0.5 * np.asarray(z, dtype=np.float64)))


def _lstm_gates(x_t, h_prev, W_xh, W_hh, b_h):
    z = x_t @ W_xh + h_prev @ W_hh + b_h  # (4*D_h,)
    z_i, z_f, z_g, z_o = np.split(z, 4, axis=-1)  # 4 x (D_h,)
    return sigmoid(z_i), sigmoid(z_f), np.tanh(z_g), sigmoid(z_o)


def _lstm_step(x_t, h_prev, c_prev, W_xh, W_hh, b_h):
    i, f, g, o = _lstm_gates(x_t, h_prev, W_xh, W_hh, b_h)
    c_t = f * c_prev + i * g  # (D_h,)  keep part of the old cell, write part of the candidate
    h_t = o * np.tanh(c_t)  # (D_h,)  show part of the cell
    return h_t, c_t


def _lstm_inputs(x_t, h_prev, W_xh, W_hh, b_h, c_prev=None):
    sizes: dict[str, int] = {}
    x_t = array_with_axes("x_t", x_t, ("D_in",), sizes)
    h_prev = array_with_axes("h_prev", h_prev, ("D_h",), sizes)
    c_prev = None if c_prev is None else array_with_axes("c_prev", c_prev, ("D_h",), sizes)
    W_xh = array_with_axes("W_xh", W_xh, ("D_in", "4*D_h"), sizes)
    W_hh = array_with_axes("W_hh", W_hh, ("D_h", "4*D_h"), sizes)
    b_h = array_with_axes("b_h", b_h, ("4*D_h",), sizes)
    return x_t, h_prev, c_prev, W_xh, W_hh, b_h


def lstm_gates(x_t, h_prev, W_xh, W_hh, b_h) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The four LSTM gates ``(i, f, g, o)`` at one step, each of shape ``(D_h,)``.

    ``z = x_t @ W_xh + h_prev @ W_hh + b_h`` (shape ``(4*D_h,)``) is split into four blocks:
    ``i = sigmoid(z_i)`` (how much to write), ``f = sigmoid(z_f)`` (how much of the old cell to
    keep), ``g = tanh(z_g)`` (the candidate values), ``o = sigmoid(z_o)`` (how much to show).
    Shapes: ``x_t`` ``(D_in,)``, ``h_prev`` ``(D_h,)``, ``W_xh`` ``(D_in, 4*D_h)``,
    ``W_hh`` ``(D_h, 4*D_h)``, ``b_h`` ``(4*D_h,)``.
    """
    x_t, h_prev, _, W_xh, W_hh, b_h = _lstm_inputs(x_t, h_prev, W_xh, W_hh, b_h)
    return _lstm_gates(x_t, h_prev, W_xh, W_hh, b_h)


def lstm_step(x_t, h_prev, c_prev, W_xh, W_hh, b_h) -> tuple[np.ndarray, np.ndarray]:
    """One LSTM step: ``c_t = f * c_prev + i * g`` and ``h_t = o * tanh(c_t)``.

    The gates are those of :func:`lstm_gates`. Shapes: ``x_t`` ``(D_in,)``, ``h_prev`` and
    ``c_prev`` ``(D_h,)``, ``W_xh`` ``(D_in, 4*D_h)``, ``W_hh`` ``(D_h, 4*D_h)``,
    ``b_h`` ``(4*D_h,)``. Returns ``(h_t, c_t)``, both ``(D_h,)``.
    """
    x_t, h_prev, c_prev, W_xh, W_hh, b_h = _lstm_inputs(x_t, h_prev, W_xh, W_hh, b_h, c_prev=c_prev)
    return _lstm_step(x_t, h_prev, c_prev, W_xh, W_hh, b_h)


def lstm_forward(inputs, params: LSTMParams, h_0=None, c_0=None) -> tuple[np.ndarray, np.ndarray]:
    """Run an LSTM over a sequence, left to right.

    ``inputs`` ``(T, D_in)``; ``params`` an :class:`LSTMParams`; ``h_0`` and ``c_0`` ``(D_h,)``,
    zeros by default. Returns ``(hidden_states, cell_states)``, both ``(T, D_h)``.
    """
    sizes: dict[str, int] = {}
    inputs = array_with_axes("inputs", inputs, ("T", "D_in"), sizes)
    W_xh, W_hh, b_h = _params("params", params, LSTMParams, sizes, gates=4)
    h = np.zeros(sizes["D_h"]) if h_0 is None else array_with_axes("h_0", h_0, ("D_h",), sizes)
    c = np.zeros(sizes["D_h"]) if c_0 is None else array_with_axes("c_0", c_0, ("D_h",), sizes)
    hidden_states = np.empty((sizes["T"], sizes["D_h"]))  # (T, D_h)
    cell_states = np.empty((sizes["T"], sizes["D_h"]))  # (T, D_h)
    for t, x_t in enumerate(inputs):
        h, c = _lstm_step(x_t, h, c, W_xh, W_hh, b_h)
        hidden_states[t], cell_states[t] = h, c
    return hidden_states, cell_states


def bilstm_forward(inputs, forward_params: LSTMParams, backward_params: LSTMParams) -> np.ndarray:
    """A bidirectional LSTM: one LSTM reads left to right, another right to left.

    The backward LSTM runs over the reversed sequence; its states are reversed back, so that row
    ``t`` of both halves belongs to token ``t``. ``inputs`` ``(T, D_in)``; both params
    :class:`LSTMParams` of the same sizes. Returns ``(T, 2*D_h)``: ``[:, :D_h]`` is the forward
    state (has seen tokens ``0 .. t``), ``[:, D_h:]`` the backward state (tokens ``t .. T-1``).
    """
    sizes: dict[str, int] = {}
    inputs = array_with_axes("inputs", inputs, ("T", "D_in"), sizes)
    _params("forward_params", forward_params, LSTMParams, sizes, gates=4)
    _params("backward_params", backward_params, LSTMParams, sizes, gates=4)
    forward_states, _ = lstm_forward(inputs, forward_params)  # (T, D_h)
    backward_states, _ = lstm_forward(inputs[::-1], backward_params)  # (T, D_h), last token first
    return np.concatenate([forward_states, backward_states[::-1]], axis=-1)  # (T, 2*D_h)


# --------------------------------------------------------------------------------------------
# Parameter counts


def rnn_param_count(d_in: int, d_hidden: int) -> int:
    """Parameters of a vanilla RNN cell: ``D_in*D_h + D_h*D_h + D_h`` (W_xh, W_hh, one bias b_h).

    ``torch.nn.RNN`` has ``D_h`` more: it keeps two bias vectors (``bias_ih_l0`` and
    ``bias_hh_l0``) whose sum plays the role of ``b_h``.
    """
    d_in, d_hidden = positive_int("d_in", d_in), positive_int("d_hidden", d_hidden)
    return d_in * d_hidden + d_hidden * d_hidden + d_hidden


def lstm_param_count(d_in: int, d_hidden: int) -> int:
    """Parameters of an LSTM cell: 4 gates, each ``D_in*D_h + D_h*D_h + D_h``.

    ``torch.nn.LSTM`` has ``4*D_h`` more (two bias vectors per gate, see :func:`rnn_param_count`).
    """
    return 4 * rnn_param_count(d_in, d_hidden)


def bilstm_param_count(d_in: int, d_hidden: int) -> int:
    """Parameters of a bidirectional LSTM: two independent LSTMs, ``2 * lstm_param_count``.

    ``torch.nn.LSTM(..., bidirectional=True)`` has ``2*4*D_h`` more (two biases per gate).
    """
    return 2 * lstm_param_count(d_in, d_hidden)


def transformer_encoder_layer_param_count(d_model: int, n_heads: int, d_ff: int) -> int:
    """Parameters of one Transformer encoder layer (as ``torch.nn.TransformerEncoderLayer``), to set
    next to the recurrent cells: :func:`course_utils.encoder_pieces.encoder_layer_param_count`
    (lesson 06 derives it), once ``n_heads`` is known to divide ``d_model`` (each head gets
    ``d_model // n_heads`` dimensions; splitting into heads adds no parameters).
    """
    d_model, n_heads = positive_int("d_model", d_model), positive_int("n_heads", n_heads)
    if d_model % n_heads:
        raise ValueError(f"expected n_heads to divide d_model, got d_model={d_model} and n_heads={n_heads}")
    return encoder_layer_param_count(d_model, d_ff)


# --------------------------------------------------------------------------------------------
# Torch twins, vanishing gradients, timing


def to_torch_rnn(params: RNNParams) -> "torch.nn.RNN":
    """A float64 ``torch.nn.RNN`` (one layer, ``batch_first=True``) computing the same function.

    Torch stores transposed weights, ``weight_ih_l0 = W_xh.T`` ``(D_h, D_in)`` and
    ``weight_hh_l0 = W_hh.T`` ``(D_h, D_h)``; of its two biases, ``bias_ih_l0 = b_h`` and
    ``bias_hh_l0 = 0``.
    """
    import torch

    sizes: dict[str, int] = {}
    W_xh, W_hh, b_h = _params("params", params, RNNParams, sizes, gates=1)
    module = torch.nn.RNN(sizes["D_in"], sizes["D_h"], batch_first=True, dtype=torch.float64)
    _copy_into(module, "l0", W_xh, W_hh, b_h)
    return module


def to_torch_lstm(params: LSTMParams, backward_params: LSTMParams | None = None) -> "torch.nn.LSTM":
    """A float64 ``torch.nn.LSTM`` (one layer, ``batch_first=True``) computing the same function.

    With ``backward_params`` it is bidirectional, like :func:`bilstm_forward`. Torch's gate order is
    the same ``[i | f | g | o]``; weights are transposed and ``bias_hh = 0`` (see
    :func:`to_torch_rnn`).
    """
    import torch

    sizes: dict[str, int] = {}
    W_xh, W_hh, b_h = _params("params", params, LSTMParams, sizes, gates=4)
    bidirectional = backward_params is not None
    module = torch.nn.LSTM(
        sizes["D_in"], sizes["D_h"], batch_first=True, bidirectional=bidirectional, dtype=torch.float64
    )
    _copy_into(module, "l0", W_xh, W_hh, b_h)
    if bidirectional:
        backward_weights = _params("backward_params", backward_params, LSTMParams, sizes, gates=4)
        _copy_into(module, "l0_reverse", *backward_weights)
    return module


def _copy_into(module: "torch.nn.Module", suffix: str, W_xh, W_hh, b_h) -> None:
    import torch

    with torch.no_grad():
        getattr(module, f"weight_ih_{suffix}").copy_(torch.from_numpy(W_xh.T))
        getattr(module, f"weight_hh_{suffix}").copy_(torch.from_numpy(W_hh.T))
        getattr(module, f"bias_ih_{suffix}").copy_(torch.from_numpy(b_h))
        getattr(module, f"bias_hh_{suffix}").zero_()


def gradient_norms_by_distance(
    cell: str, seq_len: int, d_in: int, d_hidden: int, *, seed: int = 0, forget_bias: float = 0.0
) -> np.ndarray:
    """How much the last hidden state still depends on inputs ``k`` steps back, for each ``k``.

    With ``rng = np.random.default_rng(seed)``: the weights are ``init_rnn_params(d_in, d_hidden,
    rng)`` (``cell="rnn"``) or ``init_lstm_params(d_in, d_hidden, rng, forget_bias=forget_bias)``
    (``cell="lstm"``), then the inputs ``rng.standard_normal((T, D_in))``. The model runs as a
    float64 ``torch.nn.RNN`` / ``torch.nn.LSTM`` (:func:`to_torch_rnn`, :func:`to_torch_lstm`) and
    autograd gives the Jacobian of the last hidden state ``h_{T-1}`` ``(D_h,)`` with respect to all
    inputs ``(T, D_in)``. Returns ``(T,)``: entry ``k`` is the Frobenius norm of
    ``d h_{T-1} / d x_{T-1-k}`` ``(D_h, D_in)``, the gradient that reaches a token ``k`` steps back.
    """
    import torch

    if cell not in ("rnn", "lstm"):
        raise ValueError(f"expected cell to be 'rnn' or 'lstm', got {cell!r}")
    seq_len = positive_int("seq_len", seq_len)
    rng = _rng(seed)
    if cell == "rnn":
        module = to_torch_rnn(init_rnn_params(d_in, d_hidden, rng))
    else:
        module = to_torch_lstm(init_lstm_params(d_in, d_hidden, rng, forget_bias=forget_bias))
    inputs = torch.from_numpy(rng.standard_normal((seq_len, d_in))).unsqueeze(0)  # (B=1, T, D_in)

    def last_hidden_state(x: "torch.Tensor") -> "torch.Tensor":
        return module(x)[0][0, -1]  # (D_h,)

    jacobian = torch.autograd.functional.jacobian(last_hidden_state, inputs)  # (D_h, 1, T, D_in)
    norms = jacobian[:, 0].pow(2).sum(dim=(0, 2)).sqrt()  # (T,), indexed by position t
    return norms.flip(0).numpy()  # (T,), indexed by distance k = T-1-t


def time_rnn_vs_attention(
    lengths: Sequence[int], d_model: int = 4, repeats: int = 5, seed: int = 0
) -> Timings:
    """Measure a vanilla RNN over ``T`` steps against one batched self-attention step.

    For each length ``T`` in ``lengths``: seeded inputs ``(T, D)``; the RNN is :func:`rnn_forward`
    (``T`` sequential steps); attention is ``softmax(Q K^T / sqrt(D)) V`` with ``Q, K, V`` the
    inputs projected by seeded ``(D, D)`` matrices, a few matrix products over all ``T`` tokens at
    once. Each is timed ``repeats`` times with ``time.perf_counter``; the median is kept.
    Returns :class:`Timings` (all ``(L,)`` arrays, seconds).
    """
    d_model, repeats = positive_int("d_model", d_model), positive_int("repeats", repeats)
    lengths = [positive_int("each length", length) for length in lengths]
    if not lengths:
        raise ValueError("expected at least one sequence length, got none")
    rng = _rng(seed)
    params = init_rnn_params(d_model, d_model, rng)
    W_q, W_k, W_v = (rng.uniform(-1, 1, (d_model, d_model)) / math.sqrt(d_model) for _ in range(3))

    def attention(x: np.ndarray) -> np.ndarray:
        queries, keys, values = x @ W_q, x @ W_k, x @ W_v  # 3 x (T, D)
        scores = queries @ keys.T / math.sqrt(d_model)  # (T, T)
        weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
        weights /= weights.sum(axis=-1, keepdims=True)  # (T, T), rows sum to 1
        return weights @ values  # (T, D)

    def median_seconds(fn, *args) -> float:
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            fn(*args)
            times.append(time.perf_counter() - start)
        return float(np.median(times))

    rnn_seconds, attention_seconds = [], []
    for length in lengths:
        inputs = rng.standard_normal((length, d_model))  # (T, D)
        rnn_seconds.append(median_seconds(rnn_forward, inputs, params))
        attention_seconds.append(median_seconds(attention, inputs))
    return Timings(np.array(lengths), np.array(rnn_seconds), np.array(attention_seconds))


def crossing_length(timings: Timings) -> float | None:
    """The length ``T`` at which one attention step stops being faster than the RNN: the first
    measured length where attention's time exceeds the RNN's, interpolated on log-log scales with
    the length before it (where attention was faster). ``None`` when attention is faster at every
    measured length; the first length when it is slower from the start.
    """
    if not isinstance(timings, Timings):
        raise TypeError(f"expected the Timings of time_rnn_vs_attention, got {type(timings).__name__}")
    slower = np.flatnonzero(timings.attention_seconds > timings.rnn_seconds)  # (n,): where attention loses
    if slower.size == 0:
        return None
    k = int(slower[0])
    if k == 0:
        return float(timings.lengths[0])
    # log(attention / rnn) crosses 0 between lengths k - 1 and k: a straight line in log T
    gap = np.log(timings.attention_seconds[k - 1:k + 1] / timings.rnn_seconds[k - 1:k + 1])  # (2,): < 0, then > 0
    log_t = np.log(timings.lengths[k - 1:k + 1].astype(float))
    return float(np.exp(log_t[0] + (log_t[1] - log_t[0]) * gap[0] / (gap[0] - gap[1])))
