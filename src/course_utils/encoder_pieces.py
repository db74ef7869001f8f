"""Lesson 06's pieces of an encoder block as plain functions: the references of its exercises.

:func:`layer_norm` in numpy, :func:`encoder_block` (a post-LayerNorm block from any four callables,
numpy functions or torch modules), :func:`pre_ln_block` (the same pieces, pre-LayerNorm) and
:func:`encoder_layer_param_count`. The model itself, built
from torch modules, is :mod:`course_utils.encoder`.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from .encoder import LAYER_NORM_EPS
from .validation import positive_int

__all__ = ["encoder_block", "encoder_layer_param_count", "layer_norm", "pre_ln_block"]


def layer_norm(x, gamma, beta, eps: float = LAYER_NORM_EPS) -> np.ndarray:
    """Layer normalisation of every vector along the last axis, in numpy: ``(..., D)`` -> ``(..., D)``.

    ``gamma * (x - mean) / sqrt(var + eps) + beta``, with the mean and the *biased* variance (divided
    by ``D``, not ``D - 1``) of each vector, as ``torch.nn.LayerNorm`` computes them; ``gamma`` and
    ``beta`` of shape ``(D,)``. Computed in float64.
    """
    x = np.asarray(x, dtype=np.float64)
    gamma, beta = np.asarray(gamma, dtype=np.float64), np.asarray(beta, dtype=np.float64)
    if x.ndim < 1 or gamma.shape != (x.shape[-1],) or beta.shape != (x.shape[-1],):
        raise ValueError(
            f"expected x of shape (..., D) and gamma, beta of shape (D,), got {x.shape}, {gamma.shape}, {beta.shape}"
        )
    mean = x.mean(axis=-1, keepdims=True)  # (..., 1)
    variance = ((x - mean) ** 2).mean(axis=-1, keepdims=True)  # (..., 1), biased
    return gamma * (x - mean) / np.sqrt(variance + eps) + beta


def encoder_block(x, attention: Callable, feed_forward: Callable, norm1: Callable, norm2: Callable):
    """One post-LayerNorm encoder block from its four pieces (BERT, DistilBERT): ``(..., T, D)`` -> same.

    ``h = norm1(x + attention(x))``, then ``norm2(h + feed_forward(h))``: each sub-layer's output is
    added to its input (the residual connection), then normalised. Works with numpy functions and
    torch modules alike (:class:`course_utils.encoder.TransformerBlock` is this function with its own modules).
    """
    h = norm1(x + attention(x))  # (..., T, D)
    return norm2(h + feed_forward(h))  # (..., T, D)


def pre_ln_block(x, attention: Callable, feed_forward: Callable, norm1: Callable, norm2: Callable):
    """One pre-LayerNorm block (GPT-2 and most later models) from the pieces of :func:`encoder_block`.

    ``h = x + attention(norm1(x))``, then ``h + feed_forward(norm2(h))``: each LayerNorm normalises
    the *input* of its sub-layer, and the residual path from ``x`` to the output is never normalised.
    ``(..., T, D)`` -> same; numpy functions and torch modules alike
    (:class:`course_utils.prenorm.PreLNTransformerBlock` is this function with its own modules).
    """
    h = x + attention(norm1(x))  # (..., T, D)
    return h + feed_forward(norm2(h))  # (..., T, D)


def encoder_layer_param_count(d_model: int, d_ff: int) -> int:
    """The parameters of one encoder block of width ``D = d_model`` and feed-forward width ``F = d_ff``.

    Attention: ``W_Q, W_K, W_V, W_O`` and their biases, ``4 D^2 + 4 D``; feed-forward: ``D x F``
    and ``F x D`` matrices and biases of ``F`` and ``D``, ``2 D F + F + D``; two LayerNorms with a
    ``gamma`` and a ``beta`` of ``D`` each, ``4 D``. Equals the count of :class:`course_utils.encoder.TransformerBlock`.
    """
    d, f = positive_int("d_model", d_model), positive_int("d_ff", d_ff)
    attention = 4 * d * d + 4 * d
    feed_forward = 2 * d * f + f + d
    layer_norms = 2 * 2 * d
    return attention + feed_forward + layer_norms
