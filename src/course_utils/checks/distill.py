"""Checkers of lesson 07: the distillation loss, the student's layer map and one distillation step.

The references are :func:`course_utils.distill.distillation_loss`, :func:`course_utils.distill.layer_map`
and :func:`course_utils.distill.distillation_step`.
"""

from __future__ import annotations

import contextlib
import copy
import math
import numbers
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import torch
from torch.nn import functional as F

from .. import distill, masking
from .engine import Case, Exercise, Mistake, Symptom, require_callable, run_checks
from .values import as_float_array, describe

# --------------------------------------------------------------------------------------------
# The distillation loss


def close_scalars(*, rtol: float = 1e-4, atol: float = 1e-6) -> Callable[[Any, Any], "str | None"]:
    """A comparison of one number (a 0-d tensor, a float, a 1-element array) with the reference."""

    def compare(result: Any, expected: Any) -> str | None:
        array = as_float_array(result)
        if array is None:
            return f"expected a number (a 0-d tensor), got {describe(result)}"
        if array.size != 1:
            return f"expected a single number (a 0-d tensor), got {describe(result)}"
        value, expected = float(array.reshape(())), float(np.asarray(expected, dtype=np.float64))
        if not np.isfinite(value):
            return f"the result is {value}"
        if not np.isclose(value, expected, rtol=rtol, atol=atol):
            return f"the result is {value:.6g}, not the expected value (difference {abs(value - expected):.3g})"
        return None

    return compare


def _kl_rows(p_log: torch.Tensor, q_log: torch.Tensor) -> torch.Tensor:
    """``KL(p ‖ q)`` of every row, from log-probabilities ``(N, V)`` -> ``(N,)``."""
    return (p_log.exp() * (p_log - q_log)).sum(-1)


def _logs(s, t, T):
    return F.log_softmax(s / T, dim=-1), F.log_softmax(t / T, dim=-1)


def _cross_entropy_soft(s, t, T):
    log_q, log_p = _logs(s, t, T)
    return -(log_p.exp() * log_q).sum(-1).mean() * T**2


_DISTILLATION_LOSS = Exercise(
    name="distillation_loss",
    call="distillation_loss(student_logits, teacher_logits, temperature) with two torch tensors (N, V) "
    "and a number T > 0, and expects a single number (a 0-d tensor)",
    compare=close_scalars(),
    mistakes=(
        Mistake(
            "the result is KL(p ‖ q) without the factor T²: multiply by temperature ** 2. Softening by T "
            "shrinks the gradients by about 1/T²; the factor gives them back their size (Hinton et al. 2015).",
            lambda s, t, T: _kl_rows(*reversed(_logs(s, t, T))).mean(),
        ),
        Mistake(
            "the result is T · KL: the factor is T² (temperature ** 2), not T.",
            lambda s, t, T: _kl_rows(*reversed(_logs(s, t, T))).mean() * T,
        ),
        Mistake(
            "the KL is reversed: this is KL(student ‖ teacher). The target distribution is the teacher's, "
            "KL(p_teacher ‖ q_student) = Σ p (log p − log q). With F.kl_div(input, target), the input is the "
            "student's log-probabilities and the target the teacher's distribution.",
            lambda s, t, T: _kl_rows(*_logs(s, t, T)).mean() * T**2,
        ),
        Mistake(
            "the result is averaged over all N × V entries: that is F.kl_div's reduction='mean'. The KL of a row "
            "is a sum over the vocabulary; average only over the rows: reduction='batchmean'.",
            lambda s, t, T: _kl_rows(*reversed(_logs(s, t, T))).sum() / s.numel() * T**2,
        ),
        Mistake(
            "the result is summed over the rows (reduction='sum'): average over the N rows, reduction='batchmean'.",
            lambda s, t, T: _kl_rows(*reversed(_logs(s, t, T))).sum() * T**2,
        ),
        Mistake(
            "the logits are not divided by the temperature: soften both distributions, softmax(logits / T), "
            "for the student and for the teacher.",
            lambda s, t, T: _kl_rows(*reversed(_logs(s, t, 1.0))).mean() * T**2,
        ),
        Mistake(
            "only the teacher's logits are divided by T: divide the student's by T as well.",
            lambda s, t, T: _kl_rows(F.log_softmax(t / T, -1), F.log_softmax(s, -1)).mean() * T**2,
        ),
        Mistake(
            "only the student's logits are divided by T: divide the teacher's by T as well.",
            lambda s, t, T: _kl_rows(F.log_softmax(t, -1), F.log_softmax(s / T, -1)).mean() * T**2,
        ),
        Mistake(
            "F.kl_div expects log-probabilities as its input: give it F.log_softmax(student_logits / T, dim=-1), "
            "not the softmax.",
            lambda s, t, T: F.kl_div(F.softmax(s / T, -1), F.softmax(t / T, -1), reduction="batchmean") * T**2,
        ),
        Mistake(
            "this is the cross-entropy with soft targets, −Σ p log q: it equals the KL plus the teacher's "
            "entropy H(p) (times T²). The gradients are the same, but the value is not 0 when the student "
            "matches the teacher; the exercise asks for the KL: subtract the entropy, or use "
            "F.kl_div(log_q, p, reduction='batchmean').",
            _cross_entropy_soft,
        ),
        Mistake(
            "the softmax runs over the wrong axis: the distributions are over the vocabulary, the last axis "
            "(dim=-1), one per row.",
            lambda s, t, T: _kl_rows(F.log_softmax(t / T, 0), F.log_softmax(s / T, 0)).sum() / s.shape[0] * T**2,
        ),
    ),
    symptoms=(
        Symptom(
            "the result is nan: F.kl_div(input, target) takes the target as probabilities unless "
            "log_target=True. Give it F.softmax(teacher_logits / T, dim=-1), or log-probabilities with "
            "log_target=True.",
            lambda result, case: _nan(result) and _moderate(case),
        ),
        Symptom(
            "the result is nan or inf for large logits: torch.log(torch.softmax(...)) underflows to log(0). "
            "Use F.log_softmax, which is computed stably.",
            lambda result, case: _nan(result) or _inf(result),
        ),
        Symptom(
            "you returned one value per row: average them over the rows (the KL of a row is summed over the "
            "vocabulary, then the rows are averaged: reduction='batchmean').",
            lambda result, case: as_float_array(result).shape == (case.args[0].shape[0],) and case.args[0].shape[0] > 1,
        ),
        Symptom(
            "return one number: the KL summed over the vocabulary and averaged over the rows.",
            lambda result, case: as_float_array(result).size > 1,
        ),
        Symptom(
            "the result is negative: a KL divergence never is. Check the order: Σ p (log p − log q), p the teacher's.",
            lambda result, case: float(as_float_array(result).reshape(-1)[0]) < -1e-6,
        ),
    ),
    fallback="compare with T² · mean over rows of Σ_v p_v (log p_v − log q_v), where p = softmax(teacher / T) "
    "and q = softmax(student / T).",
    on_error="the logits are torch tensors (N, V): use torch functions (F.log_softmax(x / T, dim=-1), F.kl_div).",
)


