"""Multi-query and grouped-query attention: fewer key/value heads than query heads (lesson 09).

Multi-head attention (lesson 04) gives each of its ``H`` query heads its own keys and values.
Multi-query attention (Shazeer, 2019) keeps one key/value head for all of them; grouped-query
attention (Ainslie et al., 2023) keeps ``H_kv`` of them, each shared by a group of ``H / H_kv``
query heads. The keys and values a decoder must keep for every past token (the KV cache) shrink by
the factor ``H / H_kv``; the queries are untouched.

:func:`repeat_kv` lines the shared heads up with the query heads, exactly as Hugging Face's
``repeat_kv`` (tested): key head ``g`` serves query heads ``g * n_rep ... (g + 1) * n_rep - 1``.
:func:`kv_cache_bytes` counts the memory of the cache, and :func:`kv_cache_bytes_of` reads the
sizes from a ``transformers`` configuration.

Axis names: ``B`` batch, ``H`` query heads, ``H_kv`` key/value heads, ``T`` tokens, ``d`` head width.
"""

from __future__ import annotations

import math
from typing import Any

import torch

from .validation import non_negative_int, positive_int

__all__ = ["kv_cache_bytes", "kv_cache_bytes_of", "kv_heads_of", "repeat_kv"]


def repeat_kv(x: torch.Tensor, n_rep: int) -> torch.Tensor:
    """Each key/value head ``n_rep`` times in a row: ``(B, H_kv, T, d)`` -> ``(B, H_kv * n_rep, T, d)``.

    Head ``g`` of ``x`` becomes heads ``g * n_rep`` to ``g * n_rep + n_rep - 1`` of the result (a
    ``repeat_interleave`` along the heads, not a ``repeat``, which would interleave the groups).
    ``n_rep = 1`` returns ``x`` itself.
    """
    n_rep = positive_int("n_rep", n_rep)
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"expected x to be a torch tensor of shape (B, H_kv, T, d), got {type(x).__name__}")
    if x.ndim != 4:
        raise ValueError(f"expected x of shape (B, H_kv, T, d), got {tuple(x.shape)}")
    if n_rep == 1:
        return x
    batch, kv_heads, length, head_dim = x.shape
    expanded = x[:, :, None, :, :].expand(batch, kv_heads, n_rep, length, head_dim)  # (B, H_kv, n_rep, T, d)
    return expanded.reshape(batch, kv_heads * n_rep, length, head_dim)


def kv_cache_bytes(*, n_layers: int, kv_heads: int, head_dim: int, seq_len: int, bytes_per_value: int = 2,
                   batch: int = 1) -> int:
    """The memory of a KV cache: ``2 * layers * kv_heads * head_dim * T * bytes * B``.

    One key and one value (the 2) of ``head_dim`` numbers per layer, per key/value head, per token,
    per sequence; ``bytes_per_value`` 2 for float16/bfloat16, 4 for float32.
    """
    sizes = [positive_int(name, value) for name, value in
             (("n_layers", n_layers), ("kv_heads", kv_heads), ("head_dim", head_dim),
              ("bytes_per_value", bytes_per_value), ("batch", batch))]
    return 2 * non_negative_int("seq_len", seq_len) * math.prod(sizes)


def kv_heads_of(config: Any) -> tuple[int, int, int, int]:
    """``(n_layers, n_heads, kv_heads, head_dim)`` of a ``transformers`` decoder configuration.

    Reads ``num_hidden_layers``, ``num_attention_heads``, ``num_key_value_heads`` (absent: as many as
    the query heads, multi-head attention, as GPT-2) and ``head_dim`` (absent or None:
    ``hidden_size // num_attention_heads``).
    """
    try:
        n_layers, n_heads, hidden = config.num_hidden_layers, config.num_attention_heads, config.hidden_size
    except AttributeError as error:
        raise TypeError(
            f"expected a transformers configuration with num_hidden_layers, num_attention_heads and hidden_size, "
            f"got {type(config).__name__} ({error})"
        ) from None
    kv_heads = getattr(config, "num_key_value_heads", None) or n_heads
    head_dim = getattr(config, "head_dim", None) or hidden // n_heads
    return int(n_layers), int(n_heads), int(kv_heads), int(head_dim)


def kv_cache_bytes_of(config: Any, seq_len: int, *, bytes_per_value: int = 2, batch: int = 1) -> int:
    """:func:`kv_cache_bytes` with the sizes of a ``transformers`` configuration (:func:`kv_heads_of`)."""
    n_layers, _, kv_heads, head_dim = kv_heads_of(config)
    return kv_cache_bytes(n_layers=n_layers, kv_heads=kv_heads, head_dim=head_dim, seq_len=seq_len,
                          bytes_per_value=bytes_per_value, batch=batch)
