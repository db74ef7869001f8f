"""Checker of lesson 07's ``distillation_step``: one update of the student against the frozen teacher.

The reference is :func:`course_utils.distill.distillation_step`. The learner's step runs on a tiny
teacher-student pair; what it did (the three loss terms, the total, the student's and the teacher's
weights after it) is observed and compared with the reference's.
"""

from __future__ import annotations

import contextlib
import copy
import math
import numbers
from dataclasses import dataclass, field
from typing import Any, Callable

import torch
from torch.nn import functional as F

from .. import distill, masking, students
from .distill import kl_rows
from .engine import Case, Exercise, Symptom, Tracked, require_callable, returned, run_checks
from .values import as_float_array

# --------------------------------------------------------------------------------------------
# One step of distillation


TERMS = ("total", "ce", "mlm", "cos")
STEP_RTOL = 1e-7  # float64 models: correct versions agree to ~1e-15


@dataclass(frozen=True)
class StepSetting:
    """One case of ``distillation_step``: the loss's settings, the modes the models come in, the calls."""

    temperature: float
    alphas: tuple[float, float, float]  # ce, mlm, cos
    max_norm: float
    teacher_mode: str  # "eval", or "train" (as after a fine-tuning)
    student_mode: str
    calls: int
    seed: int

    @property
    def alpha_dict(self) -> dict[str, float]:
        return dict(zip(("ce", "mlm", "cos"), self.alphas))


def _tiny_pair(setting: StepSetting):
    """A float64 two-layer BERT teacher, its one-layer student (one layer out of two), and a masked batch."""
    from transformers import BertConfig, BertForMaskedLM

    vocab = 30
    torch.manual_seed(setting.seed)
    config = BertConfig(vocab_size=vocab, hidden_size=8, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=16, max_position_embeddings=12, pad_token_id=0,
                        attn_implementation="eager")  # fmt: skip
    teacher = BertForMaskedLM(config).double()
    student = students.student_from_teacher(teacher)
    generator = torch.Generator().manual_seed(setting.seed)
    input_ids = torch.randint(5, vocab, (4, 9), generator=generator)  # (B, T)
    input_ids[:, 0], input_ids[:, -1] = 2, 3  # [CLS] ... [SEP]
    input_ids[1, 6:] = torch.tensor([3, 0, 0])  # a shorter sentence, padded
    attention_mask = (input_ids != 0).long()
    maskable = input_ids >= 5
    masked, labels = masking.mlm_mask(input_ids, maskable, mask_token_id=4, vocab_size=vocab, generator=generator,
                                      select_prob=0.4)  # fmt: skip
    labels[0, 1] = input_ids[0, 1]  # at least one masked position
    masked[0, 1] = 4
    teacher.train(setting.teacher_mode == "train")
    student.train(setting.student_mode == "train")
    return teacher, student, (input_ids, attention_mask, masked, labels)


def _optimizer_of(student) -> torch.optim.Optimizer:
    return torch.optim.AdamW(student.parameters(), lr=1e-2, weight_decay=0.01)


def _reference_step(teacher, student, batch, optimizer, setting: StepSetting, **changes) -> dict[str, float]:
    options = dict(alphas=setting.alpha_dict, temperature=setting.temperature, max_norm=setting.max_norm)
    loss = distill.distillation_step(teacher, student, batch, optimizer, **{**options, **changes})
    return {name: getattr(loss, name).item() for name in TERMS}


def _terms_of(result: Any) -> dict[str, float] | None:
    """The four losses of what the learner returned (a dict, or an object with attributes), or None."""
    terms = {}
    for name in TERMS:
        value = result.get(name) if isinstance(result, dict) else getattr(result, name, None)
        array = None if value is None else as_float_array(value)
        if array is None or array.size != 1:
            return None
        terms[name] = float(array.reshape(()))
    return terms


def _weights(model) -> list[torch.Tensor]:
    return [p.detach().clone() for p in model.parameters()]


def _off_by(a: list[torch.Tensor], b: list[torch.Tensor]) -> float:
    return max(float((x - y).abs().max()) for x, y in zip(a, b))


