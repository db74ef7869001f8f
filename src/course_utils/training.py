"""Training loops of the course's models: masked-language modelling and sentence classification.

Small, deterministic under a seed, with a ``tqdm`` progress bar, and recording every loss. The
bundled teacher (``make assets``) and lessons 06-08 train with these functions.

Batches are padded only to their own longest sentence (dynamic padding), so a batch of short
sentences costs less than a batch of long ones; batches can also group sentences of similar
lengths (``group_by_length``, as every recipe of the course does), which pads them about a third
less than random batches.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
import torch

from . import masking
from .validation import positive_int


@dataclass
class Encoded:
    """Sentences as token ids: ``ids[i]`` the ids of sentence ``i`` (with [CLS] and [SEP]), ``labels[i]`` its label.

    A label per sentence (an int, for sentence classification), or a label per token (a list as
    long as ``ids[i]``, with ``-100`` where a token has none, for token classification, lesson 08).
    """

    ids: list[list[int]]
    labels: list


def max_length_of(tokenizer, max_length: int | None = None) -> int | None:
    """The length to truncate to: ``max_length``, else the tokenizer's ``model_max_length`` (128
    for the course tokenizer, 512 for DistilBERT's), else None (a tokenizer without a limit)."""
    if max_length is not None:
        if isinstance(max_length, bool) or not isinstance(max_length, numbers.Integral) or max_length < 2:
            raise ValueError(f"expected max_length to be an integer >= 2 ([CLS] and [SEP]), got {max_length!r}")
        return int(max_length)
    limit = getattr(tokenizer, "model_max_length", None)
    return int(limit) if isinstance(limit, numbers.Integral) and limit < 1_000_000 else None  # else: "no limit"


def encode(sentences, tokenizer, max_length: int | None = None) -> Encoded:
    """Tokenize ``sentences`` (``course_utils.data.Sentence`` objects) with ``tokenizer``.

    Each sentence is cut to ``max_length`` tokens, by default the tokenizer's own maximum
    (:func:`max_length_of`): a model with fewer positions (the course's have 128) needs
    ``max_length=model.config.max_position_embeddings``, which the training loops ask for.
    """
    texts = [s.text for s in sentences]
    max_length = max_length_of(tokenizer, max_length)
    ids = tokenizer(texts, truncation=max_length is not None, max_length=max_length)["input_ids"]
    return Encoded(ids=list(ids), labels=[s.label for s in sentences])


# --------------------------------------------------------------------------------------------
# Checks of the loops' arguments, up front, so that a mistake is an error, not a silent no-op


def _number(name: str, value, *, positive: bool) -> float:
    """A finite real ``value``, > 0 when ``positive`` else >= 0."""
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Real)
        or not math.isfinite(value)
        or value < 0
        or (positive and value == 0)
    ):
        bound = "> 0" if positive else ">= 0"
        hint = " (lr=0 would train nothing)" if name == "lr" else ""
        raise ValueError(f"expected {name} to be a finite number {bound}{hint}, got {value!r}")
    return float(value)


def check_data(encoded, model=None, *, labelled: bool = False) -> Encoded:
    """``encoded`` if it can be trained or evaluated on: an :class:`Encoded` with at least one
    sentence (and a label per sentence when ``labelled``), each no longer than ``model``'s
    ``max_position_embeddings``. Else a ``ValueError`` (or ``TypeError``) saying what to change."""
    if not isinstance(encoded, Encoded):
        raise TypeError(
            f"expected the sentences as a training.Encoded (from training.encode(sentences, tokenizer)), "
            f"got {type(encoded).__name__}"
        )
    if len(encoded.ids) == 0:
        raise ValueError("expected at least one sentence, got an empty data set (Encoded with no ids)")
    if labelled and len(encoded.labels) != len(encoded.ids):
        raise ValueError(f"expected a label per sentence, got {len(encoded.labels)} labels for {len(encoded.ids)} sentences")
    limit = getattr(getattr(model, "config", None), "max_position_embeddings", None)
    if isinstance(limit, int):
        lengths = [len(ids) for ids in encoded.ids]
        longest = max(lengths)
        if longest > limit:
            raise ValueError(
                f"expected sentences of at most {limit} tokens (the model's max_position_embeddings), got one of "
                f"{longest} tokens (sentence {lengths.index(longest)}): cut them when encoding, "
                f"training.encode(sentences, tokenizer, max_length={limit})"
            )
    return encoded


