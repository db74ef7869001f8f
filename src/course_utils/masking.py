"""Attention masks and masked-language-model masking (lesson 05).

One mask convention across the course: **boolean, ``True`` = may attend** (the convention of
``torch.nn.functional.scaled_dot_product_attention`` and of Hugging Face's ``attention_mask``,
where 1 = real token). The masks broadcast against attention scores ``(B, H, T_q, T_k)``:

- :func:`causal_mask` ``(T, T)``: query ``i`` may attend to keys ``j <= i`` (a decoder, GPT);
- :func:`padding_mask` ``(B, 1, 1, T)``: every query may attend to the real tokens only (an
  encoder, BERT / DistilBERT); the two combine with ``&``.

:func:`safe_masked_softmax` turns scores and such a mask into attention weights: the softmax over
the allowed keys of each row, and a row of zeros where the mask allows no key (left padding under a
causal mask), where filling with ``-inf`` gives ``nan`` and filling with the dtype's minimum gives
uniform weights over keys that are all blocked.

:func:`mlm_mask` makes the inputs and labels of masked-language-model pretraining (BERT's 15% of
tokens, of which 80% become ``[MASK]``, 10% a random token, 10% stay), with the same random draws,
in the same order, as Hugging Face's ``DataCollatorForLanguageModeling`` (so, given the same
``torch.Generator`` state, the same result; see the tests).

Each is written once, in torch; numpy in gives numpy out (converted at the edge), torch in gives
torch out (on the same device). :func:`causal_mask` takes a length, so it returns numpy unless given
``like=`` a tensor.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import torch

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

__all__ = ["IGNORE_INDEX", "causal_mask", "mlm_mask", "padding_mask", "safe_masked_softmax"]

IGNORE_INDEX = -100  # the label of positions that are not predicted (torch's cross_entropy ignore_index)

Array = Any  # a numpy array or a torch tensor


def causal_mask(seq_len: int, *, like: Array | None = None) -> Array:
    """``(T, T)`` boolean, ``True`` where key position ``j <= `` query position ``i`` (lower triangle).

    Row ``i`` is what query ``i`` may see: itself and the tokens before it, never the future.
    A numpy array, or a torch tensor on ``like``'s device when ``like`` is a tensor.
    """
    seq_len = positive_int("seq_len", seq_len)
    mask = torch.ones(seq_len, seq_len, dtype=torch.bool).tril()
    return mask.to(like.device) if is_torch(like) else mask.numpy()


def padding_mask(attention_mask: Array) -> Array:
    """Hugging Face's ``attention_mask (B, T)`` of 1 (real token) / 0 (padding) -> boolean
    ``(B, 1, 1, T)``, ``True`` = may attend.

    The two new axes let it broadcast against the scores ``(B, H, T_q, T_k)``: the same keys are
    blocked for every head and every query. Accepts integers, booleans or floats that are 0 or 1.
    """
    attention_mask = zeros_and_ones("attention_mask", attention_mask, "0 (padding) and 1 (real token)")
    with_axes("attention_mask", attention_mask, ("B", "T"))
    return (attention_mask != 0)[:, None, None, :]


def safe_masked_softmax(scores: Array, mask: Array) -> Array:
    """Attention weights ``(..., T_q, T_k)`` from ``scores (..., T_q, T_k)`` and a boolean ``mask``
    broadcastable to them, ``True`` = may attend.

    Each row is the softmax of its allowed scores alone: blocked keys get exactly 0 and the
    allowed weights sum to 1. A row whose keys are all blocked gets weights 0 everywhere, so its
    output ``weights @ values`` is the zero vector, as ``torch.nn.functional.scaled_dot_product_attention``
    returns for such a row. No ``nan``, whatever the blocked scores are (even far larger than the
    allowed ones). numpy in (float32 stays float32, other dtypes become float64) gives numpy out; a
    torch tensor gives a tensor, with the mask as a tensor or a numpy array.
    """
    numpy_in = not is_torch(scores)
    if numpy_in:
        array = np.asarray(scores)
        if array.dtype.kind not in "iuf" or array.ndim == 0:
            raise TypeError(f"expected scores as a float array of shape (..., T_q, T_k), got {array.dtype} of shape {array.shape}")
        scores_t = torch.from_numpy(np.array(array, dtype=np.float32 if array.dtype == np.float32 else np.float64))
    else:
        if not scores.is_floating_point() or scores.ndim == 0:
            raise TypeError(f"expected scores as a float tensor of shape (..., T_q, T_k), got {scores.dtype} of shape {tuple(scores.shape)}")
        scores_t = scores
    if is_torch(mask):
        mask_t = mask.to(scores_t.device)
    else:
        mask_array = np.asarray(mask)
        if mask_array.dtype != np.bool_:
            raise TypeError(f"expected a boolean mask (True = may attend), got dtype {mask_array.dtype}")
        mask_t = torch.from_numpy(mask_array.copy()).to(scores_t.device)
    if mask_t.dtype != torch.bool:
        raise TypeError(f"expected a boolean mask (True = may attend), got dtype {mask_t.dtype}")
    try:
        allowed = torch.broadcast_to(mask_t, scores_t.shape)
    except RuntimeError:
        raise ValueError(
            f"expected a mask broadcastable to the scores {tuple(scores_t.shape)}, got {tuple(mask_t.shape)}"
        ) from None
    filled = scores_t.masked_fill(~allowed, float("-inf"))  # (..., T_q, T_k)
    row_max = filled.amax(dim=-1, keepdim=True)
    row_max = torch.where(torch.isfinite(row_max), row_max, torch.zeros_like(row_max))  # an empty row: 0
    exps = (filled - row_max).exp()  # exp(-inf) = 0 at blocked keys
    sums = exps.sum(dim=-1, keepdim=True)
    weights = exps / torch.where(sums > 0, sums, torch.ones_like(sums))  # an empty row stays 0
    return weights.numpy() if numpy_in else weights


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

    With a ``torch.Generator`` it draws its random numbers exactly as Hugging Face's
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
    numpy_in = not is_torch(input_ids)
    if is_torch(maskable) == numpy_in:
        kind = "a numpy array" if numpy_in else "a torch tensor"
        raise TypeError(f"expected maskable to be {kind} like input_ids, got {'a torch tensor' if numpy_in else 'a numpy array'}")
    bernoulli, random_ids = _draws(generator, numpy_in)
    if numpy_in:  # int64 copies: torch has no masked_fill for every numpy integer type
        ids, maskable = torch.from_numpy(np.array(input_ids, dtype=np.int64)), torch.from_numpy(np.array(maskable))
    else:
        ids = input_ids
    shape = tuple(ids.shape)
    # float32 probabilities as Hugging Face's collator draws them; numpy compares its float64 uniforms
    full = functools.partial(torch.full, shape, device=ids.device, dtype=torch.float64 if numpy_in else None)
    selected = bernoulli(full(select_prob).masked_fill(~maskable, 0.0))
    labels = torch.where(selected, ids.long(), IGNORE_INDEX)
    replaced = bernoulli(full(mask_prob)) & selected
    masked = ids.masked_fill(replaced, mask_token_id)
    if mask_prob < 1 and random_prob > 0:
        # "random" among the selected that were not replaced: random_prob of all, random_prob / (1 - mask_prob) of these
        randomized = bernoulli(full(random_prob / (1 - mask_prob))) & selected & ~replaced
        masked = torch.where(randomized, random_ids(vocab_size, shape, ids), masked)
    return (masked.numpy().astype(input_ids.dtype), labels.numpy()) if numpy_in else (masked, labels)


def _draws(generator: Any, numpy_in: bool):
    """The two random draws of :func:`mlm_mask` from ``generator``: ``bernoulli(probability)``, a
    boolean tensor of ``probability``'s shape, and ``random_ids(vocab_size, shape, like)``, ids in
    ``[0, vocab_size)`` of ``like``'s dtype. A ``torch.Generator`` draws as Hugging Face's collator
    (``torch.bernoulli``, ``torch.randint``); a ``np.random.Generator`` draws uniforms and integers."""
    if numpy_in:
        if not isinstance(generator, np.random.Generator):
            raise TypeError(
                f"expected generator to be a np.random.Generator for numpy input_ids, got {type(generator).__name__} "
                "(np.random.default_rng(seed))"
            )
        return (
            lambda probability: torch.from_numpy(generator.random(tuple(probability.shape)) < probability.numpy()),
            lambda vocab_size, shape, like: torch.from_numpy(generator.integers(0, vocab_size, size=shape)),
        )
    if not isinstance(generator, torch.Generator):
        raise TypeError(
            f"expected generator to be a torch.Generator for torch input_ids, got {type(generator).__name__} "
            "(torch.Generator().manual_seed(seed))"
        )
    return (
        lambda probability: torch.bernoulli(probability, generator=generator).bool(),
        lambda vocab_size, shape, like: torch.randint(vocab_size, shape, dtype=like.dtype, device=like.device,
                                                      generator=generator),
    )
