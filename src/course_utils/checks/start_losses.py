"""Checker of lesson 07's ``start_losses``: what a choice of teacher layers costs a student before training.

The reference is :func:`course_utils.students.start_losses`. The learner's function runs on a tiny
float64 teacher; every forward pass of a model during the call is watched (which model, its
train/eval mode, the teacher layers a student holds, the token ids it reads), so that a wrong
result is explained by what the function did: a student left in train mode (dropout draws a
different network at every pass), a new mask or another batch per student, the unmasked ids, every
student built from the same layers, the teacher measured instead of the students, students run
without the attention mask, losses filed under the wrong keys. The losses must be numbers (floats,
or 0-d tensors): the lesson's next cell sorts and prints them.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field
from typing import Any, Callable

import torch

from .. import masking, students
from .engine import Case, Exercise, Symptom, Tracked, require_callable, returned, run_checks
from .values import as_float_array, describe

RTOL = 1e-6  # float64 models: correct versions agree to ~1e-15
MODEL_CLASSES = ("DistilBertForMaskedLM", "DistilBertModel", "BertForMaskedLM", "BertModel")


@dataclass(frozen=True)
class StartSetting:
    """One case: a tiny teacher of ``n_teacher`` layers in ``teacher_mode``, the learner's ``choices``."""

    n_teacher: int
    choices: tuple[tuple[int, ...], ...]
    teacher_mode: str  # "eval", or "train" (as a teacher is after training)
    seed: int
    dropout: float = 0.3  # large, so that a student left in train mode gives other losses
    lengths: tuple[int, ...] = (9, 7, 9, 9)  # each sentence's real tokens ([CLS] ... [SEP]), then padding
    init_range: float = 0.02  # BERT's; larger weights make attention, and so the padding mask, matter more


@dataclass
class Pass:
    """One forward pass of a model during the learner's call."""

    kind: str  # "student" or "teacher"
    training: bool
    layers: tuple[int, ...] | None  # the teacher layers a student holds (None: unknown, or the teacher)
    ids: torch.Tensor | None = None


@dataclass
class StartObserved:
    """What the learner's ``start_losses`` returned and did on one case, beside the reference."""

    setting: StartSetting
    result: Any = None
    expected: dict[tuple[int, ...], float] = field(default_factory=dict)
    teacher: Any = None  # the case's teacher and batch, for the losses of known mistakes (after a failure)
    teacher_loss: float = math.nan
    batch: tuple = ()
    passes: list[Pass] = field(default_factory=list)


def _tiny_teacher(setting: StartSetting):
    """A float64 BERT teacher of ``setting.n_teacher`` layers and a padded masked batch."""
    from transformers import BertConfig, BertForMaskedLM

    vocab = 30
    torch.manual_seed(setting.seed)
    config = BertConfig(vocab_size=vocab, hidden_size=8, num_hidden_layers=setting.n_teacher, num_attention_heads=2,
                        intermediate_size=16, max_position_embeddings=12, pad_token_id=0,
                        hidden_dropout_prob=setting.dropout, attention_probs_dropout_prob=setting.dropout,
                        initializer_range=setting.init_range, attn_implementation="eager")  # fmt: skip
    teacher = BertForMaskedLM(config).double()
    generator = torch.Generator().manual_seed(setting.seed)
    input_ids = torch.randint(5, vocab, (4, 9), generator=generator)  # (B, T)
    input_ids[:, 0], input_ids[:, -1] = 2, 3  # [CLS] ... [SEP]
    for row, length in enumerate(setting.lengths):  # shorter sentences, padded
        if length < input_ids.shape[1]:
            input_ids[row, length - 1], input_ids[row, length:] = 3, 0
    attention_mask = (input_ids != 0).long()
    masked, labels = masking.mlm_mask(input_ids, input_ids >= 5, mask_token_id=4, vocab_size=vocab,
                                      generator=generator, select_prob=0.4)  # fmt: skip
    labels[0, 1], masked[0, 1] = input_ids[0, 1], 4  # at least one masked position
    teacher.train(setting.teacher_mode == "train")
    return teacher, (input_ids, attention_mask, masked, labels)