def check_schedule(*, lr, warmup, weight_decay, batch_size) -> None:
    """The optimiser's and batching's arguments: ``lr > 0``, ``warmup >= 0`` steps, ``weight_decay >= 0``,
    ``batch_size >= 1``, else a ``ValueError`` naming the argument and the value received."""
    _number("lr", lr, positive=True)
    _number("weight_decay", weight_decay, positive=False)
    positive_int("batch_size", batch_size)
    if isinstance(warmup, bool) or not isinstance(warmup, numbers.Integral) or warmup < 0:
        raise ValueError(f"expected warmup to be a number of steps >= 0, got {warmup!r}")


def stop_if_not_finite(loss: float, step: int, model, lr: float) -> None:
    """Raise ``FloatingPointError`` when ``loss`` is nan or inf, naming the step and the likely cause."""
    if math.isfinite(loss):
        return
    if any(not torch.isfinite(p).all() for p in model.parameters()):
        cause = ("the model's weights already hold nan or inf (a damaged checkpoint, or an earlier step "
                 "that overflowed): reload or re-create the model")
    else:
        cause = (f"the learning rate lr={lr:g} is probably too large for this model (try 10 times smaller), "
                 "or the inputs hold ids outside the vocabulary")
    raise FloatingPointError(f"training stopped at step {step + 1}: the loss is {loss}. Likely cause: {cause}.")


def pad(rows: Sequence[Sequence[int]], pad_id: int) -> tuple[torch.Tensor, torch.Tensor]:
    """``B`` id lists -> ``input_ids (B, T)`` and ``attention_mask (B, T)`` (1 = real token), padded right."""
    if len(rows) == 0:
        raise ValueError("expected at least one row of ids to pad, got none")
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


# Batches per group sorted by length. Hugging Face's LengthGroupedSampler sorts groups of up to 50,
# but in the course's corpus a sentence's length goes with its kind (the lexical ones are the
# shortest): the larger the group, the more a batch is of one kind (its commonest kind's share: 0.43
# in random batches, 0.59 with 4, 0.63 with 50; lesson 08 measures it). In one rebuild with 50, one
# teacher seed never left ln 2 (a single run: the cause is not established); with 4, every run of
# make assets left it within 15% of its steps, and batches pad about a third less than random ones.
GROUP_BATCHES = 4


def batch_order(n: int, batch_size: int, seed: int, epoch: int, lengths=None,
                group_batches: int = GROUP_BATCHES) -> list[np.ndarray]:
    """Indices of ``n`` examples shuffled for ``epoch`` (seeded), cut into batches of ``batch_size``.

    Given ``lengths`` (``n`` of them, each example's length in tokens), batches of examples of similar
    lengths, so that padding to a batch's longest costs little: the shuffled examples are cut into
    groups of ``group_batches`` batches (:data:`GROUP_BATCHES`), each group is sorted by length and cut
    into batches, and the batches are shuffled (Hugging Face's ``group_by_length``, with the batches'
    order random). Every example is still in exactly one batch of the epoch.
    """
    group_batches = positive_int("group_batches", group_batches)
    rng = np.random.default_rng([seed, epoch])
    order = rng.permutation(n)
    if lengths is None:
        return [order[i : i + batch_size] for i in range(0, n, batch_size)]
    lengths = np.asarray(lengths)
    if lengths.shape != (n,):
        raise ValueError(f"expected one length per example ({n}), got lengths of shape {lengths.shape}")
    group = group_batches * batch_size
    order = np.concatenate([chunk[np.argsort(lengths[chunk], kind="stable")]
                            for chunk in (order[i : i + group] for i in range(0, n, group))])
    batches = [order[i : i + batch_size] for i in range(0, n, batch_size)]
    return [batches[i] for i in rng.permutation(len(batches))]


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
    """Losses recorded during training: ``losses[name]`` one value per step; ``evaluations``, the
    ``(step, result)`` of each evaluation :func:`train_classifier` was asked to make."""

    losses: dict[str, list[float]] = field(default_factory=dict)
    evaluations: list[tuple[int, object]] = field(default_factory=list)

    def record(self, **values: float) -> None:
        for name, value in values.items():
            self.losses.setdefault(name, []).append(float(value))


PLATEAU_WINDOW = 25  # steps in the moving average of a loss curve
PLATEAU_EXIT = 0.6  # below ln 2 = 0.693 (a coin flip) by more than a loss curve's noise


