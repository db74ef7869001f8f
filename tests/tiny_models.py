"""Tiny random models for the tests: a BERT teacher with non-trivial weights everywhere and a padded batch."""

from __future__ import annotations

import torch
from transformers import BertConfig, BertForMaskedLM


def tiny_teacher(*, layers: int = 4, vocab: int = 50, seed: int = 0, attn: str = "eager", **overrides):
    torch.manual_seed(seed)
    fields = dict(vocab_size=vocab, hidden_size=16, num_hidden_layers=layers, num_attention_heads=2,
                  intermediate_size=32, max_position_embeddings=24, pad_token_id=0)  # fmt: skip
    fields["attn_implementation"] = attn
    teacher = BertForMaskedLM(BertConfig(**{**fields, **overrides}))
    with torch.no_grad():  # LayerNorms, biases and the segment vectors away from their 1 / 0 initial values
        for parameter in teacher.parameters():
            parameter.add_(0.1 * torch.randn_like(parameter))
    return teacher.eval()


def padded_batch(vocab: int = 50, seed: int = 1):
    generator = torch.Generator().manual_seed(seed)
    input_ids = torch.randint(1, vocab, (3, 9), generator=generator)
    attention_mask = torch.ones_like(input_ids)
    for row, length in enumerate((9, 6, 2)):
        input_ids[row, length:] = 0
        attention_mask[row, length:] = 0
    return input_ids, attention_mask