@dataclass
class StepObserved:
    """What a ``distillation_step`` did over the calls of one case."""

    setting: StepSetting
    terms: list = field(default_factory=list)  # the learner's four losses per call (None: not readable)
    results: list = field(default_factory=list)  # what each call returned
    expected: list = field(default_factory=list)  # the reference's
    teacher_modes: list = field(default_factory=list)
    student_modes: list = field(default_factory=list)
    teacher_grads: bool = False
    teacher_changed: bool = False
    steps: list = field(default_factory=list)
    off_by: list = field(default_factory=list)  # largest difference from the reference's student weights
    variants: dict = field(default_factory=dict)  # the terms of common wrong versions, first call
    off_by_variant: dict = field(default_factory=dict)  # the weights of common wrong updates, first call
    unmoved: bool = False  # call 1 left the student where it was, or where zero gradients take it


def _variants(teacher, student, batch, setting: StepSetting) -> dict[str, dict[str, float]]:
    """The losses that common wrong versions give on the first call (same dropout draws)."""
    T, (input_ids, attention_mask, masked, labels) = setting.temperature, batch

    def run(teacher_ids, student_ids, student_mask=True):
        probe = copy.deepcopy(student).train()
        torch.manual_seed(setting.seed + 1)
        with torch.no_grad():
            t = teacher.eval()(input_ids=teacher_ids, attention_mask=attention_mask, output_hidden_states=True)
            s = probe(input_ids=student_ids, attention_mask=attention_mask if student_mask else None,
                      output_hidden_states=True)  # fmt: skip
            loss = distill.triple_loss(s.logits, t.logits, s.hidden_states[-1], t.hidden_states[-1], labels,
                                       attention_mask, alphas=setting.alpha_dict, temperature=T)  # fmt: skip
        return s, t, loss

    found = {}
    for name, (teacher_ids, student_ids, student_mask) in {
        "unmasked": (input_ids, input_ids, True),  # both models read the original ids
        "teacher unmasked": (input_ids, masked, True),  # only the teacher does
        "student without mask": (masked, masked, False),  # the student attends to the padding
    }.items():  # fmt: skip
        loss = run(teacher_ids, student_ids, student_mask)[2]
        found[name] = {"mlm": loss.mlm.item(), "ce": loss.ce.item()}
    s, t, loss = run(masked, masked)
    real = attention_mask.bool()
    s_rows, t_rows = s.logits[real], t.logits[real]
    ce = loss.ce.item()
    masked_rows = labels != masking.IGNORE_INDEX
    found["ce"] = {
        "no T²": ce / T**2,
        "T instead of T²": ce / T,
        "T² twice": ce * T**2,
        "mean over all entries": ce / s_rows.shape[-1],  # reduction="mean" also divides by V
        "no temperature": distill.distillation_loss(s_rows, t_rows, 1.0).item(),
        "no temperature, T²": distill.distillation_loss(s_rows, t_rows, 1.0).item() * T**2,
        "teacher softened only": float(F.kl_div(F.log_softmax(s_rows, -1), F.log_softmax(t_rows / T, -1),
                                                reduction="batchmean", log_target=True)) * T**2,
        "student softened only": float(F.kl_div(F.log_softmax(s_rows / T, -1), F.log_softmax(t_rows, -1),
                                                reduction="batchmean", log_target=True)) * T**2,
        "reversed": float(kl_rows(F.log_softmax(s_rows / T, -1), F.log_softmax(t_rows / T, -1)).mean()) * T**2,
        "masked positions only": distill.distillation_loss(s.logits[masked_rows], t.logits[masked_rows], T).item(),
    }  # fmt: skip
    width = s.hidden_states[-1].shape[-1]
    found["cos"] = {
        "similarity": 1 - loss.cos.item(),
        "sign flipped": -loss.cos.item(),  # cos - 1: minimising it pushes the directions apart
        "padding included": distill.cosine_loss(s.hidden_states[-1].reshape(-1, width),
                                                t.hidden_states[-1].reshape(-1, width)).item(),
        "logits": distill.cosine_loss(s_rows, t_rows).item(),
    }  # fmt: skip
    return found


def _stepped_without_gradients(student) -> list[torch.Tensor]:
    """The student's weights after one optimizer step on zero gradients (weight decay alone moves them):
    what ``zero_grad(set_to_none=False)`` between ``backward`` and ``step`` leaves."""
    other = copy.deepcopy(student)
    for p in other.parameters():
        p.grad = torch.zeros_like(p)
    _optimizer_of(other).step()
    return _weights(other)