def smooth(curve: Sequence[float], window: int = PLATEAU_WINDOW) -> np.ndarray:
    """Moving average over ``window`` steps: ``(N,) -> (N - window + 1,)``."""
    window = positive_int("window", window)
    curve = np.asarray(curve, dtype=float)
    if curve.ndim != 1 or len(curve) < window:
        raise ValueError(f"expected a 1-D loss curve of at least window={window} steps, got shape {curve.shape}")
    return np.convolve(curve, np.ones(window) / window, mode="valid")


def plateau_end(curve: Sequence[float], window: int = PLATEAU_WINDOW, below: float = PLATEAU_EXIT) -> int | None:
    """The step at which a two-class loss curve leaves ln 2: the first step whose moving average over
    the ``window`` steps up to it is below ``below`` (None: never)."""
    steps = np.flatnonzero(smooth(curve, window) < below)
    return int(steps[0]) + window if steps.size else None


def progress_bar(total: int, description: str, show: bool):
    """A tqdm bar of ``total`` steps for a training loop, drawn only when ``show`` (left off the screen after)."""
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=description, disable=not show, leave=False, mininterval=1.0)


def step_batches(n: int, batch_size: int, seed: int, steps: int, lengths=None):
    """Indices of each of ``steps`` batches of ``n`` examples: epoch after epoch of :func:`batch_order`
    (given ``lengths``, batches of similar lengths)."""
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 1:
        raise ValueError(f"expected at least one example to make batches of, got n={n!r}")  # else: no end
    batch_size = positive_int("batch_size", batch_size)
    step, epoch = 0, 0
    while step < steps:
        for indices in batch_order(n, batch_size, seed, epoch, lengths):
            if step == steps:
                return
            yield indices
            step += 1
        epoch += 1


def mlm_batches(encoded: Encoded, tokenizer, *, steps: int, batch_size: int, seed: int,
                group_by_length: bool = False):
    """``steps`` masked-LM batches ``(input_ids, attention_mask, masked_ids, labels)``, each ``(B, T)``.

    Seeded epoch shuffles, dynamic padding, and a fresh 15% / 80-10-10 mask per batch
    (:func:`course_utils.masking.mlm_mask`, from a ``torch.Generator`` seeded with ``seed``):
    dynamic masking, as RoBERTa and DistilBERT do. ``group_by_length``: batches of sentences of
    similar lengths (:func:`batch_order`), which pad less. Same arguments, same batches and masks.
    """
    generator = torch.Generator().manual_seed(seed)
    lengths = [len(row) for row in encoded.ids] if group_by_length else None
    for indices in step_batches(len(encoded.ids), batch_size, seed, steps, lengths):
        input_ids, attention_mask = pad([encoded.ids[i] for i in indices], tokenizer.pad_token_id)
        maskable = ~special_tokens_mask(input_ids, tokenizer)
        masked, labels = masking.mlm_mask(
            input_ids, maskable, mask_token_id=tokenizer.mask_token_id, vocab_size=len(tokenizer), generator=generator
        )
        yield input_ids, attention_mask, masked, labels


SCHEDULES = ("warmup-decay", "constant")
DECAY = ("all", "matrices")


# The parameters a sequence-classification head adds on a pre-trained encoder, new at fine-tuning:
# BERT's pooler and classifier, DistilBERT's pre_classifier and classifier.
HEAD_PREFIXES = ("classifier.", "pre_classifier.", "bert.pooler.")


def is_head(name: str) -> bool:
    """Whether the parameter ``name`` (of ``model.named_parameters()``) belongs to a task head
    (:data:`HEAD_PREFIXES`), not to the pre-trained encoder."""
    return name.startswith(HEAD_PREFIXES)


