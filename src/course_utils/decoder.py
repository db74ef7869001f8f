"""A small causal decoder with RoPE, grouped-query attention and a KV cache (lesson 09).

Lesson 05's causal mask put to work: a GPT-style language model that predicts the next token,
small enough to train on the course corpus in seconds on a CPU. Read from top to bottom:

1. :class:`DecoderConfig` — the sizes, the place of the LayerNorms (``norm="pre"`` or ``"post"``) and
   the number of key/value heads (``n_kv_heads``: equal to ``n_heads`` for multi-head attention, 1 for
   multi-query, in between for grouped-query);
2. :class:`KVCache` — the keys (already rotated by RoPE) and values of every past token, per layer;
3. :func:`decode_step` — one token's attention with the cache: rotate the new query and key at the
   next position, append the key and value, attend over everything cached (the lesson's exercise);
4. :class:`CausalSelfAttention`, :class:`DecoderBlock`, :class:`Decoder` — the model;
5. :func:`generate` — greedy or temperature sampling, with or without the cache;
6. :func:`train_next_token` and :func:`gradient_norms` — training, and the gradients per layer at
   initialisation (lesson 09 compares post-LN and pre-LN with them).

Axis names: ``B`` batch, ``T`` tokens (``t`` already cached), ``D`` model width, ``H`` query heads,
``H_kv`` key/value heads, ``d`` head width ``D / H``, ``V`` vocabulary, ``L`` layers.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Callable, Sequence

import torch
from torch import nn
from torch.nn import functional as F

from .attention import merge_heads, scaled_dot_product_attention, split_heads
from .grouped_query import repeat_kv
from .rope import BASE, apply_rope
from .validation import non_negative_int, positive_int, positive_number

__all__ = [
    "CausalSelfAttention",
    "Decoder",
    "DecoderBlock",
    "DecoderConfig",
    "KVCache",
    "NORMS",
    "decode_step",
    "generate",
    "gradient_norms",
    "next_token_batch",
    "seconds_per_token",
    "train_next_token",
]

NORMS = ("pre", "post")
Step = Callable[[torch.Tensor, torch.Tensor, torch.Tensor, tuple], tuple]


@dataclass(frozen=True)
class DecoderConfig:
    """The sizes of a :class:`Decoder`. ``n_kv_heads=None`` means ``n_heads`` (multi-head attention)."""

    vocab_size: int
    dim: int = 64  # D
    n_layers: int = 2  # L
    n_heads: int = 4  # H
    n_kv_heads: int | None = None  # H_kv: divides H
    hidden_dim: int | None = None  # F, default 4 * D
    max_positions: int = 128  # the longest text, prompt and generated tokens together
    norm: str = "pre"  # "pre": x + f(LN(x)) (GPT-2, Llama); "post": LN(x + f(x)) (BERT)
    rope_base: float = BASE
    initializer_range: float = 0.02

    def __post_init__(self) -> None:
        for name in ("vocab_size", "dim", "n_layers", "n_heads", "max_positions"):
            positive_int(name, getattr(self, name))
        if self.dim % self.n_heads or (self.dim // self.n_heads) % 2:
            raise ValueError(f"expected n_heads to divide dim into heads of even width (RoPE turns pairs), "
                             f"got dim={self.dim}, n_heads={self.n_heads}")
        kv = positive_int("n_kv_heads", self.kv_heads)
        if self.n_heads % kv:
            raise ValueError(f"expected n_kv_heads to divide n_heads={self.n_heads} (each key/value head serves a "
                             f"whole group of query heads), got n_kv_heads={kv}")
        if self.hidden_dim is not None:
            positive_int("hidden_dim", self.hidden_dim)
        if self.norm not in NORMS:
            raise ValueError(f"expected norm to be one of {NORMS}, got {self.norm!r}")
        positive_number("rope_base", self.rope_base)
        positive_number("initializer_range", self.initializer_range)

    @property
    def kv_heads(self) -> int:
        """``H_kv``: the key/value heads."""
        return self.n_heads if self.n_kv_heads is None else self.n_kv_heads

    @property
    def head_dim(self) -> int:
        """``d = D / H``: the width of one head."""
        return self.dim // self.n_heads

    @property
    def ffn_dim(self) -> int:
        """``F``: the width inside the feed-forward network."""
        return 4 * self.dim if self.hidden_dim is None else self.hidden_dim


class KVCache:
    """The keys and values of the tokens seen so far, one pair of tensors per layer.

    ``keys[l]``, ``values[l]``: ``(B, H_kv, t, d)``, the keys already rotated by RoPE at their
    positions ``0 .. t-1``; None before the first token.
    """

    def __init__(self, n_layers: int):
        n_layers = positive_int("n_layers", n_layers)
        self.keys: list[torch.Tensor | None] = [None] * n_layers
        self.values: list[torch.Tensor | None] = [None] * n_layers

    def length(self, layer: int = 0) -> int:
        """``t``: the tokens cached in ``layer``."""
        keys = self.keys[layer]
        return 0 if keys is None else keys.shape[-2]

    def nbytes(self) -> int:
        """The memory the cached keys and values take, in bytes."""
        return sum(t.numel() * t.element_size() for t in (*self.keys, *self.values) if t is not None)


def decode_step(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                cache: tuple[torch.Tensor, torch.Tensor]) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
    """One new token's attention with a KV cache.

    ``query (B, H, 1, d)``, ``key`` and ``value (B, H_kv, 1, d)`` of the new token, not rotated yet;
    ``cache = (keys, values)``, ``(B, H_kv, t, d)`` each, the rotated keys and the values of the ``t``
    tokens before it. The new token is at position ``t``: its query and key are rotated there (RoPE),
    the key and value appended to the cache, and the query attends over all ``t + 1`` of them (no
    mask: nothing cached is in its future). Returns ``output (B, H, 1, d)`` and the new cache
    ``(keys, values)``, ``(B, H_kv, t + 1, d)`` each.
    """
    keys, values = cache
    for name, tensor in (("query", query), ("key", key), ("value", value), ("keys", keys), ("values", values)):
        if not isinstance(tensor, torch.Tensor) or tensor.ndim != 4:
            raise ValueError(f"expected {name} to be a tensor of shape (B, heads, T, d), got "
                             f"{tuple(getattr(tensor, 'shape', ())) or type(tensor).__name__}")
    if query.shape[-2] != 1 or key.shape[-2] != 1:
        raise ValueError(f"expected one new token, query (B, H, 1, d) and key (B, H_kv, 1, d), got "
                         f"{tuple(query.shape)} and {tuple(key.shape)}")
    if query.shape[1] % key.shape[1]:
        raise ValueError(f"expected the key/value heads ({key.shape[1]}) to divide the query heads ({query.shape[1]})")
    position = torch.tensor([keys.shape[-2]])  # the new token comes after the t cached ones
    query, key = apply_rope(query, position), apply_rope(key, position)
    keys = torch.cat([keys, key], dim=-2)  # (B, H_kv, t + 1, d)
    values = torch.cat([values, value], dim=-2)
    n_rep = query.shape[1] // keys.shape[1]
    output, _ = scaled_dot_product_attention(query, repeat_kv(keys, n_rep), repeat_kv(values, n_rep))
    return output, (keys, values)


def _causal_from(start: int, length: int, device) -> torch.Tensor:
    """``(T, start + T)``: query ``i`` (at position ``start + i``) may see keys ``0 .. start + i``."""
    query_positions = torch.arange(start, start + length, device=device)[:, None]
    return torch.arange(start + length, device=device)[None, :] <= query_positions


class CausalSelfAttention(nn.Module):
    """Multi-head (or grouped-query) causal self-attention with RoPE: ``(B, T, D)`` -> ``(B, T, D)``."""

    def __init__(self, config: DecoderConfig):
        super().__init__()
        self.config = config
        d = config.head_dim
        self.q_proj = nn.Linear(config.dim, config.n_heads * d)
        self.k_proj = nn.Linear(config.dim, config.kv_heads * d)
        self.v_proj = nn.Linear(config.dim, config.kv_heads * d)
        self.o_proj = nn.Linear(config.n_heads * d, config.dim)

    def forward(self, x: torch.Tensor, cache: KVCache | None = None, layer: int = 0,
                step: Step | None = None) -> torch.Tensor:
        """``x (B, T, D)`` -> ``(B, T, D)``. With a ``cache``, ``x`` holds the tokens after the cached
        ones; one token at a time goes through ``step`` (default :func:`decode_step`)."""
        c = self.config
        queries = split_heads(self.q_proj(x), c.n_heads)  # (B, H, T, d)
        keys = split_heads(self.k_proj(x), c.kv_heads)  # (B, H_kv, T, d)
        values = split_heads(self.v_proj(x), c.kv_heads)
        start = 0 if cache is None else cache.length(layer)
        if cache is not None and x.shape[1] == 1 and start > 0:  # decoding: one token, with the cache
            output, (cache.keys[layer], cache.values[layer]) = (step or decode_step)(
                queries, keys, values, (cache.keys[layer], cache.values[layer]))
            return self.o_proj(merge_heads(output))
        positions = torch.arange(start, start + x.shape[1])
        queries, keys = apply_rope(queries, positions), apply_rope(keys, positions)
        if cache is not None:  # the prompt (or a chunk): append it all at once
            if start:
                keys = torch.cat([cache.keys[layer], keys], dim=-2)
                values = torch.cat([cache.values[layer], values], dim=-2)
            cache.keys[layer], cache.values[layer] = keys, values
        n_rep = c.n_heads // c.kv_heads
        mask = _causal_from(start, x.shape[1], x.device)  # (T, start + T)
        output, _ = scaled_dot_product_attention(queries, repeat_kv(keys, n_rep), repeat_kv(values, n_rep), mask)
        return self.o_proj(merge_heads(output))  # (B, H, T, d) -> (B, T, D)


class DecoderBlock(nn.Module):
    """Attention then a GELU feed-forward network, each in a residual, pre-LN or post-LN."""

    def __init__(self, config: DecoderConfig):
        super().__init__()
        self.norm = config.norm
        self.attention = CausalSelfAttention(config)
        self.attention_norm = nn.LayerNorm(config.dim)
        self.ffn = nn.Sequential(nn.Linear(config.dim, config.ffn_dim), nn.GELU(),
                                 nn.Linear(config.ffn_dim, config.dim))
        self.ffn_norm = nn.LayerNorm(config.dim)

    def forward(self, x: torch.Tensor, cache: KVCache | None = None, layer: int = 0,
                step: Step | None = None) -> torch.Tensor:
        """``x (B, T, D)`` -> ``(B, T, D)``."""
        if self.norm == "pre":
            x = x + self.attention(self.attention_norm(x), cache, layer, step)
            return x + self.ffn(self.ffn_norm(x))
        x = self.attention_norm(x + self.attention(x, cache, layer, step))
        return self.ffn_norm(x + self.ffn(x))


class Decoder(nn.Module):
    """Token embeddings (post-LN: normalised, as BERT's), ``L`` blocks, (pre-LN: a final LayerNorm), a linear head.

    ``decoder(input_ids (B, T), cache=None)`` -> logits ``(B, T, V)``: at each position, the scores
    of the next token. No position embeddings: RoPE, inside attention, gives the positions.
    """

    def __init__(self, config: DecoderConfig):
        super().__init__()
        if not isinstance(config, DecoderConfig):
            raise TypeError(f"expected a DecoderConfig, got {type(config).__name__}")
        self.config = config
        self.embed = nn.Embedding(config.vocab_size, config.dim)
        # post-LN normalises the embeddings too, as BERT does (its residual stream is always normalised)
        self.embed_norm = nn.LayerNorm(config.dim) if config.norm == "post" else nn.Identity()
        self.blocks = nn.ModuleList(DecoderBlock(config) for _ in range(config.n_layers))
        self.final_norm = nn.LayerNorm(config.dim) if config.norm == "pre" else nn.Identity()
        self.lm_head = nn.Linear(config.dim, config.vocab_size, bias=False)
        for module in self.modules():
            if isinstance(module, (nn.Linear, nn.Embedding)):
                nn.init.normal_(module.weight, std=config.initializer_range)
            if isinstance(module, nn.Linear) and module.bias is not None:
                nn.init.zeros_(module.bias)

    def new_cache(self) -> KVCache:
        """An empty :class:`KVCache` for this model."""
        return KVCache(self.config.n_layers)

    def forward(self, input_ids: torch.Tensor, cache: KVCache | None = None, step: Step | None = None) -> torch.Tensor:
        """``input_ids (B, T)`` -> logits ``(B, T, V)``; with a ``cache``, the ids that follow the cached ones."""
        input_ids = torch.as_tensor(input_ids)
        if input_ids.ndim != 2 or input_ids.is_floating_point():
            raise ValueError(f"expected integer input_ids of shape (B, T), got {tuple(input_ids.shape)} "
                             f"of dtype {input_ids.dtype}")
        start = 0 if cache is None else cache.length()
        if start + input_ids.shape[1] > self.config.max_positions:
            raise ValueError(f"expected at most max_positions={self.config.max_positions} tokens in all, "
                             f"got {start} cached + {input_ids.shape[1]} new")
        if bool(((input_ids < 0) | (input_ids >= self.config.vocab_size)).any()):
            raise ValueError(f"expected token ids in [0, {self.config.vocab_size})")
        x = self.embed_norm(self.embed(input_ids))  # (B, T, D)
        for layer, block in enumerate(self.blocks):
            x = block(x, cache, layer, step)
        return self.lm_head(self.final_norm(x))  # (B, T, V)


def _next_token(logits: torch.Tensor, temperature: float, generator: torch.Generator) -> int:
    """Greedy (``temperature == 0``) or a draw from ``softmax(logits / temperature)``; ``logits (V,)``."""
    if temperature == 0:
        return int(logits.argmax())
    probabilities = torch.softmax(logits.double() / temperature, dim=-1)
    return int(torch.multinomial(probabilities, 1, generator=generator))


@torch.no_grad()
def generate(model: Decoder, prompt: Sequence[int], max_new_tokens: int, *, temperature: float = 0.0,
             seed: int = 0, use_cache: bool = True, stop_id: int | None = None,
             step: Step | None = None) -> list[int]:
    """The tokens a decoder writes after ``prompt``, one at a time: a list of at most ``max_new_tokens`` ids.

    ``temperature`` 0 is greedy decoding (the most likely token each time); above 0, each token is
    drawn from ``softmax(logits / temperature)`` with a generator seeded by ``seed`` (lesson 07's
    temperature: below 1 sharper, above 1 flatter). ``use_cache=False`` runs the whole text through
    the model for every new token; ``use_cache=True`` runs the prompt once, then only the new token,
    with the :class:`KVCache` (``step``: the function of one cached step, default :func:`decode_step`).
    Stops after ``stop_id`` when given.
    """
    if not isinstance(model, Decoder):
        raise TypeError(f"expected a Decoder, got {type(model).__name__}")
    max_new_tokens = non_negative_int("max_new_tokens", max_new_tokens)
    if not (isinstance(temperature, (int, float)) and math.isfinite(temperature) and temperature >= 0):
        raise ValueError(f"expected temperature >= 0 (0 = greedy), got {temperature!r}")
    ids = [int(i) for i in prompt]
    if not ids:
        raise ValueError("expected a prompt of at least one token")
    generator = torch.Generator().manual_seed(non_negative_int("seed", seed))
    was_training = model.training
    model.eval()
    cache = model.new_cache() if use_cache else None
    new: list[int] = []
    pending = ids  # what the model has not read yet
    try:
        for _ in range(max_new_tokens):
            inputs = torch.tensor([pending if use_cache else ids + new])
            logits = model(inputs, cache, step)[0, -1]  # (V,): the scores of the next token
            token = _next_token(logits, float(temperature), generator)
            new.append(token)
            pending = [token]
            if token == stop_id:
                break
    finally:
        model.train(was_training)
    return new


def seconds_per_token(model: Decoder, prompt: Sequence[int], n_tokens: int, *, use_cache: bool,
                      repeats: int = 3) -> float:
    """The best of ``repeats`` wall-clock times of :func:`generate` (greedy) over ``n_tokens``, per token."""
    n_tokens, repeats = positive_int("n_tokens", n_tokens), positive_int("repeats", repeats)
    best = math.inf
    for _ in range(repeats):
        start = time.perf_counter()
        generate(model, prompt, n_tokens, use_cache=use_cache)
        best = min(best, time.perf_counter() - start)
    return best / n_tokens


def next_token_batch(sequences: Sequence[Sequence[int]], pad_id: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Inputs and targets for next-token prediction: ``input_ids (B, T-1)``, ``labels (B, T-1)``.

    Each sequence is padded on the right to the longest; ``labels[b, i]`` is the token after position
    ``i``, or ``-100`` (ignored by the loss) past the end of the sequence.
    """
    if not sequences or any(len(s) < 2 for s in sequences):
        raise ValueError("expected sequences of at least two tokens each (one to read, one to predict)")
    length = max(len(s) for s in sequences)
    ids = torch.full((len(sequences), length), pad_id, dtype=torch.long)
    labels = torch.full((len(sequences), length), -100, dtype=torch.long)
    for row, sequence in enumerate(sequences):
        ids[row, :len(sequence)] = torch.tensor(sequence)
        labels[row, :len(sequence)] = torch.tensor(sequence)
    return ids[:, :-1], labels[:, 1:]


def _loss(model: Decoder, input_ids: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    logits = model(input_ids)  # (B, T, V)
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1), ignore_index=-100)


