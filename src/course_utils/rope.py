"""Rotary position embeddings, RoPE (Su et al., 2021), as Llama and its successors use them (lesson 09).

Lesson 03 *added* a position vector to each token. RoPE instead *rotates* each query and each key
by an angle proportional to its position: the pairs of coordinates ``(i, i + d/2)`` of a head of
width ``d`` turn by ``position * theta_i``, with ``theta_i = base ** (-2 i / d)``, the frequencies
of lesson 03's sinusoids. A rotation by ``m theta`` of the query and by ``n theta`` of the key leaves
their dot product depending on ``n - m`` only: attention sees *relative* positions.

The layout is Hugging Face's (``rotate_half``): coordinate ``i`` is paired with ``i + d/2``, not
``2i`` with ``2i + 1`` (the interleaved layout of the paper, of GPT-J and of Meta's own Llama code,
``llama/model.py``, which turns each pair as one complex number with ``torch.view_as_complex``). Both
are rotations; they differ by an order of each head's coordinates, so weights trained for one work
with the other only once reordered: Hugging Face's ``convert_llama_weights_to_hf.py`` permutes the
rows of Meta's ``W_Q`` and ``W_K`` (its ``permute``) so that the half-split rotation gives Meta's.

Axis names: ``T`` tokens, ``d`` the width of one head (even), ``...`` any leading axes (batch, heads).
Every function takes numpy or torch and returns the kind it was given (numpy computed in float64).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from .attention import _as_given, _tensor, is_torch
from .validation import positive_int, positive_number

__all__ = ["BASE", "apply_rope", "inverse_frequencies", "rope_cos_sin", "rotate_half"]

BASE = 10000.0  # Llama's rope_theta, and lesson 03's base of the sinusoids


def inverse_frequencies(head_dim: int, base: float = BASE) -> torch.Tensor:
    """``theta_i = base ** (-2 i / d)`` for ``i = 0 .. d/2 - 1``: ``(d/2,)`` float64 angles per position."""
    head_dim = positive_int("head_dim", head_dim)
    if head_dim % 2:
        raise ValueError(f"expected an even head_dim (RoPE turns pairs of coordinates), got {head_dim}")
    base = positive_number("base", base)
    return base ** (-torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim)


def _positions(positions: Any) -> torch.Tensor:
    positions = torch.as_tensor(np.asarray(positions) if not is_torch(positions) else positions)
    if positions.ndim != 1:
        raise ValueError(f"expected positions of shape (T,), got {tuple(positions.shape)}")
    if positions.is_floating_point() or positions.dtype == torch.bool:
        raise TypeError(f"expected integer positions, got dtype {positions.dtype}")
    if bool((positions < 0).any()):
        raise ValueError(f"expected positions >= 0, got {positions.tolist()}")
    return positions.to(torch.float64)


def rope_cos_sin(positions: Any, head_dim: int, base: float = BASE) -> tuple[torch.Tensor, torch.Tensor]:
    """The cosines and sines of the angles, in Hugging Face's layout: ``positions (T,)`` -> two ``(T, d)``.

    Column ``i`` and column ``i + d/2`` hold the same angle ``position * theta_i`` (the frequencies are
    concatenated twice, as ``LlamaRotaryEmbedding`` does). float64.
    """
    angles = _positions(positions)[:, None] * inverse_frequencies(head_dim, base)[None, :]  # (T, d/2)
    angles = torch.cat([angles, angles], dim=-1)  # (T, d)
    return angles.cos(), angles.sin()


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    """``(x_1, x_2) -> (-x_2, x_1)`` on the two halves of the last axis: ``(..., d)`` -> ``(..., d)``."""
    half = x.shape[-1] // 2
    return torch.cat([-x[..., half:], x[..., :half]], dim=-1)


def apply_rope(x: Any, positions: Any, base: float = BASE) -> Any:
    """Rotate queries or keys by their positions: ``x (..., T, d)``, ``positions (T,)`` -> ``(..., T, d)``.

    ``x * cos + rotate_half(x) * sin``: the pair ``(x_i, x_{i+d/2})`` of the token at position ``p``
    turns by the angle ``p * theta_i``. Equal to Hugging Face's ``apply_rotary_pos_emb`` with the
    cosines and sines of ``LlamaRotaryEmbedding`` (tested). The result has ``x``'s dtype.
    """
    numpy_in = not is_torch(x)
    x = _tensor("x", x)
    if x.ndim < 2:
        raise ValueError(f"expected x of shape (..., T, d), got {tuple(x.shape)}")
    positions_t = _positions(positions)
    if positions_t.shape[0] != x.shape[-2]:
        raise ValueError(
            f"expected one position per token: x has T={x.shape[-2]} tokens (shape {tuple(x.shape)}), "
            f"got {positions_t.shape[0]} positions"
        )
    cos, sin = rope_cos_sin(positions_t.long(), x.shape[-1], base)  # (T, d) each, float64
    cos, sin = cos.to(device=x.device, dtype=x.dtype), sin.to(device=x.device, dtype=x.dtype)
    return _as_given(x * cos + rotate_half(x) * sin, numpy_in)