@contextlib.contextmanager
def _one_thread():
    """Tiny models run faster on one thread (on a busy machine, several times faster); put the count back after."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def observe_step(distillation_step: Callable[..., Any], setting: StepSetting) -> StepObserved:
    """Call ``distillation_step(teacher, student, batch, optimizer, alphas, temperature, max_norm)``
    ``setting.calls`` times on one batch, next to the reference on copies under the same seeds."""
    observed = StepObserved(setting)
    with torch.random.fork_rng(devices=[]), _one_thread():
        teacher, student, batch = _tiny_pair(setting)
        reference, reference_teacher = copy.deepcopy(student), copy.deepcopy(teacher)
        optimizer, reference_optimizer = _optimizer_of(student), _optimizer_of(reference)
        observed.variants = _variants(copy.deepcopy(teacher), student, batch, setting)
        for name, changes in (("no clipping", {"max_norm": None}), ("unweighted", {"alphas": {"ce": 1.0, "mlm": 1.0,
                                                                                              "cos": 1.0}})):
            other, other_teacher = copy.deepcopy(student), copy.deepcopy(teacher)
            torch.manual_seed(setting.seed + 1)
            _reference_step(other_teacher, other, batch, _optimizer_of(other), setting, **changes)
            observed.off_by_variant[name] = other  # compared after the learner's first call
        teacher_before, student_before = _weights(teacher), _weights(student)
        without_gradients = _stepped_without_gradients(student)
        teacher_modes, student_modes, steps = [], [], [0]
        hooks = [
            teacher.register_forward_pre_hook(lambda module, args, kwargs: teacher_modes.append(module.training),
                                              with_kwargs=True),
            student.register_forward_pre_hook(lambda module, args, kwargs: student_modes.append(module.training),
                                              with_kwargs=True),
            optimizer.register_step_post_hook(lambda *args: steps.__setitem__(0, steps[0] + 1)),
        ]  # fmt: skip
        try:
            for call in range(setting.calls):
                torch.manual_seed(setting.seed + 1 + call)
                observed.expected.append(_reference_step(reference_teacher, reference, batch, reference_optimizer,
                                                         setting))  # fmt: skip
                teacher_modes.clear(), student_modes.clear()
                steps[0] = 0
                given = tuple(x.clone() for x in batch)
                torch.manual_seed(setting.seed + 1 + call)
                result = distillation_step(teacher, student, given, optimizer, setting.alpha_dict,
                                           setting.temperature, setting.max_norm)  # fmt: skip
                observed.terms.append(_terms_of(result))
                observed.results.append(result)
                observed.teacher_modes.append(list(teacher_modes))
                observed.student_modes.append(list(student_modes))
                observed.steps.append(steps[0])
                observed.off_by.append(_off_by(_weights(student), _weights(reference)))
                if call == 0:
                    now = _weights(student)
                    observed.unmoved = min(_off_by(now, student_before), _off_by(now, without_gradients)) <= 1e-12
                    observed.off_by_variant = {name: _off_by(_weights(student), _weights(other))
                                               for name, other in observed.off_by_variant.items()}  # fmt: skip
                observed.teacher_grads |= any(p.grad is not None and bool(p.grad.abs().sum() > 0)
                                              for p in teacher.parameters())  # fmt: skip
                observed.teacher_changed |= _off_by(_weights(teacher), teacher_before) > 0
        finally:
            for hook in hooks:
                hook.remove()
    return observed


def _loss_numbers(observed: StepObserved, case: Case) -> str | None:
    """What the statement asks each call to return: a dict (or an object) of the four losses, each one number."""
    for call, result in enumerate(observed.results, start=1):
        if not isinstance(result, dict) and not all(hasattr(result, name) for name in TERMS):
            return f"call {call} " + returned(result, "a dict {'total': ..., 'ce': ..., 'mlm': ..., 'cos': ...}")
        for name in TERMS:
            value = result.get(name) if isinstance(result, dict) else getattr(result, name)
            if isinstance(value, numbers.Real) and not isinstance(value, bool):
                continue
            if isinstance(value, torch.Tensor) and value.ndim == 0 and value.is_floating_point():
                continue
            if value is None:
                return f"call {call} returned no loss '{name}': return the four losses, {', '.join(TERMS)}"
            return f"call {call} " + returned(value, "a float", "loss.item()") + f" under the key '{name}'"
    return None


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=STEP_RTOL, abs_tol=1e-12)


def _first_wrong_term(result: StepObserved) -> tuple[int, str] | None:
    """The first (call, term) whose value differs from the reference's, else None."""
    for call, (terms, expected) in enumerate(zip(result.terms, result.expected)):
        for name in ("ce", "mlm", "cos", "total"):
            if not _close(terms[name], expected[name]):
                return call, name
    return None