def _nan(result) -> bool:
    array = as_float_array(result)
    return array is not None and bool(np.any(np.isnan(array)))


def _inf(result) -> bool:
    array = as_float_array(result)
    return array is not None and bool(np.any(np.isinf(array)))


def _moderate(case: Case) -> bool:
    return float(case.args[0].abs().max()) < 20 and float(case.args[1].abs().max()) < 20


def _loss_case(name: str, generator: torch.Generator, n: int, v: int, temperature: float, *, scale: float = 2.0,
               same: bool = False, dtype=torch.float32) -> Case:  # fmt: skip
    teacher = scale * torch.randn(n, v, generator=generator, dtype=torch.float64)
    student = teacher.clone() if same else scale * torch.randn(n, v, generator=generator, dtype=torch.float64)
    expected = float(distill.distillation_loss(student, teacher, temperature))
    return Case(name, (student.to(dtype), teacher.to(dtype), temperature), expected)


def check_distillation_loss(fn: Callable[..., Any]) -> None:
    """Check a learner's ``distillation_loss(student_logits, teacher_logits, temperature) -> scalar``.

    The reference is :func:`course_utils.distill.distillation_loss`: ``T² · KL(softmax(t/T) ‖ softmax(s/T))``
    averaged over the rows. Logits are float32 torch tensors ``(N, V)`` (float64 in one case). Seven
    cases: ``T = 2`` and ``T = 3`` on non-square logits, ``T = 1``, ``T = 0.5``, a student equal to its
    teacher (the loss is 0), large logits (a naive ``log(softmax)`` overflows), and one row of two
    classes in float64. The cross-entropy with soft targets is rejected: it differs from the KL by
    the teacher's entropy (the same gradients, another value).
    """
    require_callable(_DISTILLATION_LOSS.name, fn)
    generator = torch.Generator().manual_seed(2019)
    cases = [
        _loss_case("random logits: N=4 rows, V=7 classes, T=2", generator, 4, 7, 2.0),
        _loss_case("random logits: N=5, V=10, T=3", generator, 5, 10, 3.0),
        _loss_case("no softening: T=1, N=3, V=6", generator, 3, 6, 1.0),
        _loss_case("sharpening: T=0.5, N=6, V=4", generator, 6, 4, 0.5),
        _loss_case("student equal to its teacher: N=4, V=5, T=2 (the loss is 0)", generator, 4, 5, 2.0, same=True),
        _loss_case("large logits (x 60): N=3, V=8, T=1", generator, 3, 8, 1.0, scale=60.0),
        _loss_case("one row, two classes, float64: T=4", generator, 1, 2, 4.0, dtype=torch.float64),
    ]
    run_checks(_DISTILLATION_LOSS, fn, cases)