def parameter_groups(model, weight_decay: float, decay: str = "all", head_lr: float | None = None) -> list[dict]:
    """AdamW's parameter groups: weight decay on ``"all"`` parameters, or on the ``"matrices"`` only.

    ``"matrices"`` is the standard fine-tuning recipe (Hugging Face's ``Trainer``, nanoGPT): biases and
    LayerNorm weights, the 1-D parameters, are not decayed towards 0, since shrinking a bias or a
    LayerNorm's scale does not make the model simpler, only different. ``head_lr``: the task head's
    parameters (:func:`is_head`) in groups of their own at this peak rate (the others at the
    optimiser's); ``None``: one rate for all, the groups above.
    """
    if decay not in DECAY:
        raise ValueError(f"expected decay to be one of {DECAY}, got {decay!r}")
    named = [(name, p) for name, p in model.named_parameters() if p.requires_grad]
    if head_lr is None:
        parts = [({}, [p for _, p in named])]
    else:
        _number("head_lr", head_lr, positive=True)
        head = [p for name, p in named if is_head(name)]
        if not head:
            raise ValueError(f"expected a model with a task head ({', '.join(HEAD_PREFIXES)}) for head_lr, got "
                             f"{type(model).__name__}, which has none")
        parts = [({}, [p for name, p in named if not is_head(name)]), ({"lr": head_lr}, head)]
    groups = []
    for extra, parameters in parts:
        if decay == "all":
            groups.append({"params": parameters, "weight_decay": weight_decay, **extra})
        else:
            groups += [{"params": [p for p in parameters if p.ndim >= 2], "weight_decay": weight_decay, **extra},
                       {"params": [p for p in parameters if p.ndim < 2], "weight_decay": 0.0, **extra}]
    return groups


def optimiser(model, *, steps: int, lr: float, warmup: int, weight_decay: float,
              schedule: str = "warmup-decay", decay: str = "all", fused: bool = False, head_lr: float | None = None):
    """The course's optimiser: AdamW (:func:`parameter_groups`) and a learning-rate schedule; ``(optimizer, schedule)``.

    ``schedule="warmup-decay"``: :func:`linear_warmup_decay` over ``steps``; ``"constant"``: ``lr`` throughout
    (``head_lr``, the task head's peak rate, follows the same schedule).
    ``fused``: PyTorch's fused AdamW, the same update done by one kernel for every weight instead of
    a loop over them (fine-tuning's steps take about 13% less time on a CPU; the last bits differ).
    """
    if schedule not in SCHEDULES:
        raise ValueError(f"expected schedule to be one of {SCHEDULES}, got {schedule!r}")
    optimizer = torch.optim.AdamW(parameter_groups(model, weight_decay, decay, head_lr), lr=lr, weight_decay=weight_decay,
                                  fused=fused)
    factor = (lambda s: linear_warmup_decay(s, steps, warmup)) if schedule == "warmup-decay" else (lambda s: 1.0)
    return optimizer, torch.optim.lr_scheduler.LambdaLR(optimizer, factor)


def update(model, loss: torch.Tensor, optimizer, schedule, *, max_norm: float = 1.0) -> None:
    """One training step from ``loss``: gradients, clipped to norm ``max_norm``, then the optimiser and schedule."""
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    optimizer.step()
    schedule.step()