def compare_distillation_steps(result: Any, expected: Any) -> str | None:
    """What the learner's distillation step did differently from the reference's, in words."""
    if not isinstance(result, StepObserved):
        return "expected the observations of the checker"  # never for a learner
    for call in range(len(result.terms)):
        when = f"in call {call + 1}"
        if result.terms[call] is None:
            return (f"{when} it returned no readable losses: expected a dict (or an object) with the four "
                    f"numbers {', '.join(TERMS)}")
        if not result.teacher_modes[call] or not result.student_modes[call]:
            return f"{when} the teacher or the student was never run"
        if any(result.teacher_modes[call]):
            return f"the teacher ran in train mode {when}"
        if result.teacher_grads:
            return "the teacher's weights received gradients"
        if result.teacher_changed:
            return "the teacher's weights changed"
        if not all(result.student_modes[call]):
            return f"the student ran in eval mode {when}"
        if result.steps[call] != 1:
            return f"the optimizer stepped {result.steps[call]} times {when}, not once"
    wrong = _first_wrong_term(result)
    if wrong is not None:
        call, name = wrong
        return (f"in call {call + 1} the loss `{name}` is {result.terms[call][name]:.6g}, the reference's "
                f"{result.expected[call][name]:.6g}")
    for call, off_by in enumerate(result.off_by):
        if off_by > 1e-9:
            return (f"the losses are right, but after call {call + 1} the student's weights differ from the "
                    f"reference's (by up to {off_by:.3g})")
    return None


def _ce_is(variant: str) -> Callable[[StepObserved, Case], bool]:
    return lambda result, case: _close(result.terms[0]["ce"], result.variants["ce"][variant])


def _cos_is(variant: str) -> Callable[[StepObserved, Case], bool]:
    return lambda result, case: _close(result.terms[0]["cos"], result.variants["cos"][variant])


def _plain_sum_total(result: StepObserved, case: Case) -> bool:
    return any(_close(t["total"], t["ce"] + t["mlm"] + t["cos"]) for t in result.terms)


def _weighted(t: dict, a: dict) -> float:
    return a["ce"] * t["ce"] + a["mlm"] * t["mlm"] + a["cos"] * t["cos"]