# --------------------------------------------------------------------------------------------
# The student's layer map


def equal_layer_lists(result: Any, expected: Any) -> str | None:
    """An exact comparison of lists of layer indices (lists, tuples, ranges, arrays, tensors)."""
    if isinstance(result, (str, bytes)) or isinstance(result, numbers.Number):
        return f"expected a list of layer indices, got {describe(result)}"
    try:
        values = [v.item() if hasattr(v, "item") else v for v in list(result)]
    except TypeError:
        return f"expected a list of layer indices, got {describe(result)}"
    if not all(isinstance(v, numbers.Real) and not isinstance(v, bool) and float(v).is_integer() for v in values):
        return "expected whole numbers (layer indices)"
    values = [int(v) for v in values]
    if len(values) != len(expected):
        return f"expected one teacher layer per student layer, {len(expected)} indices, got {len(values)}"
    if values != list(expected):
        return f"the layers {values} are not the right ones"
    return None


def _stride(n_teacher: int, n_student: int) -> int:
    return n_teacher // n_student


_LAYER_MAP = Exercise(
    name="layer_map",
    call="layer_map(n_teacher_layers, n_student_layers) with two positive integers, and expects a list of "
    "n_student_layers teacher layer indices",
    compare=equal_layer_lists,
    mistakes=(
        Mistake(
            "the layers start at 1: python numbers the teacher's layers from 0, and the student starts from the "
            "first one, layer 0 (then one out of two: 0, 2, 4, ...).",
            lambda n_t, n_s: [1 + i * _stride(n_t, n_s) for i in range(n_s)],
        ),
        Mistake(
            "these are the last layer of each group (1, 3, 5, ...): take the first of each, starting at layer 0.",
            lambda n_t, n_s: [(i + 1) * _stride(n_t, n_s) - 1 for i in range(n_s)],
        ),
        Mistake(
            "these are the teacher's last layers only: DistilBERT takes one layer out of two across the whole "
            "depth, so that the student keeps low and high layers.",
            lambda n_t, n_s: list(range(n_t - n_s, n_t)),
        ),
        Mistake(
            "these are the teacher's first layers only: take one layer out of two across the whole depth "
            "(0, 2, 4, ...), not the bottom half.",
            lambda n_t, n_s: list(range(n_s)),
        ),
        Mistake(
            "the step is always 2: it is n_teacher_layers // n_student_layers (2 only for a student half as deep).",
            lambda n_t, n_s: list(range(0, n_t, 2))[:n_s],
        ),
        Mistake(
            "the step is always 2: it is n_teacher_layers // n_student_layers (2 only for a student half as deep).",
            lambda n_t, n_s: list(range(0, n_t, 2)),
        ),
    ),
    symptoms=(
        Symptom(
            "return as many indices as the student has layers: one teacher layer per student layer.",
            lambda result, case: len(list(result)) != len(case.expected),
        ),
    ),
    fallback="student layer i starts from teacher layer i * (n_teacher_layers // n_student_layers).",
    on_error="the arguments are plain integers; return a list such as [0, 2, 4].",
)


def check_layer_map(fn: Callable[[int, int], Any]) -> None:
    """Check a learner's ``layer_map(n_teacher_layers, n_student_layers) -> list[int]``.

    The reference is :func:`course_utils.distill.layer_map`: student layer ``i`` starts from teacher
    layer ``i * n_teacher // n_student`` ("one layer out of two" for half the depth). Seven cases,
    all with ``n_teacher`` a multiple of ``n_student`` (the step is then unambiguous): 6 -> 3,
    12 -> 6, 4 -> 2, 2 -> 1, 6 -> 2, 12 -> 4, and 6 -> 6 (a copy of every layer).
    """
    sizes = [(6, 3), (12, 6), (4, 2), (2, 1), (6, 2), (12, 4), (6, 6)]
    cases = [Case(f"n_teacher_layers={t}, n_student_layers={s}", (t, s), distill.layer_map(t, s)) for t, s in sizes]
    run_checks(_LAYER_MAP, fn, cases)


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
    student = distill.student_from_teacher(teacher)
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
    expected: list = field(default_factory=list)  # the reference's
    teacher_modes: list = field(default_factory=list)
    student_modes: list = field(default_factory=list)
    teacher_grads: bool = False
    teacher_changed: bool = False
    steps: list = field(default_factory=list)
    off_by: list = field(default_factory=list)  # largest difference from the reference's student weights
    variants: dict = field(default_factory=dict)  # the terms of common wrong versions, first call
    off_by_variant: dict = field(default_factory=dict)  # the weights of common wrong updates, first call