def train_step(model: torch.nn.Module, batch, optimizer: torch.optim.Optimizer) -> float:
    """One step of training, the loop taught in lesson 02: forward, loss, zero_grad, backward, step.

    ``batch = (inputs, targets)``: ``model(inputs)`` gives logits ``(B, C)`` and ``targets (B,)``
    holds class ids; the loss is their cross-entropy, averaged over the batch. The model is put
    in train mode first (dropout on), whatever mode it came in. The optimiser steps once.
    Returns the loss *before* the update, as a Python float (a tensor would keep its graph alive).
    """
    if not isinstance(batch, (tuple, list)) or len(batch) != 2:
        raise TypeError(f"expected batch = (inputs, targets), a pair, got {type(batch).__name__}"
                        + (f" of length {len(batch)}" if isinstance(batch, (tuple, list)) else ""))
    inputs, targets = batch
    model.train()  # dropout on: the model may come from an evaluation, in eval mode
    logits = model(inputs)  # (B, C)
    loss = torch.nn.functional.cross_entropy(logits, targets)  # a 0-d tensor, still in the graph
    optimizer.zero_grad()  # forget the previous step's gradients (backward adds to .grad)
    loss.backward()  # d loss / d weight, into every weight's .grad
    optimizer.step()  # move every weight, using its .grad (and, for Adam, its running averages)
    return loss.item()


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
    group_by_length: bool = False,
    seed: int = 0,
    progress: bool = True,
) -> History:
    """Pre-train ``model`` (a ``*ForMaskedLM``) by masked-language modelling for ``steps`` steps.

    Batches and masks from :func:`mlm_batches` (``group_by_length`` passed on); AdamW, linear warm-up then linear decay (:func:`optimiser`).
    The arguments are checked first (:func:`check_data`, :func:`check_schedule`); training stops
    at the first loss that is nan or inf (:func:`stop_if_not_finite`).
    """
    check_data(encoded, model)
    steps = positive_int("steps", steps)
    check_schedule(lr=lr, warmup=warmup, weight_decay=weight_decay, batch_size=batch_size)
    torch.manual_seed(seed)
    optimizer, schedule = optimiser(model, steps=steps, lr=lr, warmup=warmup, weight_decay=weight_decay)
    history = History()
    model.train()
    with progress_bar(steps, "masked-LM pre-training", progress) as bar:
        batches = mlm_batches(encoded, tokenizer, steps=steps, batch_size=batch_size, seed=seed,
                              group_by_length=group_by_length)
        for step, (_, attention_mask, masked, labels) in enumerate(batches):
            loss = model(input_ids=masked, attention_mask=attention_mask, labels=labels).loss
            stop_if_not_finite(loss.item(), step, model, lr)
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
    steps: int | None = None,
    batch_size: int = 64,
    lr: float = 1e-4,
    warmup: int = 50,
    weight_decay: float = 0.01,
    schedule: str = "warmup-decay",
    decay: str = "all",
    objective=None,
    evaluate=None,
    evaluate_every: int = 25,
    group_by_length: bool = False,
    head_lr: float | None = None,
    seed: int = 0,
    progress: bool = True,
) -> History:
    """Fine-tune ``model`` on ``encoded`` sentences and labels: a ``*ForSequenceClassification`` with a
    label per sentence, or a ``*ForTokenClassification`` with a label per token (see :class:`Encoded`).

    ``epochs`` may be fractional (2.5); ``steps``, when given, is the number of batches instead
    (epoch after epoch, for a small data set); ``schedule`` and ``decay`` as in :func:`optimiser`. The loss
    is the model's cross-entropy, or ``objective(logits, labels, indices)`` when given: ``logits``
    ``(B, C)``, ``labels`` ``(B,)`` and the batch's ``indices`` into ``encoded`` (lesson 07's task
    distillation, :func:`course_utils.distill.task_objective`). ``evaluate(model)``, when given, is
    called every ``evaluate_every`` steps (in eval mode; dropout's random draws are not touched) and
    its results kept in ``history.evaluations``. ``group_by_length``: batches of sentences of similar
    lengths (:func:`batch_order`), which pad less. ``head_lr``: the task head's own peak rate
    (:func:`parameter_groups`; ``lr`` is then the encoder's). The optimiser is :func:`optimiser`'s, fused. The
    arguments are checked first, and
    training stops at the first loss that is nan or inf, as in :func:`train_mlm`."""
    check_data(encoded, model, labelled=True)
    _number("epochs", epochs, positive=True)
    check_schedule(lr=lr, warmup=warmup, weight_decay=weight_decay, batch_size=batch_size)
    if objective is not None and not callable(objective):
        raise TypeError(f"expected objective to be a function (logits, labels, indices) -> loss, got {objective!r}")
    if evaluate is not None and not callable(evaluate):
        raise TypeError(f"expected evaluate to be a function model -> result, got {evaluate!r}")
    evaluate_every = positive_int("evaluate_every", evaluate_every)
    torch.manual_seed(seed)
    if steps is None:
        steps = math.ceil(epochs * math.ceil(len(encoded.ids) / batch_size))
    steps = positive_int("steps", steps)
    optimizer, schedule = optimiser(model, steps=steps, lr=lr, warmup=warmup, weight_decay=weight_decay,
                                    schedule=schedule, decay=decay, fused=True, head_lr=head_lr)
    history = History()
    model.train()
    lengths = [len(row) for row in encoded.ids] if group_by_length else None
    with progress_bar(steps, "fine-tuning", progress) as bar:
        for step, indices in enumerate(step_batches(len(encoded.ids), batch_size, seed, steps, lengths)):
            input_ids, attention_mask = pad([encoded.ids[i] for i in indices], pad_id)
            labels = label_tensor([encoded.labels[i] for i in indices])
            if objective is None:
                loss = model(input_ids=input_ids, attention_mask=attention_mask, labels=labels).loss
            else:
                loss = objective(model(input_ids=input_ids, attention_mask=attention_mask).logits, labels, indices)
            stop_if_not_finite(loss.item(), step, model, lr)
            update(model, loss, optimizer, schedule)
            history.record(loss=loss.item())
            if evaluate is not None and (step + 1) % evaluate_every == 0:
                model.eval()
                history.evaluations.append((step + 1, evaluate(model)))
                model.train()
            bar.update(1)
    model.eval()
    return history