_DISTILLATION_STEP = Exercise(
    name="distillation_step",
    call="distillation_step(teacher, student, batch, optimizer, alphas, temperature, max_norm) with a "
    "BertForMaskedLM teacher, a DistilBertForMaskedLM student, batch = (input_ids, attention_mask, masked_ids, "
    "labels), an optimizer over the student's weights, alphas = {'ce': ..., 'mlm': ..., 'cos': ...}, and "
    "expects a dict of the losses {'total', 'ce', 'mlm', 'cos'}",
    compare=compare_distillation_steps,
    returns=_loss_numbers,
    symptoms=(
        Symptom("return the four losses, e.g. {'total': loss.item(), 'ce': ce.item(), 'mlm': mlm.item(), "
                "'cos': cos.item()} (a TripleLoss from distill.triple_loss works too).",
                lambda result, case: any(t is None for t in result.terms)),
        Symptom("run both models on the masked ids: teacher(input_ids=masked_ids, attention_mask=..., "
                "output_hidden_states=True), and the student the same way.",
                lambda result, case: any(not m for m in result.teacher_modes + result.student_modes)),
        Symptom("call teacher.eval() before its forward pass: the teacher came in train mode (after a "
                "fine-tuning, say), and its dropout made its soft targets noisy. A frozen teacher is in eval mode.",
                lambda result, case: any(any(m) for m in result.teacher_modes)),
        Symptom("run the teacher under torch.no_grad(): it is frozen, so its forward pass needs no graph, and "
                "without no_grad the backward pass also computes gradients for all its weights (time and memory "
                "for nothing; an optimizer over them would change the teacher).",
                lambda result, case: result.teacher_grads),
        Symptom("the teacher must not change: only the student's weights are updated (the optimizer you are given "
                "holds the student's).", lambda result, case: result.teacher_changed),
        Symptom("call student.train() before its forward pass: the student came in eval mode, and it learns with "
                "dropout on.", lambda result, case: any(not all(m) for m in result.student_modes)),
        Symptom("call optimizer.step() exactly once per call, after backward (and after clipping).",
                lambda result, case: any(s != 1 for s in result.steps)),
        Symptom("the losses are right but the student's weights did not move (at most weight decay moved them): "
                "optimizer.zero_grad() between backward and step erased the gradients before the step used "
                "them. Call it before backward (or after step): zero_grad, backward, clip, step.",
                lambda result, case: result.unmoved and _close(result.terms[0]["total"],
                                                               result.expected[0]["total"])),
        Symptom("the models read the original input_ids: both must read masked_ids (batch[2]), so that the "
                "masked positions are a puzzle for the student and L_mlm measures something.",
                lambda result, case: _close(result.terms[0]["mlm"], result.variants["unmasked"]["mlm"])),
        Symptom("the teacher read the original input_ids: give it the student's masked_ids (batch[2]) too. "
                "DistilBERT's teacher and student read the same masked batch, so that L_ce and L_cos compare "
                "the two models on the same input; a teacher that sees the hidden tokens gives targets the "
                "student cannot read from its own input.",
                lambda result, case: _close(result.terms[0]["ce"], result.variants["teacher unmasked"]["ce"])),
        Symptom("the student ran without the attention mask: pass attention_mask=... to the student as to the "
                "teacher, else its real tokens attend to the padding and its outputs change with how much "
                "padding the batch has.",
                lambda result, case: _close(result.terms[0]["ce"], result.variants["student without mask"]["ce"])),
        Symptom("L_ce is multiplied by T² twice (T⁴): distill.distillation_loss already includes the factor "
                "temperature ** 2, so do not multiply its result again.", _ce_is("T² twice")),
        Symptom("L_ce uses reduction='mean', which divides the KL's sum by every entry (rows × vocabulary): "
                "use reduction='batchmean', the sum over the vocabulary averaged over the rows (the mathematical "
                "KL per position; torch's documentation says the same of 'mean').", _ce_is("mean over all entries")),
        Symptom("L_ce lacks the factor T²: multiply the KL by temperature ** 2.", _ce_is("no T²")),
        Symptom("L_ce is multiplied by T, not T²: the factor is temperature ** 2.", _ce_is("T instead of T²")),
        Symptom("L_ce uses no temperature: divide both models' logits by T before the softmax.",
                _ce_is("no temperature")),
        Symptom("L_ce uses no temperature: divide both models' logits by T before the softmax.",
                _ce_is("no temperature, T²")),
        Symptom("only the teacher's logits are divided by T in L_ce: divide the student's too.",
                _ce_is("teacher softened only")),
        Symptom("only the student's logits are divided by T in L_ce: divide the teacher's too.",
                _ce_is("student softened only")),
        Symptom("L_ce is the reversed KL, KL(student ‖ teacher): the target is the teacher's distribution, "
                "KL(p_teacher ‖ q_student), as distill.distillation_loss(student_rows, teacher_rows, T) computes.",
                _ce_is("reversed")),
        Symptom("L_ce covers only the masked positions: DistilBERT's covers every real token "
                "(attention_mask == 1), so that the student imitates the teacher everywhere.",
                _ce_is("masked positions only")),
        Symptom("L_cos is the similarity: the loss is 1 − cos, which is 0 when the directions agree.",
                _cos_is("similarity")),
        Symptom("L_cos has its sign flipped: the loss is 1 − cos (0 when the directions agree, never negative), "
                "not cos − 1; minimising cos − 1 pushes the student's hidden states away from the teacher's.",
                _cos_is("sign flipped")),
        Symptom("L_cos includes the padding: take the rows of the real tokens only, hidden[attention_mask == 1].",
                _cos_is("padding included")),
        Symptom("L_cos compares the logits: it compares the last hidden states (output_hidden_states=True, then "
                ".hidden_states[-1]).", _cos_is("logits")),
        Symptom("the total is the plain sum of the terms: weight them, alphas['ce'] * ce + alphas['mlm'] * mlm "
                "+ alphas['cos'] * cos.", _plain_sum_total),
        Symptom("the total is not α_ce·L_ce + α_mlm·L_mlm + α_cos·L_cos of your own three terms.",
                lambda result, case: any(not _close(t["total"], _weighted(t, result.setting.alpha_dict))
                                         for t in result.terms)),
        Symptom("the losses are right but the update is not: clip the gradients' norm to max_norm after "
                "backward and before step, torch.nn.utils.clip_grad_norm_(student.parameters(), max_norm).",
                lambda result, case: result.off_by_variant.get("no clipping", 1) <= 1e-9),
        Symptom("the losses are right but the update is not: call backward on the weighted total, not on the "
                "plain sum of the terms.", lambda result, case: result.off_by_variant.get("unweighted", 1) <= 1e-9),
        Symptom("call 1 was right, later calls are not: call optimizer.zero_grad() in every step, else the "
                "gradients of the earlier steps add up.",
                lambda result, case: result.off_by[0] <= 1e-9 and max(result.off_by) > 1e-9),
    ),
    fallback="teacher.eval() and torch.no_grad() for the teacher, student.train(); both read masked_ids; "
    "L_ce = distill.distillation_loss over the real tokens' logits at temperature T, L_mlm = F.cross_entropy of "
    "the student's logits (B*T, V) and labels, L_cos = 1 - cos of the last hidden states over the real tokens; "
    "total = the alpha-weighted sum; zero_grad, backward, clip to max_norm, step.",
    on_error="batch = (input_ids, attention_mask, masked_ids, labels), each (B, T); the models are Hugging "
    "Face models: call them with input_ids=..., attention_mask=..., output_hidden_states=True and read "
    ".logits (B, T, V) and .hidden_states[-1] (B, T, D).",
)

