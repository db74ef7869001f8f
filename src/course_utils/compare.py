"""RNN, LSTM, BiLSTM and a DistilBERT block side by side, measured on the same inputs (lessons 01, 07).

Each model is a torch module at one width ``D``, mapping a batch ``(B, T, D)`` to its outputs
``(B, T, D_out)``: ``torch.nn.RNN`` and ``torch.nn.LSTM`` (``D_out = D``), a bidirectional
``torch.nn.LSTM`` with ``D`` units each way (``D_out = 2D``, as :func:`course_utils.rnn.bilstm_param_count`
counts it) and the course's :class:`course_utils.encoder.TransformerBlock` (``D_out = D``, ``4D``
feed-forward units, DistilBERT's block). The measurements are the columns of lesson 01's table:
parameters, the context each output sees (read from the Jacobian), the gradient that reaches a
token ``k`` steps back, and the time of one forward pass.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import numpy as np

from .validation import positive_int

if TYPE_CHECKING:  # pragma: no cover
    import torch

MODEL_NAMES = ("RNN", "LSTM", "BiLSTM", "DistilBERT block")

# What a model does per layer, and how it knows where a token stands: from its definition.
SEQUENTIAL_STEPS = {"RNN": "T", "LSTM": "T", "BiLSTM": "T each way", "DistilBERT block": "1"}
HOW_POSITION_IS_KNOWN = {
    "RNN": "reading order",
    "LSTM": "reading order",
    "BiLSTM": "reading order, both ways",
    "DistilBERT block": "added vectors (lesson 03)",
}


class _Outputs:
    """Wraps a module so that calling it returns only its outputs ``(B, T, D_out)``."""

    def __init__(self, module: "torch.nn.Module"):
        self.module = module

    def __call__(self, x: "torch.Tensor") -> "torch.Tensor":
        return self.module(x)[0]  # RNN/LSTM: (output, state); TransformerBlock: (hidden, weights)

    def parameters(self):
        return self.module.parameters()


def build(name: str, d_model: int, n_heads: int = 2, seed: int = 0, dtype=None) -> _Outputs:
    """The model ``name`` (one of :data:`MODEL_NAMES`) at width ``d_model``, seeded, in eval mode.

    Returns a callable ``(B, T, D) -> (B, T, D_out)`` with ``.parameters()``; float64 unless
    ``dtype`` says otherwise.
    """
    import torch

    from .encoder import EncoderConfig, TransformerBlock

    if name not in MODEL_NAMES:
        raise ValueError(f"expected a model name among {MODEL_NAMES}, got {name!r}")
    positive_int("d_model", d_model)
    dtype = torch.float64 if dtype is None else dtype
    torch.manual_seed(seed)
    if name == "RNN":
        module = torch.nn.RNN(d_model, d_model, batch_first=True)
    elif name in ("LSTM", "BiLSTM"):
        module = torch.nn.LSTM(d_model, d_model, batch_first=True, bidirectional=name == "BiLSTM")
    else:
        if d_model % n_heads:
            raise ValueError(f"expected d_model divisible by n_heads={n_heads}, got d_model={d_model}")
        config = EncoderConfig(
            vocab_size=1, max_position_embeddings=1, dim=d_model, n_heads=n_heads, n_layers=1,
            hidden_dim=4 * d_model,
        )  # fmt: skip
        module = TransformerBlock(config)
    return _Outputs(module.to(dtype).eval())


def parameter_count(model: _Outputs) -> int:
    """The number of trainable numbers of a model from :func:`build`."""
    return sum(p.numel() for p in model.parameters())


def _inputs(seq_len: int, d_model: int, seed: int) -> "torch.Tensor":
    import torch

    rng = np.random.default_rng(seed)
    return torch.from_numpy(rng.standard_normal((1, seq_len, d_model)))  # (B=1, T, D), float64


def _jacobian_rows(model: _Outputs, x: "torch.Tensor", positions: "torch.Tensor") -> "torch.Tensor":
    """``d out[0, t, j] / d x[0]`` for every ``t`` of ``positions (P,)`` and every output unit ``j``:
    ``(P, D_out, T, D)``. One backward pass: the input is copied ``P * D_out`` times along the
    batch axis, which the models never mix, and copy ``b`` picks its own output number."""
    import torch

    d_out = model(x).shape[-1]
    batch = x.repeat(len(positions) * d_out, 1, 1).requires_grad_(True)  # (P * D_out, T, D)
    rows = torch.arange(batch.shape[0])
    picked = model(batch)[rows, positions.repeat_interleave(d_out), rows % d_out]  # (P * D_out,)
    (gradient,) = torch.autograd.grad(picked.sum(), batch)
    return gradient.reshape(len(positions), d_out, *x.shape[1:])  # (P, D_out, T, D)


def context_pattern(model: _Outputs, seq_len: int, d_model: int, seed: int = 0) -> np.ndarray:
    """Which inputs each output depends on: ``(T, T)`` booleans, ``[t, s]`` True when output ``t``
    changes with input ``s`` (a non-zero block of the Jacobian ``d out_t / d x_s``)."""
    import torch

    x = _inputs(seq_len, d_model, seed)
    jacobian = _jacobian_rows(model, x, torch.arange(seq_len))  # (T, D_out, T, D)
    return (jacobian.abs().sum(dim=(1, 3)) > 0).numpy()  # (T, T)


def describe_context(pattern: np.ndarray) -> str:
    """``"tokens 0..t (left)"`` for a lower-triangular pattern, ``"all T tokens"`` for a full one."""
    pattern = np.asarray(pattern, dtype=bool)
    if pattern.ndim != 2 or pattern.shape[0] != pattern.shape[1]:
        raise ValueError(f"expected a square (T, T) pattern, got shape {pattern.shape}")
    if pattern.all():
        return "all T tokens"
    if np.array_equal(pattern, np.tril(np.ones_like(pattern))):
        return "tokens 0..t (left)"
    return "another pattern"


def gradient_at_distance(model: _Outputs, seq_len: int, d_model: int, distance: int, seed: int = 0) -> float:
    """The norm of ``d out_{T-1} / d x_{T-1-distance}``: how much the last output still feels the
    token ``distance`` steps back (Frobenius norm of a ``(D_out, D)`` Jacobian block)."""
    import torch

    if not 0 <= distance < seq_len:
        raise ValueError(f"expected 0 <= distance < seq_len={seq_len}, got distance={distance}")
    x = _inputs(seq_len, d_model, seed)
    jacobian = _jacobian_rows(model, x, torch.tensor([seq_len - 1]))[0]  # (D_out, T, D)
    return float(jacobian[:, seq_len - 1 - distance].norm())


def forward_seconds(model: _Outputs, seq_len: int, d_model: int, repeats: int = 5, seed: int = 0) -> float:
    """Median seconds of one forward pass over ``(1, T, D)`` inputs (the model's dtype), one CPU
    thread, no gradients."""
    import torch

    x = _inputs(seq_len, d_model, seed).to(next(iter(model.parameters())).dtype)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with torch.no_grad():
            model(x)  # warm-up
            times = []
            for _ in range(repeats):
                start = time.perf_counter()
                model(x)
                times.append(time.perf_counter() - start)
    finally:
        torch.set_num_threads(threads)
    return float(np.median(times))