def _layers_held(model, teacher) -> tuple[int, ...] | None:
    """The teacher layers whose query weights a student's blocks hold, in order (None if not found)."""
    blocks = getattr(getattr(getattr(model, "distilbert", model), "transformer", None), "layer", None)
    if blocks is None:
        return None
    sources = [layer.attention.self.query.weight for layer in teacher.bert.encoder.layer]
    held = []
    for block in blocks:
        match = [j for j, w in enumerate(sources) if w.shape == block.attention.q_lin.weight.shape
                 and torch.equal(w, block.attention.q_lin.weight)]  # fmt: skip
        if not match:
            return None
        held.append(match[0])
    return tuple(held)


def _losses_without_mask(teacher, choices, batch) -> dict[tuple[int, ...], float]:
    """The losses of students that read the masked ids without the attention mask (a common mistake)."""
    _, _, masked_ids, labels = batch
    losses = {}
    with torch.random.fork_rng(devices=[]), torch.no_grad():
        for layers in choices:
            student = students.student_from_teacher(teacher, list(layers)).eval()
            losses[tuple(layers)] = student(input_ids=masked_ids, labels=labels).loss.item()
    return losses


def observe_start_losses(start_losses: Callable[..., Any], setting: StartSetting) -> StartObserved:
    """Call ``start_losses(teacher, choices, batch)`` on a tiny teacher, watching every model's forward pass."""
    observed = StartObserved(setting)
    with torch.random.fork_rng(devices=[]):
        teacher, batch = _tiny_teacher(setting)
        observed.batch = tuple(x.clone() for x in batch)
        observed.expected = students.start_losses(teacher, [list(c) for c in setting.choices], batch)
        observed.teacher = teacher
        with torch.no_grad():
            mode = teacher.training
            observed.teacher_loss = teacher.eval()(input_ids=batch[2], attention_mask=batch[1],
                                                   labels=batch[3]).loss.item()  # fmt: skip
            teacher.train(mode)
        vocab = teacher.config.vocab_size

        def on_forward(module, args):
            name = type(module).__name__
            if name in MODEL_CLASSES:
                last = observed.passes[-1] if observed.passes else None
                if last is not None and last.ids is None and name.endswith("Model"):
                    return  # the encoder inside the model just recorded
                is_teacher = module is teacher or module is teacher.bert
                observed.passes.append(Pass("teacher" if is_teacher else "student", module.training,
                                            None if is_teacher else _layers_held(module, teacher)))  # fmt: skip
            elif (isinstance(module, torch.nn.Embedding) and module.num_embeddings == vocab and args
                  and observed.passes and observed.passes[-1].ids is None):  # fmt: skip
                observed.passes[-1].ids = args[0].detach().clone()

        handle = torch.nn.modules.module.register_module_forward_pre_hook(on_forward)
        try:
            torch.manual_seed(setting.seed + 1)  # a student in train mode draws its dropout from here
            observed.result = start_losses(teacher, [list(c) for c in setting.choices], batch)
        finally:
            handle.remove()
    return observed


def _loss_types(observed: StartObserved, case: Case) -> str | None:
    """What the next cell needs of the result: a dict whose losses are numbers (it sorts and prints them)."""
    result = observed.result
    if not isinstance(result, dict):
        return returned(result, "a dict {tuple(layers): loss}")
    for key, value in result.items():
        if isinstance(value, numbers.Real) and not isinstance(value, bool):
            continue
        if isinstance(value, torch.Tensor) and value.ndim == 0 and value.is_floating_point():
            continue
        return (f"{returned(value, 'a float', 'loss.item(); a 0-d tensor works too')} under the key {key!r}: "
                "the next cell sorts the losses and prints them")
    return None