STEP_CASES = (
    ("T=2, alphas 5/2/1, max_norm=1, 2 calls", StepSetting(2.0, (5.0, 2.0, 1.0), 1.0, "eval", "train", 2, 21)),
    ("T=3, alphas 0.5/0.5/0.25, gradients clipped to 0.05, 2 calls", StepSetting(3.0, (0.5, 0.5, 0.25), 0.05, "eval",
                                                                                 "train", 2, 22)),
    ("the teacher comes in train mode and the student in eval mode: T=1.5, 2 calls",
     StepSetting(1.5, (2.0, 1.0, 3.0), 0.5, "train", "eval", 2, 23)),
)  # fmt: skip


def reference_distillation_step(teacher, student, batch, optimizer, alphas, temperature, max_norm):
    """:func:`course_utils.distill.distillation_step` called as the exercise's function is (all positional)."""
    return distill.distillation_step(teacher, student, batch, optimizer, alphas=alphas, temperature=temperature,
                                     max_norm=max_norm)  # fmt: skip


def check_distillation_step(fn: Callable[..., Any]) -> None:
    """Check a learner's ``distillation_step(teacher, student, batch, optimizer, alphas, temperature, max_norm)``.

    Three cases on a tiny float64 teacher (two layers) and its student (one layer), each of two
    calls on one masked batch, next to :func:`course_utils.distill.distillation_step` on copies
    under the same seeds (the same dropout draws): the teacher in eval mode, without gradients,
    unchanged; the student in train mode, updated by exactly one optimizer step; each of the
    three losses and their weighted total equal to the reference's (relative 1e-7), and the
    student's weights after each call equal to the reference's. Wrong losses are compared with
    the common mistakes (the teacher or both models on the unmasked ids, the student without the
    attention mask, no T², T² twice, T on one side only, the KL's "mean" reduction, the reversed
    KL, masked positions only, the cosine similarity or its sign flipped, padding included,
    unweighted total); wrong updates with a step without clipping, a backward of the unweighted
    sum, and a step that found no gradients (``zero_grad`` between ``backward`` and ``step``).
    """
    require_callable(_DISTILLATION_STEP.name, fn)
    cases = [Case(name, (setting,), None) for name, setting in STEP_CASES]

    learner = Tracked(fn)  # a function that returns on its first calls and then raises is not finished

    def watched(setting: StepSetting) -> StepObserved:
        return observe_step(learner, setting)

    run_checks(_DISTILLATION_STEP, watched, cases, learner=learner)