def _variants(teacher, student, batch, setting: StepSetting) -> dict[str, dict[str, float]]:
    """The losses that common wrong versions give on the first call (same dropout draws)."""
    T, (input_ids, attention_mask, masked, labels) = setting.temperature, batch
    found = {}
    for name, ids in (("masked", masked), ("unmasked", input_ids)):
        probe = copy.deepcopy(student).train()
        torch.manual_seed(setting.seed + 1)
        with torch.no_grad():
            t = teacher.eval()(input_ids=ids, attention_mask=attention_mask, output_hidden_states=True)
            s = probe(input_ids=ids, attention_mask=attention_mask, output_hidden_states=True)
            loss = distill.triple_loss(s.logits, t.logits, s.hidden_states[-1], t.hidden_states[-1], labels,
                                       attention_mask, alphas=setting.alpha_dict, temperature=T)  # fmt: skip
        if name == "unmasked":
            found["unmasked"] = {"mlm": loss.mlm.item(), "ce": loss.ce.item()}
            continue
        real = attention_mask.bool()
        s_rows, t_rows = s.logits[real], t.logits[real]
        ce = loss.ce.item()
        masked_rows = labels != masking.IGNORE_INDEX
        found["ce"] = {
            "no T²": ce / T**2,
            "T instead of T²": ce / T,
            "no temperature": distill.distillation_loss(s_rows, t_rows, 1.0).item(),
            "no temperature, T²": distill.distillation_loss(s_rows, t_rows, 1.0).item() * T**2,
            "teacher softened only": float(F.kl_div(F.log_softmax(s_rows, -1), F.log_softmax(t_rows / T, -1),
                                                    reduction="batchmean", log_target=True)) * T**2,
            "student softened only": float(F.kl_div(F.log_softmax(s_rows / T, -1), F.log_softmax(t_rows, -1),
                                                    reduction="batchmean", log_target=True)) * T**2,
            "reversed": float(_kl_rows(F.log_softmax(s_rows / T, -1), F.log_softmax(t_rows / T, -1)).mean()) * T**2,
            "masked positions only": distill.distillation_loss(s.logits[masked_rows], t.logits[masked_rows], T).item(),
        }  # fmt: skip
        width = s.hidden_states[-1].shape[-1]
        found["cos"] = {
            "similarity": 1 - loss.cos.item(),
            "padding included": distill.cosine_loss(s.hidden_states[-1].reshape(-1, width),
                                                    t.hidden_states[-1].reshape(-1, width)).item(),
            "logits": distill.cosine_loss(s_rows, t_rows).item(),
        }  # fmt: skip
    return found


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
        teacher_before = _weights(teacher)
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
                observed.teacher_modes.append(list(teacher_modes))
                observed.student_modes.append(list(student_modes))
                observed.steps.append(steps[0])
                observed.off_by.append(_off_by(_weights(student), _weights(reference)))
                if call == 0:
                    observed.off_by_variant = {name: _off_by(_weights(student), _weights(other))
                                               for name, other in observed.off_by_variant.items()}  # fmt: skip
                observed.teacher_grads |= any(p.grad is not None and bool(p.grad.abs().sum() > 0)
                                              for p in teacher.parameters())  # fmt: skip
                observed.teacher_changed |= _off_by(_weights(teacher), teacher_before) > 0
        finally:
            for hook in hooks:
                hook.remove()
    return observed


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
        Symptom("the models read the original input_ids: both must read masked_ids (batch[2]), so that the "
                "masked positions are a puzzle for the student and L_mlm measures something.",
                lambda result, case: _close(result.terms[0]["mlm"], result.variants["unmasked"]["mlm"])),
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
    the common mistakes (no T², T on one side only, the reversed KL, masked positions only, the
    cosine similarity, padding included, unweighted total); wrong updates with a step without
    clipping and a backward of the unweighted sum.
    """
    require_callable(_DISTILLATION_STEP.name, fn)
    cases = [Case(name, (setting,), None) for name, setting in STEP_CASES]

    def watched(setting: StepSetting) -> StepObserved:
        return observe_step(fn, setting)

    run_checks(_DISTILLATION_STEP, watched, cases)
