"""Hugging Face's own mask and attention functions, reached the same way on transformers 4.57 to 5.x.

Lesson 05 checks the course's masks against the functions Hugging Face's models use. Those
functions moved and changed between releases: ``masking_utils.sdpa_mask`` takes
``cache_position`` up to transformers 5.3 and ``q_length`` from 5.4; ``bidirectional_mask_function``
appeared in 5.0; DistilBERT's ``eager_attention_forward`` in 5.0 (before, the attention lived inside
its module, and the same function was BERT's and Llama's). This module calls whichever the
installed transformers has, unchanged, so a lesson compares with Hugging Face's code on every
stack the course supports (``make compat``).
"""

from __future__ import annotations

import inspect

import torch

MASK_KINDS = ("causal", "bidirectional")


def _bidirectional(batch_idx, head_idx, q_idx, kv_idx):
    """Every query may see every key (transformers 5's ``bidirectional_mask_function``)."""
    return q_idx >= 0


def mask_function(kind: str):
    """Hugging Face's rule for a mask of ``kind`` (``"causal"`` or ``"bidirectional"``)."""
    from transformers import masking_utils

    if kind not in MASK_KINDS:
        raise ValueError(f"expected kind to be one of {MASK_KINDS}, got {kind!r}")
    if kind == "causal":
        return masking_utils.causal_mask_function
    return getattr(masking_utils, "bidirectional_mask_function", _bidirectional)


def _length_arguments(function, length: int) -> dict:
    """``q_length=T`` (transformers >= 5.4) or ``cache_position=arange(T)`` (older releases)."""
    if "q_length" in inspect.signature(function).parameters:
        return {"q_length": length}
    return {"cache_position": torch.arange(length)}


def _check_attention_mask(attention_mask) -> torch.Tensor:
    attention_mask = torch.as_tensor(attention_mask)
    if attention_mask.ndim != 2:
        raise ValueError(f"expected attention_mask of shape (B, T) with 1 = real token, got {tuple(attention_mask.shape)}")
    return attention_mask.bool()


def boolean_mask(kind: str, attention_mask) -> torch.Tensor:
    """Hugging Face's boolean mask for a padded batch, True = may attend.

    ``attention_mask`` (B, T), 1 for real tokens -> (B, 1, T, T), from ``masking_utils.sdpa_mask``.
    """
    from transformers import masking_utils

    real = _check_attention_mask(attention_mask)
    batch, length = real.shape
    return masking_utils.sdpa_mask(
        batch_size=batch, kv_length=length, attention_mask=real, mask_function=mask_function(kind),
        allow_is_causal_skip=False, **_length_arguments(masking_utils.sdpa_mask, length),
    )


def additive_mask(kind: str, attention_mask, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """Hugging Face's additive mask for eager attention: 0 allowed, ``finfo(dtype).min`` blocked.

    ``attention_mask`` (B, T) -> (B, 1, T, T), from ``masking_utils.eager_mask``.
    """
    from transformers import masking_utils

    real = _check_attention_mask(attention_mask)
    batch, length = real.shape
    return masking_utils.eager_mask(
        batch_size=batch, kv_length=length, attention_mask=real, mask_function=mask_function(kind),
        dtype=dtype, **_length_arguments(masking_utils.eager_mask, length),
    )


def eager_attention(queries: torch.Tensor, keys: torch.Tensor, values: torch.Tensor,
                    additive: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor]:
    """Hugging Face's eager attention: softmax(Q K^T / sqrt(d_k) + mask) V, with its weights.

    ``queries``, ``keys``, ``values`` (B, H, T, d_k); ``additive`` (B, 1, T, T) or None.
    Returns the output (B, T, H, d_k), as Hugging Face returns it, and the weights (B, H, T, T).
    """
    module = torch.nn.Module().eval()  # no dropout
    module.num_key_value_groups = 1  # Llama's version repeats keys for grouped queries
    return _eager_attention_forward()(module, queries, keys, values, additive,
                                      scaling=queries.shape[-1] ** -0.5, dropout=0.0)


def _eager_attention_forward():
    """DistilBERT's ``eager_attention_forward`` (transformers 5), else BERT's, else Llama's."""
    import importlib

    for name in ("distilbert", "bert", "llama"):
        module = importlib.import_module(f"transformers.models.{name}.modeling_{name}")
        if hasattr(module, "eager_attention_forward"):
            return module.eager_attention_forward
    raise ImportError("this transformers has no eager_attention_forward in DistilBERT, BERT or Llama")


def eager_attention_source() -> str:
    """Which transformers module the eager attention of :func:`eager_attention` comes from."""
    return _eager_attention_forward().__module__


# --------------------------------------------------------------------------------------------
# Lesson 09: rotary position embeddings and grouped-query attention, from Llama's code

ROPE_MODELS = ("llama", "mistral", "qwen2")  # the first that has the function is used


def _llama_like(name: str):
    """The function ``name`` of the first of :data:`ROPE_MODELS` whose modelling module has it."""
    import importlib

    for model in ROPE_MODELS:
        try:
            module = importlib.import_module(f"transformers.models.{model}.modeling_{model}")
        except ImportError:  # pragma: no cover - every supported transformers has Llama
            continue
        if hasattr(module, name):
            return getattr(module, name)
    raise ImportError(f"this transformers has no {name} in {', '.join(ROPE_MODELS)}")


def apply_rotary_pos_emb(queries: torch.Tensor, keys: torch.Tensor, cos: torch.Tensor,
                         sin: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Hugging Face's ``apply_rotary_pos_emb`` (Llama's): ``queries (B, H, T, d)``, ``keys (B, H_kv, T, d)``,
    ``cos`` and ``sin (B, T, d)`` -> the rotated queries and keys."""
    return _llama_like("apply_rotary_pos_emb")(queries, keys, cos, sin)


def rotary_cos_sin(positions, head_dim: int, base: float = 10000.0,
                   dtype: torch.dtype = torch.float32) -> tuple[torch.Tensor, torch.Tensor]:
    """The cosines and sines of Llama's ``LlamaRotaryEmbedding``: ``positions (T,)`` -> two ``(1, T, d)``.

    Built from a ``LlamaConfig`` with one head of width ``head_dim`` and ``rope_theta = base``
    (``rope_parameters`` from transformers 5 on, ``rope_theta`` before).
    """
    from transformers import LlamaConfig
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

    config = LlamaConfig(hidden_size=head_dim, num_attention_heads=1, num_key_value_heads=1, head_dim=head_dim,
                         intermediate_size=4 * head_dim, num_hidden_layers=1, vocab_size=8)
    if isinstance(getattr(config, "rope_parameters", None), dict):
        config.rope_parameters = {**config.rope_parameters, "rope_type": "default", "rope_theta": float(base)}
    else:  # transformers 4.x
        config.rope_theta = float(base)
    rotary = LlamaRotaryEmbedding(config)
    position_ids = torch.as_tensor(positions, dtype=torch.long)[None, :]  # (1, T)
    dummy = torch.zeros(1, 1, dtype=dtype)  # only its dtype and device are read
    return rotary(dummy, position_ids)


def repeat_kv(hidden_states: torch.Tensor, n_rep: int) -> torch.Tensor:
    """Hugging Face's ``repeat_kv`` (Llama's): ``(B, H_kv, T, d)`` -> ``(B, H_kv * n_rep, T, d)``."""
    return _llama_like("repeat_kv")(hidden_states, n_rep)


def rope_source() -> str:
    """Which transformers module :func:`apply_rotary_pos_emb` and :func:`repeat_kv` come from."""
    return _llama_like("apply_rotary_pos_emb").__module__
