"""Training loops of the course's models: masked-language modelling and sentence classification.

Small, deterministic under a seed, with a ``tqdm`` progress bar, and recording every loss. The
bundled teacher (``make assets``) and lessons 06-08 train with these functions.

Batches are padded only to their own longest sentence (dynamic padding), so a batch of short
sentences costs less than a batch of long ones.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
import torch

from . import masking


@dataclass
class Encoded:
    """Sentences as token ids: ``ids[i]`` the ids of sentence ``i`` (with [CLS] and [SEP]), ``labels[i]`` its label.

    A label per sentence (an int, for sentence classification), or a label per token (a list as
    long as ``ids[i]``, with ``-100`` where a token has none, for token classification, lesson 08).
    """

    ids: list[list[int]]
    labels: list


def encode(sentences, tokenizer, max_length: int | None = None) -> Encoded:
    """Tokenize ``sentences`` (``course_utils.data.Sentence`` objects) with ``tokenizer``."""
    texts = [s.text for s in sentences]
    ids = tokenizer(texts, truncation=max_length is not None, max_length=max_length)["input_ids"]
    return Encoded(ids=list(ids), labels=[s.label for s in sentences])


def pad(rows: Sequence[Sequence[int]], pad_id: int) -> tuple[torch.Tensor, torch.Tensor]:
    """``B`` id lists -> ``input_ids (B, T)`` and ``attention_mask (B, T)`` (1 = real token), padded right."""
    length = max(len(r) for r in rows)
    input_ids = torch.full((len(rows), length), pad_id, dtype=torch.long)
    attention_mask = torch.zeros((len(rows), length), dtype=torch.long)
    for b, row in enumerate(rows):
        input_ids[b, : len(row)] = torch.as_tensor(row)
        attention_mask[b, : len(row)] = 1
    return input_ids, attention_mask


def label_tensor(labels: Sequence) -> torch.Tensor:
    """A batch's labels: ``(B,)`` for a label per sentence, ``(B, T)`` padded with -100 for a label per token."""
    if len(labels) and isinstance(labels[0], (Sequence, np.ndarray)):
        padded, _ = pad(labels, masking.IGNORE_INDEX)
        return padded
    return torch.as_tensor(np.asarray(labels, dtype=np.int64))


def batch_order(n: int, batch_size: int, seed: int, epoch: int) -> list[np.ndarray]:
    """Indices of ``n`` examples shuffled for ``epoch`` (seeded), cut into batches of ``batch_size``."""
    order = np.random.default_rng([seed, epoch]).permutation(n)
    return [order[i : i + batch_size] for i in range(0, n, batch_size)]


def special_tokens_mask(input_ids: torch.Tensor, tokenizer) -> torch.Tensor:
    """``(B, T)`` bool, True at [CLS], [SEP], [PAD] (and any special token): never masked for MLM."""
    special = torch.tensor(sorted(tokenizer.all_special_ids))
    return torch.isin(input_ids, special)


def linear_warmup_decay(step: int, total: int, warmup: int) -> float:
    """Learning-rate factor: linear warm-up over ``warmup`` steps, then linear decay to 0 at ``total``."""
    if step < warmup:
        return (step + 1) / warmup
    return max(0.0, (total - step) / max(1, total - warmup))


@dataclass
class History:
    """Losses recorded during training: ``losses[name]`` one value per step."""

    losses: dict[str, list[float]] = field(default_factory=dict)

    def record(self, **values: float) -> None:
        for name, value in values.items():
            self.losses.setdefault(name, []).append(float(value))


def _progress(total: int, description: str, show: bool):
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=description, disable=not show, leave=False, mininterval=1.0)


def step_batches(n: int, batch_size: int, seed: int, steps: int):
    """Indices of each of ``steps`` batches of ``n`` examples: epoch after epoch of :func:`batch_order`."""
    step, epoch = 0, 0
    while step < steps:
        for indices in batch_order(n, batch_size, seed, epoch):
            if step == steps:
                return
            yield indices
            step += 1
        epoch += 1


