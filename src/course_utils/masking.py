"""Attention masks and masked-language-model masking, in numpy and in torch (lesson 05).

One mask convention across the course: **boolean, ``True`` = may attend** (the convention of
``torch.nn.functional.scaled_dot_product_attention`` and of Hugging Face's ``attention_mask``,
where 1 = real token). The masks broadcast against attention scores ``(B, H, T_q, T_k)``:

- :func:`causal_mask` ``(T, T)``: query ``i`` may attend to keys ``j <= i`` (a decoder, GPT);
- :func:`padding_mask` ``(B, 1, 1, T)``: every query may attend to the real tokens only (an
  encoder, BERT / DistilBERT); the two combine with ``&``.

:func:`mlm_mask` makes the inputs and labels of masked-language-model pretraining (BERT's 15% of
tokens, of which 80% become ``[MASK]``, 10% a random token, 10% stay), with the same random draws,
in the same order, as Hugging Face's ``DataCollatorForLanguageModeling`` (so, given the same
``torch.Generator`` state, the same result; see the tests).

numpy in gives numpy out, torch in gives torch out (on the same device). :func:`causal_mask` takes
a length, so it returns numpy unless given ``like=`` a tensor.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .attention import is_torch
from .validation import (
    boolean_array,
    index_in,
    positive_int,
    probability,
    same_shape,
    token_ids,
    with_axes,
    zeros_and_ones,
)

__all__ = ["IGNORE_INDEX", "causal_mask", "mlm_mask", "padding_mask"]

IGNORE_INDEX = -100  # the label of positions that are not predicted (torch's cross_entropy ignore_index)

Array = Any  # a numpy array or a torch tensor


def causal_mask(seq_len: int, *, like: Array | None = None) -> Array:
    """``(T, T)`` boolean, ``True`` where key position ``j <= `` query position ``i`` (lower triangle).

    Row ``i`` is what query ``i`` may see: itself and the tokens before it, never the future.
    A numpy array, or a torch tensor on ``like``'s device when ``like`` is a tensor.
    """
    seq_len = positive_int("seq_len", seq_len)
    if is_torch(like):
        import torch

        return torch.ones(seq_len, seq_len, dtype=torch.bool, device=like.device).tril()
    return np.tri(seq_len, dtype=bool)


def padding_mask(attention_mask: Array) -> Array:
    """Hugging Face's ``attention_mask (B, T)`` of 1 (real token) / 0 (padding) -> boolean
    ``(B, 1, 1, T)``, ``True`` = may attend.

    The two new axes let it broadcast against the scores ``(B, H, T_q, T_k)``: the same keys are
    blocked for every head and every query. Accepts integers, booleans or floats that are 0 or 1.
    """
    attention_mask = zeros_and_ones("attention_mask", attention_mask, "0 (padding) and 1 (real token)")
    with_axes("attention_mask", attention_mask, ("B", "T"))
    return (attention_mask != 0)[:, None, None, :]


def mlm_mask(
    input_ids: Array,
    maskable: Array,
    *,
    mask_token_id: int,
    vocab_size: int,
    generator: "np.random.Generator | Any",
    select_prob: float = 0.15,
    mask_prob: float = 0.8,
    random_prob: float = 0.1,
) -> tuple[Array, Array]:
    """Masked-language-model inputs and labels (BERT's 80/10/10 recipe).

    ``input_ids (...)`` integers; ``maskable`` boolean of the same shape, ``False`` where a token
    must never be chosen (special tokens, padding). Each maskable position is selected with
    probability ``select_prob``; a selected position becomes ``mask_token_id`` with probability
    ``mask_prob``, a random token id in ``[0, vocab_size)`` with probability ``random_prob``, and stays
    unchanged otherwise (so the model cannot learn that only ``[MASK]`` needs predicting).

    Returns ``(masked_input_ids, labels)``, both of ``input_ids``' shape: a new array of ids (the
    input is not modified), and labels holding the original id at selected positions and
    ``IGNORE_INDEX = -100`` elsewhere (int64). ``generator`` is a ``np.random.Generator`` for numpy
    input, a ``torch.Generator`` (on the ids' device) for torch input: the same generator state gives
    the same masks. Calling again with the advanced generator gives a new mask: dynamic masking.

    The torch path draws its random numbers exactly as Hugging Face's
    ``DataCollatorForLanguageModeling.torch_mask_tokens``: ``bernoulli`` of the selection, of
    ``[MASK]``, of "random among the rest" (``random_prob / (1 - mask_prob)``), then ``randint``.
    """
    select_prob = probability("select_prob", select_prob)
    mask_prob = probability("mask_prob", mask_prob)
    random_prob = probability("random_prob", random_prob)
    if mask_prob + random_prob > 1 + 1e-12:
        raise ValueError(
            f"expected mask_prob + random_prob <= 1 (the rest stay unchanged), got {mask_prob} + {random_prob}"
        )
    vocab_size = positive_int("vocab_size", vocab_size)
    mask_token_id = index_in("mask_token_id", mask_token_id, vocab_size, "vocab_size")
    input_ids = token_ids("input_ids", input_ids, vocab_size)
    maskable = same_shape("maskable", boolean_array("maskable", maskable, "True where a token may be selected"),
                          "input_ids", input_ids)
    torch_kind = is_torch(input_ids)
    if torch_kind:
        return _mlm_mask_torch(
            input_ids, maskable, mask_token_id, vocab_size, generator, select_prob, mask_prob, random_prob
        )
    return _mlm_mask_numpy(
        input_ids, maskable, mask_token_id, vocab_size, generator, select_prob, mask_prob, random_prob
    )


def _mlm_mask_numpy(input_ids, maskable, mask_token_id, vocab_size, generator, select_prob, mask_prob, random_prob):
    if is_torch(maskable):
        raise TypeError("expected maskable to be a numpy array like input_ids, got a torch tensor")
    if not isinstance(generator, np.random.Generator):
        raise TypeError(
            f"expected generator to be a np.random.Generator for numpy input_ids, got {type(generator).__name__} "
            "(np.random.default_rng(seed))"
        )
    shape = input_ids.shape
    selected = (generator.random(shape) < select_prob) & maskable
    labels = np.where(selected, input_ids, IGNORE_INDEX).astype(np.int64)
    replaced = (generator.random(shape) < mask_prob) & selected
    masked = input_ids.copy()
    masked[replaced] = mask_token_id
    if mask_prob < 1 and random_prob > 0:
        randomized = (generator.random(shape) < random_prob / (1 - mask_prob)) & selected & ~replaced
        random_ids = generator.integers(0, vocab_size, size=shape)
        masked[randomized] = random_ids[randomized]
    return masked, labels


def _mlm_mask_torch(input_ids, maskable, mask_token_id, vocab_size, generator, select_prob, mask_prob, random_prob):
    import torch

    if not isinstance(generator, torch.Generator):
        raise TypeError(
            f"expected generator to be a torch.Generator for torch input_ids, got {type(generator).__name__} "
            "(torch.Generator().manual_seed(seed))"
        )
    if not is_torch(maskable):
        raise TypeError("expected maskable to be a torch tensor like input_ids, got a numpy array")
    shape = tuple(input_ids.shape)
    device = input_ids.device
    probability = torch.full(shape, select_prob, device=device).masked_fill_(~maskable, 0.0)
    selected = torch.bernoulli(probability, generator=generator).bool()
    labels = torch.where(selected, input_ids, IGNORE_INDEX).long()
    replaced = torch.bernoulli(torch.full(shape, mask_prob, device=device), generator=generator).bool() & selected
    masked = input_ids.masked_fill(replaced, mask_token_id)
    if mask_prob < 1 and random_prob > 0:
        scaled = random_prob / (1 - mask_prob)
        randomized = (
            torch.bernoulli(torch.full(shape, scaled, device=device), generator=generator).bool() & selected & ~replaced
        )
        random_ids = torch.randint(vocab_size, shape, dtype=input_ids.dtype, device=device, generator=generator)
        masked = torch.where(randomized, random_ids, masked)
    return masked, labels
