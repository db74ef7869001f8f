"""Tiny random models for the tests, with every weight moved off its initial value (LayerNorms
off 1, biases and segment vectors off 0), and a padded batch."""

from __future__ import annotations

import torch
from transformers import BertConfig, BertForMaskedLM, DistilBertConfig, DistilBertForSequenceClassification


def _perturbed(model, scale: float):
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.add_(scale * torch.randn_like(parameter))
    return model.eval()


def tiny_teacher(*, layers: int = 4, vocab: int = 50, seed: int = 0, attn: str = "eager", **overrides):
    """A BERT masked-language model of width 16 (``BertForMaskedLM``), in eval mode."""
    torch.manual_seed(seed)
    fields = dict(vocab_size=vocab, hidden_size=16, num_hidden_layers=layers, num_attention_heads=2,
                  intermediate_size=32, max_position_embeddings=24, pad_token_id=0)  # fmt: skip
    fields["attn_implementation"] = attn
    return _perturbed(BertForMaskedLM(BertConfig(**{**fields, **overrides})), 0.1)


def tiny_distilbert(cls=DistilBertForSequenceClassification, *, seed: int = 0, vocab: int = 50, **overrides):
    """A DistilBERT of width 16 with a task head (``cls``), in eval mode; its logits are of order 1."""
    torch.manual_seed(seed)
    fields = dict(vocab_size=vocab, dim=16, n_layers=2, n_heads=2, hidden_dim=32, max_position_embeddings=64,
                  pad_token_id=0, num_labels=3)  # fmt: skip
    return _perturbed(cls(DistilBertConfig(**{**fields, **overrides})), 0.3)


def padded_batch(vocab: int = 50, seed: int = 1, lengths: tuple[int, ...] = (9, 6, 2)):
    """``(input_ids, attention_mask)`` ``(B, T)``: one row per length, padded with id 0 to the longest."""
    generator = torch.Generator().manual_seed(seed)
    input_ids = torch.randint(1, vocab, (len(lengths), max(lengths)), generator=generator)
    attention_mask = torch.ones_like(input_ids)
    for row, length in enumerate(lengths):
        input_ids[row, length:] = 0
        attention_mask[row, length:] = 0
    return input_ids, attention_mask
