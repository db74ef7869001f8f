"""Lesson 06's pattern finder: what each head of a trained encoder attends to, measured.

Two parts, each usable alone:

1. **Reading a text safely** — :func:`prepare_text` turns what a reader typed into token ids and
   says, in plain words, what happened to it: an empty text is refused, a text longer than the
   model's positions is truncated (with a notice), characters the tokenizer does not know are
   reported by name (they became ``[UNK]``).
2. **The weights and the pattern finder** — :func:`attention_maps` returns every attention map of
   a model, ``(L, H, T, T)``, and :func:`attention_samples` those of many texts at once;
   :func:`head_behaviours` measures simple behaviours of every head (attends to the previous
   token, the next one, itself, ``[CLS]``, ``[SEP]``; attends broadly, measured by the entropy of
   its rows), :func:`average_behaviours` averages them over sentences, and :func:`rank_heads`
   ranks the heads by one of them and says why, against what a head that attends uniformly would
   score.

The attention explorer that shows these maps is :mod:`course_utils.figures.attention_explorer`.

Axes: ``L`` layers, ``H`` heads, ``T`` tokens (queries along the rows, keys along the columns).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np
import torch

from ..encoder import DistilBertEncoder
from ..validation import positive_int

__all__ = [
    "BEHAVIOURS",
    "PreparedText",
    "RankedHead",
    "attention_maps",
    "attention_samples",
    "average_behaviours",
    "head_behaviours",
    "max_positions",
    "prepare_text",
    "rank_heads",
    "strongest_behaviour",
    "uniform_behaviours",
]

# Behaviour -> what a high score means, for the reasons the pattern finder gives.
BEHAVIOURS = {
    "previous token": "of each token's attention goes to the token just before it",
    "next token": "of each token's attention goes to the token just after it",
    "itself": "of each token's attention stays on the token itself",
    "[CLS]": "of each token's attention goes to [CLS]",
    "[SEP]": "of each token's attention goes to [SEP]",
    "broad": "of the largest possible entropy, on average over the rows (1 = spread evenly over all tokens)",
}
EXAMPLE_HINT = "the cat is happy, but it is not calm"


# --------------------------------------------------------------------------------------------
# 1. Reading a text safely


@dataclass(frozen=True)
class PreparedText:
    """A text as the model reads it.

    ``tokens`` and ``input_ids``: the ``T`` tokens, ``[CLS]`` and ``[SEP]`` included, after any
    truncation; ``n_tokens``: how many tokens the whole text has (more than ``T`` when it was
    truncated); ``notices``: what happened to the text, one sentence each (empty when nothing did).
    """

    text: str
    tokens: tuple[str, ...]
    input_ids: tuple[int, ...]
    n_tokens: int
    notices: tuple[str, ...]

    @property
    def truncated(self) -> bool:
        """Whether the model reads only the beginning of the text."""
        return self.n_tokens > len(self.tokens)


def prepare_text(text: str, tokenizer, max_length: int) -> PreparedText:
    """Tokenize ``text`` for a model of ``max_length`` positions, and say what happened to it.

    Raises ``ValueError`` for an empty (or blank) text. A text of more than ``max_length`` tokens
    (``[CLS]`` and ``[SEP]`` included) is cut to its first ``max_length``, with a notice. Pieces of
    the text that the tokenizer maps to ``[UNK]`` are named in a notice (with a fast tokenizer,
    which knows where each token comes from; otherwise they are counted).
    """
    if not isinstance(text, str):
        raise TypeError(f"expected the text as a string, got {type(text).__name__}")
    if isinstance(max_length, bool) or not isinstance(max_length, (int, np.integer)) or max_length < 3:
        raise ValueError(
            f"expected max_length to be an integer of at least 3 ([CLS], a token, [SEP]), got {max_length!r}"
        )
    if not text.strip():
        raise ValueError(f"expected some text to explore, got an empty text: type a sentence, e.g. '{EXAMPLE_HINT}'")
    n_tokens = len(tokenizer(text, verbose=False)["input_ids"])  # verbose=False: no warning when too long
    offsets = bool(getattr(tokenizer, "is_fast", False))
    encoded = tokenizer(text, truncation=True, max_length=int(max_length), return_offsets_mapping=offsets)
    input_ids = tuple(int(i) for i in encoded["input_ids"])
    tokens = tuple(tokenizer.convert_ids_to_tokens(list(input_ids)))
    notices = []
    if n_tokens > len(input_ids):
        notices.append(
            f"The text has {n_tokens} tokens ([CLS] and [SEP] included), but the model has only {max_length} "
            f"positions: it reads the first {len(input_ids)} tokens, the rest was cut off."
        )
    unknown = [t for t, i in enumerate(input_ids) if i == tokenizer.unk_token_id]
    if unknown:
        if offsets:
            pieces = list(dict.fromkeys(text[slice(*encoded["offset_mapping"][t])] for t in unknown))
            shown = ", ".join(repr(piece) for piece in pieces[:8]) + (", ..." if len(pieces) > 8 else "")
            what = f"{len(unknown)} piece{'s' if len(unknown) > 1 else ''} of the text ({shown})"
        else:
            what = f"{len(unknown)} piece{'s' if len(unknown) > 1 else ''} of the text"
        notices.append(
            f"{what} {'are' if len(unknown) > 1 else 'is'} not in the tokenizer's vocabulary and became [UNK]: "
            "the model sees one unknown-token vector there, whatever the characters were."
        )
    if len(input_ids) <= 2:
        raise ValueError(f"expected some text to explore, got {text!r}, which has no tokens besides [CLS] and [SEP]")
    return PreparedText(text=text, tokens=tokens, input_ids=input_ids, n_tokens=n_tokens, notices=tuple(notices))


# --------------------------------------------------------------------------------------------
# 2. The weights, and the pattern finder


def max_positions(model) -> int:
    """The most tokens ``model`` reads: ``max_position_embeddings`` of its config."""
    config = getattr(model, "config", None)
    value = getattr(config, "max_position_embeddings", None)
    if not isinstance(value, int):
        raise TypeError(f"expected a model whose config has max_position_embeddings, got {type(model).__name__}")
    return value


def attention_maps(model, input_ids: Sequence[int]) -> np.ndarray:
    """Every attention map of ``model`` for one sequence of token ids: ``(L, H, T, T)`` float64.

    ``model``: the course's :class:`course_utils.encoder.DistilBertEncoder` (which always returns its
    weights), or a Hugging Face encoder loaded with ``attn_implementation="eager"`` (the default
    SDPA path returns no weights). Run in eval mode, without gradients.
    """
    ids = torch.as_tensor([list(input_ids)], dtype=torch.long)  # (1, T)
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            if isinstance(model, DistilBertEncoder):
                attentions = model(ids).attentions
            else:
                attentions = model(input_ids=ids, output_attentions=True).attentions
    finally:
        model.train(was_training)
    if not attentions or any(a is None for a in attentions):
        raise ValueError(
            "the model returned no attention weights: load it with attn_implementation='eager' "
            "(the default SDPA attention does not compute them)"
        )
    return torch.stack([a[0] for a in attentions]).double().numpy()  # (L, H, T, T)


def attention_samples(
    model, tokenizer, texts: Sequence[str], max_length: int, *, batch_size: int = 64
) -> list[tuple[tuple[str, ...], np.ndarray]]:
    """``(tokens, maps (L, H, T, T))`` for each text, run in padded batches: many texts, fast.

    Each text is prepared by :func:`prepare_text` (truncated to ``max_length``); the batches are
    padded on the right and masked, and each text's maps are cut back to its ``T`` real tokens,
    so they equal :func:`attention_maps` of that text alone (up to float rounding).
    """
    batch_size = positive_int("batch_size", batch_size)
    prepared = [prepare_text(text, tokenizer, max_length) for text in texts]
    pad_id = tokenizer.pad_token_id
    samples = []
    was_training = model.training
    model.eval()
    try:
        for start in range(0, len(prepared), batch_size):
            chunk = prepared[start : start + batch_size]
            width = max(len(p.input_ids) for p in chunk)
            ids = torch.tensor([list(p.input_ids) + [pad_id] * (width - len(p.input_ids)) for p in chunk])  # (B, T)
            mask = torch.tensor([[1] * len(p.input_ids) + [0] * (width - len(p.input_ids)) for p in chunk])
            with torch.no_grad():
                if isinstance(model, DistilBertEncoder):
                    attentions = model(ids, mask).attentions
                else:
                    attentions = model(input_ids=ids, attention_mask=mask, output_attentions=True).attentions
            if not attentions or any(a is None for a in attentions):
                raise ValueError(
                    "the model returned no attention weights: load it with attn_implementation='eager' "
                    "(the default SDPA attention does not compute them)"
                )
            maps = torch.stack(attentions, dim=1).double().numpy()  # (B, L, H, T, T)
            for row, p in zip(maps, chunk):
                n = len(p.input_ids)
                samples.append((p.tokens, row[:, :, :n, :n]))
    finally:
        model.train(was_training)
    return samples


def _check_weights(weights, tokens: Sequence[str]) -> np.ndarray:
    weights = np.asarray(weights, dtype=float)
    if weights.ndim != 4 or weights.shape[2] != weights.shape[3] or weights.shape[3] != len(tokens):
        raise ValueError(
            f"expected weights of shape (L, H, T, T) with T = len(tokens) = {len(tokens)}, got {weights.shape}"
        )
    if len(tokens) < 2:
        raise ValueError(f"expected at least 2 tokens, got {len(tokens)}")
    return weights


def head_behaviours(weights, tokens: Sequence[str]) -> dict[str, np.ndarray]:
    """How much each head shows each behaviour of :data:`BEHAVIOURS`, in one sentence.

    ``weights (L, H, T, T)``: row ``i`` of a map is where token ``i`` looks. Returns, for each
    behaviour, an ``(L, H)`` array:

    - ``"previous token"``, ``"next token"``, ``"itself"``: the average weight from token ``i`` to
      token ``i - 1``, ``i + 1``, ``i`` (over the tokens that have one);
    - ``"[CLS]"``, ``"[SEP]"``: the average total weight on the tokens ``[CLS]``, ``[SEP]``;
    - ``"broad"``: the average entropy of a row divided by its largest possible value ``log T``:
      1 for a head that spreads its attention evenly, 0 for one that looks at one token.

    A head that attends uniformly scores ``1/T`` on the first five (see :func:`uniform_behaviours`).
    """
    weights = _check_weights(weights, tokens)
    n = weights.shape[-1]
    rows = np.arange(n)
    tokens = [str(t) for t in tokens]
    with np.errstate(divide="ignore", invalid="ignore"):
        entropy = -np.where(weights > 0, weights * np.log(weights), 0.0).sum(axis=-1)  # (L, H, T)
    return {
        "previous token": weights[:, :, rows[1:], rows[1:] - 1].mean(axis=-1),
        "next token": weights[:, :, rows[:-1], rows[:-1] + 1].mean(axis=-1),
        "itself": weights[:, :, rows, rows].mean(axis=-1),
        "[CLS]": weights[..., [t == "[CLS]" for t in tokens]].sum(axis=-1).mean(axis=-1),
        "[SEP]": weights[..., [t == "[SEP]" for t in tokens]].sum(axis=-1).mean(axis=-1),
        "broad": entropy.mean(axis=-1) / math.log(n),
    }


def uniform_behaviours(tokens: Sequence[str]) -> dict[str, float]:
    """What a head attending evenly to all ``T`` tokens scores on each behaviour: the baseline."""
    n = len(tokens)
    scores = head_behaviours(np.full((1, 1, n, n), 1.0 / n), tokens)
    return {name: float(value[0, 0]) for name, value in scores.items()}


def average_behaviours(samples: Sequence[tuple[Sequence[str], Any]]) -> tuple[dict[str, np.ndarray], dict[str, float]]:
    """:func:`head_behaviours` averaged over sentences ``[(tokens, weights (L, H, T, T)), ...]``.

    Returns the ``(L, H)`` scores and the uniform head's scores, both averaged over the sentences.
    """
    if not samples:
        raise ValueError("expected at least one (tokens, weights) sample, got none")
    per_sentence = [head_behaviours(weights, tokens) for tokens, weights in samples]
    baselines = [uniform_behaviours(tokens) for tokens, _ in samples]
    shapes = {next(iter(s.values())).shape for s in per_sentence}
    if len(shapes) != 1:
        raise ValueError(f"expected the weights of one model (the same L and H), got (L, H) in {sorted(shapes)}")
    scores = {name: np.mean([s[name] for s in per_sentence], axis=0) for name in BEHAVIOURS}
    baseline = {name: float(np.mean([b[name] for b in baselines])) for name in BEHAVIOURS}
    return scores, baseline


@dataclass(frozen=True)
class RankedHead:
    """One head of a ranking: 1-based ``layer`` and ``head``, its ``score`` and the ``reason`` in words."""

    layer: int
    head: int
    score: float
    reason: str


def _reason(behaviour: str, score: float, baseline: float) -> str:
    if behaviour == "broad":  # the uniform head's entropy is the largest possible: 1
        return f"{score:.2f} {BEHAVIOURS[behaviour]}"
    return f"{score:.2f} {BEHAVIOURS[behaviour]} (a head attending uniformly: {baseline:.2f})"


def rank_heads(
    scores: Mapping[str, np.ndarray], baseline: Mapping[str, float], behaviour: str, top: int = 3
) -> list[RankedHead]:
    """The ``top`` heads with the highest score for ``behaviour``, best first, each with its reason.

    ``scores`` and ``baseline`` as returned by :func:`average_behaviours` (or :func:`head_behaviours`
    and :func:`uniform_behaviours`). Ties go to the earlier layer, then the earlier head.
    """
    if behaviour not in BEHAVIOURS:
        raise ValueError(f"expected a behaviour among {list(BEHAVIOURS)}, got {behaviour!r}")
    values = np.asarray(scores[behaviour], dtype=float)  # (L, H)
    if isinstance(top, bool) or not isinstance(top, (int, np.integer)) or not 1 <= top <= values.size:
        raise ValueError(f"expected top to be an integer from 1 to L*H={values.size}, got {top!r}")
    order = np.argsort(-values.ravel(), kind="stable")[:top]
    ranked = []
    for flat in order:
        layer, head = divmod(int(flat), values.shape[1])
        score = float(values[layer, head])
        ranked.append(RankedHead(layer + 1, head + 1, score, _reason(behaviour, score, baseline[behaviour])))
    return ranked


def strongest_behaviour(
    scores: Mapping[str, np.ndarray], baseline: Mapping[str, float], layer: int, head: int
) -> tuple[str, str]:
    """The behaviour in which head (``layer``, ``head``), 1-based, stands out most, and the reason.

    "Stands out" is the score's excess over the uniform head's, relative to what is left above it:
    ``(score - uniform) / (1 - uniform)``, 0 for a uniform head and 1 for a perfect one. Broad
    attention counts only when no pointed behaviour passes 0.5.
    """
    pointed = [b for b in BEHAVIOURS if b != "broad"]

    def excess(name: str) -> float:
        value = float(np.asarray(scores[name])[layer - 1, head - 1])
        return (value - baseline[name]) / max(1e-12, 1 - baseline[name])

    best = max(pointed, key=excess)  # the first in BEHAVIOURS' order wins a tie
    if excess(best) < 0.5:
        best = "broad"
    value = float(np.asarray(scores[best])[layer - 1, head - 1])
    return best, _reason(best, value, baseline[best])