def _no_attention_mask(observed: StartObserved, case: Case) -> bool:
    values = {key: _number(value) for key, value in observed.result.items()}
    without_mask = _losses_without_mask(observed.teacher, observed.setting.choices, observed.batch)
    return set(values) == set(without_mask) and all(
        v is not None and math.isclose(v, without_mask[k], rel_tol=RTOL) for k, v in values.items())


def _number(value: Any) -> float | None:
    array = as_float_array(value)
    return None if array is None or array.size != 1 else float(array.reshape(()))


def _compare(observed: StartObserved, _expected: Any) -> str | None:
    result, expected = observed.result, observed.expected
    if not isinstance(result, dict):
        return f"expected a dict {{tuple(layers): loss}}, got {describe(result)}"
    wanted = sorted(expected)
    try:
        keys = sorted(result, key=repr)
    except Exception:  # keys that cannot be sorted
        keys = list(result)
    if set(result) != set(expected):
        return f"the keys are {keys}, expected the tuples {wanted}, one per choice of layers"
    for key in wanted:
        value = _number(result[key])
        if value is None:
            return f"the value under {key} is {describe(result[key])}, not a single number"
        if not math.isclose(value, expected[key], rel_tol=RTOL, abs_tol=1e-12):
            return f"the loss under {key} is {value:.6g}, not the expected value (difference {abs(value - expected[key]):.3g})"
    return None


def _student_passes(observed: StartObserved) -> list[Pass]:
    return [p for p in observed.passes if p.kind == "student"]


def _teacher_only(observed: StartObserved, case: Case) -> bool:
    values = [_number(v) for v in observed.result.values()]
    close = bool(values) and all(v is not None and math.isclose(v, observed.teacher_loss, rel_tol=1e-6)
                                 for v in values)  # never on an empty dict
    return close or not _student_passes(observed)


def _train_mode(observed: StartObserved, case: Case) -> bool:
    return any(p.training for p in _student_passes(observed))


def _same_layers(observed: StartObserved, case: Case) -> bool:
    held = {p.layers for p in _student_passes(observed) if p.layers is not None}
    return len(observed.setting.choices) > 1 and len(held) == 1


def _unmasked(observed: StartObserved, case: Case) -> bool:
    input_ids = observed.batch[0]
    return any(p.ids is not None and p.ids.shape == input_ids.shape and torch.equal(p.ids, input_ids)
               for p in _student_passes(observed))  # fmt: skip


def _other_mask_or_batch(observed: StartObserved, case: Case) -> bool:
    masked = observed.batch[2]
    return any(p.ids is not None and not (p.ids.shape == masked.shape and torch.equal(p.ids, masked))
               for p in _student_passes(observed))  # fmt: skip


def _wrong_keys(observed: StartObserved, case: Case) -> bool:
    values = sorted(v for v in (_number(x) for x in observed.result.values()) if v is not None)
    expected = sorted(observed.expected.values())
    return len(values) == len(expected) and all(math.isclose(a, b, rel_tol=RTOL) for a, b in zip(values, expected))


def _keys_are_positions(observed: StartObserved, case: Case) -> bool:
    return set(observed.result) == set(range(len(observed.setting.choices)))