def mlm_batches(encoded: Encoded, tokenizer, *, steps: int, batch_size: int, seed: int):
    """``steps`` masked-LM batches ``(input_ids, attention_mask, masked_ids, labels)``, each ``(B, T)``.

    Seeded epoch shuffles, dynamic padding, and a fresh 15% / 80-10-10 mask per batch
    (:func:`course_utils.masking.mlm_mask`, from a ``torch.Generator`` seeded with ``seed``):
    dynamic masking, as RoBERTa and DistilBERT do. Same arguments, same batches and masks.
    """
    generator = torch.Generator().manual_seed(seed)
    for indices in step_batches(len(encoded.ids), batch_size, seed, steps):
        input_ids, attention_mask = pad([encoded.ids[i] for i in indices], tokenizer.pad_token_id)
        maskable = ~special_tokens_mask(input_ids, tokenizer)
        masked, labels = masking.mlm_mask(
            input_ids, maskable, mask_token_id=tokenizer.mask_token_id, vocab_size=len(tokenizer), generator=generator
        )
        yield input_ids, attention_mask, masked, labels


def optimiser(model, *, steps: int, lr: float, warmup: int, weight_decay: float):
    """The course's optimiser: AdamW with :func:`linear_warmup_decay` over ``steps``; ``(optimizer, schedule)``."""
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: linear_warmup_decay(s, steps, warmup))
    return optimizer, schedule


def update(model, loss: torch.Tensor, optimizer, schedule, *, max_norm: float = 1.0) -> None:
    """One training step from ``loss``: gradients, clipped to norm ``max_norm``, then the optimiser and schedule."""
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    optimizer.step()
    schedule.step()


def train_mlm(
    model,
    encoded: Encoded,
    tokenizer,
    *,
    steps: int,
    batch_size: int = 128,
    lr: float = 1e-3,
    warmup: int = 100,
    weight_decay: float = 0.01,
    seed: int = 0,
    progress: bool = True,
) -> History:
    """Pre-train ``model`` (a ``*ForMaskedLM``) by masked-language modelling for ``steps`` steps.

    Batches and masks from :func:`mlm_batches`; AdamW, linear warm-up then linear decay (:func:`optimiser`).
    """
    torch.manual_seed(seed)
    optimizer, schedule = optimiser(model, steps=steps, lr=lr, warmup=warmup, weight_decay=weight_decay)
    history = History()
    model.train()
    with _progress(steps, "masked-LM pre-training", progress) as bar:
        batches = mlm_batches(encoded, tokenizer, steps=steps, batch_size=batch_size, seed=seed)
        for _, attention_mask, masked, labels in batches:
            loss = model(input_ids=masked, attention_mask=attention_mask, labels=labels).loss
            update(model, loss, optimizer, schedule)
            history.record(mlm=loss.item())
            bar.update(1)
            bar.set_postfix(loss=f"{loss.item():.3f}", refresh=False)
    model.eval()
    return history


def train_classifier(
    model,
    encoded: Encoded,
    pad_id: int,
    *,
    epochs: float = 1.0,
    batch_size: int = 64,
    lr: float = 1e-4,
    warmup: int = 50,
    weight_decay: float = 0.01,
    seed: int = 0,
    progress: bool = True,
) -> History:
    """Fine-tune ``model`` on ``encoded`` sentences and labels: a ``*ForSequenceClassification`` with a
    label per sentence, or a ``*ForTokenClassification`` with a label per token (see :class:`Encoded`)."""
    torch.manual_seed(seed)
    steps = math.ceil(epochs * math.ceil(len(encoded.ids) / batch_size))
    optimizer, schedule = optimiser(model, steps=steps, lr=lr, warmup=warmup, weight_decay=weight_decay)
    history = History()
    model.train()
    with _progress(steps, "fine-tuning", progress) as bar:
        for indices in step_batches(len(encoded.ids), batch_size, seed, steps):
            input_ids, attention_mask = pad([encoded.ids[i] for i in indices], pad_id)
            labels = label_tensor([encoded.labels[i] for i in indices])
            loss = model(input_ids=input_ids, attention_mask=attention_mask, labels=labels).loss
            update(model, loss, optimizer, schedule)
            history.record(loss=loss.item())
            bar.update(1)
    model.eval()
    return history