def train_next_token(model: Decoder, sequences: Sequence[Sequence[int]], *, steps: int, batch_size: int,
                     lr: float, warmup: int, pad_id: int, seed: int = 0) -> list[float]:
    """Train ``model`` to predict the next token with AdamW; returns the loss of every step.

    ``warmup`` steps of linear warm-up (0: the full learning rate from the first step), then a
    constant ``lr``; batches of ``batch_size`` sequences drawn with ``seed``; no gradient clipping,
    so that what warm-up does shows.
    """
    steps, batch_size = positive_int("steps", steps), positive_int("batch_size", batch_size)
    warmup, lr = non_negative_int("warmup", warmup), positive_number("lr", lr)
    generator = torch.Generator().manual_seed(non_negative_int("seed", seed))
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: min(1.0, (s + 1) / warmup) if warmup else 1.0)
    model.train()
    losses = []
    for _ in range(steps):
        rows = torch.randint(len(sequences), (batch_size,), generator=generator).tolist()
        input_ids, labels = next_token_batch([sequences[r] for r in rows], pad_id)
        loss = _loss(model, input_ids, labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        schedule.step()
        losses.append(loss.item())
    return losses


def gradient_norms(model: Decoder, sequences: Sequence[Sequence[int]], pad_id: int) -> list[float]:
    """The norm of the gradient of the loss with respect to each block's parameters: ``L`` numbers.

    One batch of ``sequences``, the next-token loss; the norm of all of block ``l``'s parameter
    gradients together (Xiong et al. 2020 plot these per layer at initialisation).
    """
    model.zero_grad()
    input_ids, labels = next_token_batch(sequences, pad_id)
    _loss(model, input_ids, labels).backward()
    norms = [math.sqrt(sum(float((p.grad**2).sum()) for p in block.parameters())) for block in model.blocks]
    model.zero_grad()
    return norms