_START_LOSSES = Exercise(
    name="start_losses",
    call="start_losses(teacher, choices, batch), with batch = (input_ids, attention_mask, masked_ids, labels)",
    compare=_compare,
    returns=_loss_types,
    symptoms=(
        Symptom(
            "key each loss by the tuple of its student's layers, tuple(layers), not by its position in "
            "`choices`: the next cell looks the losses up by layers.",
            _keys_are_positions,
        ),
        Symptom(
            "these are the teacher's losses: build a student from each choice with "
            "students.student_from_teacher(teacher, layers) and measure the student.",
            _teacher_only,
        ),
        Symptom(
            "a student ran in train mode, so dropout switched off a random part of it at every pass and the "
            "loss measures a random network, not the layers you chose. Call student.eval() on each student "
            "before measuring it (a student takes the mode of its teacher, which may be in train mode).",
            _train_mode,
        ),
        Symptom(
            "the students ran without the attention mask: pass attention_mask=attention_mask (the batch's second "
            "item) with the masked ids, else every real token also attends to the padding, and a sentence's loss "
            "depends on how much padding the batch gave it.",
            _no_attention_mask,
        ),
        Symptom(
            "every student holds the same teacher layers: build each student from the choice of its own loop "
            "step (students.student_from_teacher(teacher, layers) with the loop's `layers`, not a variable "
            "from outside the loop).",
            _same_layers,
        ),
        Symptom(
            "a student read the unmasked input_ids: the answers are in plain sight. Every student reads "
            "masked_ids, the batch's third item, with its labels.",
            _unmasked,
        ),
        Symptom(
            "a student read other token ids than the batch's masked_ids: a new mask or another batch per "
            "student makes the students answer different questions, so their losses are not comparable. "
            "Give every student the same masked_ids, attention_mask and labels.",
            _other_mask_or_batch,
        ),
        Symptom(
            "the losses are right but filed under the wrong keys: put each loss under the tuple of the "
            "layers its own student was built from.",
            _wrong_keys,
        ),
    ),
    fallback="for each choice: student = students.student_from_teacher(teacher, layers).eval(); under "
    "torch.no_grad(), student(input_ids=masked_ids, attention_mask=attention_mask, labels=labels).loss is the "
    "masked-LM loss (the mean cross-entropy at the positions whose label is not -100); return "
    "{tuple(layers): loss.item()}.",
    on_error="`choices` is a list of lists of teacher layers such as [[0, 2, 4], [3, 4, 5]]; `batch` is the tuple "
    "(input_ids, attention_mask, masked_ids, labels).",
    error_hints=(
        (
            "increasing order",
            "build each student from its choice as given: distinct teacher layers in increasing "
            "order, as `choices` holds them (do not reverse, repeat or shift them).",
        ),
    ),
)

START_CASES = [
    ("a 4-layer teacher in eval mode; choices [[0, 2], [0, 1], [2, 3]]",
     StartSetting(4, ((0, 2), (0, 1), (2, 3)), "eval", 70)),
    ("a 6-layer teacher left in train mode, as after its training; choices [[3, 4, 5], [0, 2, 4], [0, 1, 2]]",
     StartSetting(6, ((3, 4, 5), (0, 2, 4), (0, 1, 2)), "train", 71)),
    ("a 3-layer teacher in train mode; one choice, [[1]]",
     StartSetting(3, ((1,),), "train", 72)),
    ("a 4-layer teacher of larger weights, two of its four sentences mostly padding; choices [[0, 2], [1, 3]]",
     StartSetting(4, ((0, 2), (1, 3)), "eval", 73, lengths=(9, 3, 4, 9), init_range=0.3)),
]  # fmt: skip


def check_start_losses(fn: Callable[..., Any]) -> None:
    """Check a learner's ``start_losses(teacher, choices, batch) -> {tuple(layers): loss}``.

    Four cases on tiny float64 teachers (4, 6, 3 and 4 layers; dropout 0.3, so that a student left
    in train mode gives other losses), two of them in train mode as a teacher is after training, one
    with its choices in no particular order, and one with larger weights and much padding (students
    run without the attention mask are off by 0.2% to 0.5% there, against a tolerance of 1e-6):
    every value must be a number (a float, or a 0-d tensor) equal to
    :func:`course_utils.students.start_losses`'s (relative 1e-6) under the same keys. A wrong result
    is explained by what the function did during the call (see the module's docstring).
    """
    require_callable(_START_LOSSES.name, fn)
    cases = [Case(name, (setting,), None) for name, setting in START_CASES]
    learner = Tracked(fn)

    def watched(setting: StartSetting) -> StartObserved:
        return observe_start_losses(learner, setting)

    run_checks(_START_LOSSES, watched, cases, learner=learner)