@torch.inference_mode()
def mlm_accuracy(model, encoded: Encoded, tokenizer, *, batch_size: int = 256, seed: int = 1) -> float:
    """Share of masked tokens that ``model`` predicts right (top-1), under a seeded 15% / 80-10-10 mask."""
    generator = torch.Generator().manual_seed(seed)
    model.eval()
    right = total = 0
    for start in range(0, len(encoded.ids), batch_size):
        input_ids, attention_mask = pad(encoded.ids[start : start + batch_size], tokenizer.pad_token_id)
        maskable = ~special_tokens_mask(input_ids, tokenizer)
        masked, labels = masking.mlm_mask(
            input_ids, maskable, mask_token_id=tokenizer.mask_token_id, vocab_size=len(tokenizer), generator=generator
        )
        logits = model(input_ids=masked, attention_mask=attention_mask).logits
        chosen = labels != masking.IGNORE_INDEX
        right += int((logits.argmax(-1)[chosen] == labels[chosen]).sum())
        total += int(chosen.sum())
    return right / total


@torch.inference_mode()
def predict(model, encoded: Encoded, pad_id: int, *, batch_size: int = 256) -> np.ndarray:
    """Predicted class of every sentence: ``(N,)`` ints."""
    model.eval()
    predictions = []
    for start in range(0, len(encoded.ids), batch_size):
        input_ids, attention_mask = pad(encoded.ids[start : start + batch_size], pad_id)
        predictions.append(model(input_ids=input_ids, attention_mask=attention_mask).logits.argmax(-1))
    return torch.cat(predictions).numpy()


def accuracy(model, encoded: Encoded, pad_id: int) -> float:
    """Share of sentences whose predicted class is their label."""
    return float(np.mean(predict(model, encoded, pad_id) == np.array(encoded.labels)))


def token_counts(encoded: Encoded, vocab_size: int) -> torch.Tensor:
    """Bag of words: a sparse ``(N, V)`` matrix, entry ``[i, v]`` how often token ``v`` occurs in sentence ``i``."""
    rows = torch.cat([torch.full((len(ids),), i) for i, ids in enumerate(encoded.ids)])
    columns = torch.cat([torch.as_tensor(ids) for ids in encoded.ids])
    indices, shape = torch.stack([rows, columns]), (len(encoded.ids), vocab_size)
    counts = torch.sparse_coo_tensor(indices, torch.ones(len(rows)), shape, check_invariants=True)
    return counts.coalesce()


def bag_of_words_accuracy(train: Encoded, test: Encoded, vocab_size: int, *, steps: int = 300, seed: int = 0) -> float:
    """Test accuracy of logistic regression on token counts: the order-blind baseline.

    A linear model of how often each token occurs, not where. Full-batch Adam on the training
    sentences' sparse count matrix, with a little weight decay.
    """
    torch.manual_seed(seed)
    x_train, x_test = token_counts(train, vocab_size), token_counts(test, vocab_size)
    y_train = torch.tensor(train.labels)
    weights = torch.zeros(vocab_size, 2, requires_grad=True)
    bias = torch.zeros(2, requires_grad=True)
    optimizer = torch.optim.Adam([weights, bias], lr=0.05, weight_decay=1e-4)
    for _ in range(steps):
        loss = torch.nn.functional.cross_entropy(torch.sparse.mm(x_train, weights) + bias, y_train)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    with torch.no_grad():
        predicted = (torch.sparse.mm(x_test, weights) + bias).argmax(-1)
    return float((predicted == torch.tensor(test.labels)).float().mean())