def subset(encoded: Encoded, n: int, seed: int) -> Encoded:
    """``n`` examples of ``encoded`` drawn without replacement (seeded): a smaller labelled set."""
    n = positive_int("n", n)
    if n > len(encoded.ids):
        raise ValueError(f"expected n <= {len(encoded.ids)} (the examples there are), got {n}")
    chosen = np.sort(np.random.default_rng(seed).choice(len(encoded.ids), size=n, replace=False))
    labels = None if encoded.labels is None else [encoded.labels[i] for i in chosen]
    return Encoded(ids=[encoded.ids[i] for i in chosen], labels=labels)


@torch.inference_mode()
def mlm_accuracy(model, encoded: Encoded, tokenizer, *, batch_size: int = 256, seed: int = 1) -> float:
    """Share of masked tokens that ``model`` predicts right (top-1), under a seeded 15% / 80-10-10 mask."""
    check_data(encoded, model)
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
    """Predicted class of every sentence: ``(N,)`` ints, in ``encoded``'s order. The sentences go
    through the model shortest first, so that a batch pads little."""
    check_data(encoded, model)
    model.eval()
    order = np.argsort([len(row) for row in encoded.ids], kind="stable")
    predictions = []
    for start in range(0, len(order), batch_size):
        input_ids, attention_mask = pad([encoded.ids[i] for i in order[start : start + batch_size]], pad_id)
        predictions.append(model(input_ids=input_ids, attention_mask=attention_mask).logits.argmax(-1))
    predicted = np.empty(len(order), dtype=np.int64)
    predicted[order] = torch.cat(predictions).numpy()
    return predicted


def accuracy(model, encoded: Encoded, pad_id: int) -> float:
    """Share of sentences whose predicted class is their label."""
    return float(np.mean(predict(model, encoded, pad_id) == np.array(encoded.labels)))


def accuracy_by_kind(model, encoded: Encoded, kinds: Sequence[str], pad_id: int) -> dict[str, float]:
    """Accuracy on each kind of sentence (``kinds[i]``, the kind of sentence ``i``, as
    :attr:`course_utils.data.Sentence.kind`), in the order the kinds first occur."""
    if len(kinds) != len(encoded.ids):
        raise ValueError(f"expected a kind per sentence, got {len(kinds)} kinds for {len(encoded.ids)} sentences")
    right = predict(model, encoded, pad_id) == np.array(encoded.labels)
    kinds = np.asarray(kinds)
    return {kind: float(right[kinds == kind].mean()) for kind in dict.fromkeys(kinds.tolist())}


def token_counts(encoded: Encoded, vocab_size: int) -> torch.Tensor:
    """Bag of words: a sparse ``(N, V)`` matrix, entry ``[i, v]`` how often token ``v`` occurs in sentence ``i``."""
    rows = torch.cat([torch.full((len(ids),), i) for i, ids in enumerate(encoded.ids)])
    columns = torch.cat([torch.as_tensor(ids) for ids in encoded.ids])
    indices, shape = torch.stack([rows, columns]), (len(encoded.ids), vocab_size)
    counts = torch.sparse_coo_tensor(indices, torch.ones(len(rows)), shape, check_invariants=True)
    return counts.coalesce()


def bag_of_words_predictions(train: Encoded, test: Encoded, vocab_size: int, *, steps: int = 300,
                             seed: int = 0) -> np.ndarray:
    """The order-blind baseline's predicted class of each ``test`` sentence: ``(N,)`` ints.

    A logistic regression on token counts: a linear model of how often each token occurs, not
    where. Full-batch Adam on the training sentences' sparse count matrix, with a little weight decay.
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
        return (torch.sparse.mm(x_test, weights) + bias).argmax(-1).numpy()


def bag_of_words_accuracy(train: Encoded, test: Encoded, vocab_size: int, *, steps: int = 300, seed: int = 0) -> float:
    """Test accuracy of :func:`bag_of_words_predictions`."""
    predicted = bag_of_words_predictions(train, test, vocab_size, steps=steps, seed=seed)
    return float(np.mean(predicted == np.array(test.labels)))
