"""Checkers of lesson 07: the distillation loss and the student's layer map.

The references are :func:`course_utils.distill.distillation_loss` and :func:`course_utils.students.layer_map`;
one distillation step is checked by :mod:`course_utils.checks.distillation_step`.
"""

from __future__ import annotations

import numbers
from typing import Any, Callable

import numpy as np
import torch
from torch.nn import functional as F

from .. import distill, students
from .engine import Case, Exercise, Mistake, Symptom, require_callable, returned, run_checks
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
        value, expected = float(array.reshape(())), float(as_float_array(expected).reshape(-1)[0])
        if not np.isfinite(value):
            return f"the result is {value}"
        if not np.isclose(value, expected, rtol=rtol, atol=atol):
            return f"the result is {value:.6g}, not the expected value (difference {abs(value - expected):.3g})"
        return None

    return compare


def kl_rows(p_log: torch.Tensor, q_log: torch.Tensor) -> torch.Tensor:
    """``KL(p ‖ q)`` of every row, from log-probabilities ``(N, V)`` -> ``(N,)``."""
    return (p_log.exp() * (p_log - q_log)).sum(-1)


def _logs(s, t, T):
    return F.log_softmax(s / T, dim=-1), F.log_softmax(t / T, dim=-1)


def _cross_entropy_soft(s, t, T):
    log_q, log_p = _logs(s, t, T)
    return -(log_p.exp() * log_q).sum(-1).mean() * T**2


def _a_loss_tensor(result: Any, case: Case) -> str | None:
    """The next cells back-propagate the loss: a tensor, not a Python number."""
    if isinstance(result, torch.Tensor):
        return None
    return returned(result, "a 0-d torch tensor", "training calls .backward() on the loss; .item() and float() cut it "
                    "from the graph")


def _backward_like_training(result: Any, case: Case, args: tuple) -> str | None:
    """What training does with the loss: backward to the student's logits. Their gradient must be the reference's."""
    student, teacher, temperature = args
    if not result.requires_grad:
        return ("the result is cut from the autograd graph (.detach(), numpy, torch.no_grad()?), so no gradient "
                "reaches the student's logits: training calls .backward() on this loss.")
    try:
        (got,) = torch.autograd.grad(result.sum(), student, allow_unused=True)
    except RuntimeError as error:
        return f"backward through the result fails, as training runs it: {str(error).splitlines()[0][:200]}"
    if got is None:
        return "no gradient reaches the student's logits: is a part of the loss detached from them?"
    fresh = student.detach().clone().requires_grad_()
    (want,) = torch.autograd.grad(distill.distillation_loss(fresh, teacher, temperature), fresh)
    if not torch.allclose(got.double(), want.double(), rtol=1e-4, atol=1e-6):
        largest = float((got.double() - want.double()).abs().max())
        return (f"the value is right, but its gradient with respect to the student's logits differs from the "
                f"reference's (largest difference {largest:.3g}): is the teacher's side computed from the "
                "student's logits, or a part detached?")
    return None


_DISTILLATION_LOSS = Exercise(
    name="distillation_loss",
    call="distillation_loss(student_logits, teacher_logits, temperature) with two torch tensors (N, V) "
    "and a number T > 0, and expects a single number (a 0-d tensor)",
    compare=close_scalars(),
    returns=_a_loss_tensor,
    follow=_backward_like_training,
    mistakes=(
        Mistake(
            "the result is KL(p ‖ q) without the factor T²: multiply by temperature ** 2. Softening by T "
            "shrinks the gradients by about 1/T²; the factor gives them back their size (Hinton et al. 2015).",
            lambda s, t, T: kl_rows(*reversed(_logs(s, t, T))).mean(),
        ),
        Mistake(
            "the result is T · KL: the factor is T² (temperature ** 2), not T.",
            lambda s, t, T: kl_rows(*reversed(_logs(s, t, T))).mean() * T,
        ),
        Mistake(
            "the KL is reversed: this is KL(student ‖ teacher). The target distribution is the teacher's, "
            "KL(p_teacher ‖ q_student) = Σ p (log p − log q). With F.kl_div(input, target), the input is the "
            "student's log-probabilities and the target the teacher's distribution.",
            lambda s, t, T: kl_rows(*_logs(s, t, T)).mean() * T**2,
        ),
        Mistake(
            "the result is averaged over all N × V entries: that is F.kl_div's reduction='mean'. The KL of a row "
            "is a sum over the vocabulary; average only over the rows: reduction='batchmean'.",
            lambda s, t, T: kl_rows(*reversed(_logs(s, t, T))).sum() / s.numel() * T**2,
        ),
        Mistake(
            "the result is summed over the rows (reduction='sum'): average over the N rows, reduction='batchmean'.",
            lambda s, t, T: kl_rows(*reversed(_logs(s, t, T))).sum() * T**2,
        ),
        Mistake(
            "the logits are not divided by the temperature: soften both distributions, softmax(logits / T), "
            "for the student and for the teacher.",
            lambda s, t, T: kl_rows(*reversed(_logs(s, t, 1.0))).mean() * T**2,
        ),
        Mistake(
            "only the teacher's logits are divided by T: divide the student's by T as well.",
            lambda s, t, T: kl_rows(F.log_softmax(t / T, -1), F.log_softmax(s, -1)).mean() * T**2,
        ),
        Mistake(
            "only the student's logits are divided by T: divide the teacher's by T as well.",
            lambda s, t, T: kl_rows(F.log_softmax(t, -1), F.log_softmax(s / T, -1)).mean() * T**2,
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
            lambda s, t, T: kl_rows(F.log_softmax(t / T, 0), F.log_softmax(s / T, 0)).sum() / s.shape[0] * T**2,
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
    error_hints=(
        ("in-place operation",
         "do not divide the logits in place (s /= T): the student's logits are a model's output, which training "
         "back-propagates through. Write s / T, a new tensor."),
    ),
)


def _nan(result) -> bool:
    array = as_float_array(result)
    return array is not None and bool(np.any(np.isnan(array)))


def _inf(result) -> bool:
    array = as_float_array(result)
    return array is not None and bool(np.any(np.isinf(array)))


def _moderate(case: Case) -> bool:
    return float(case.args[0].detach().abs().max()) < 20 and float(case.args[1].detach().abs().max()) < 20


def _loss_case(name: str, generator: torch.Generator, n: int, v: int, temperature: float, *, scale: float = 2.0,
               same: bool = False, dtype=torch.float32) -> Case:  # fmt: skip
    teacher = scale * torch.randn(n, v, generator=generator, dtype=torch.float64)
    student = teacher.clone() if same else scale * torch.randn(n, v, generator=generator, dtype=torch.float64)
    expected = float(distill.distillation_loss(student, teacher, temperature))
    # the student's logits require their gradient, as a student's output does: the loss is back-propagated
    return Case(name, (student.to(dtype).requires_grad_(), teacher.to(dtype), temperature), expected)


def check_distillation_loss(fn: Callable[..., Any]) -> None:
    """Check a learner's ``distillation_loss(student_logits, teacher_logits, temperature) -> scalar``.

    The reference is :func:`course_utils.distill.distillation_loss`: ``T² · KL(softmax(t/T) ‖ softmax(s/T))``
    averaged over the rows, returned as a 0-d torch tensor through which backward runs (as training
    runs it): the student's logits require their gradient, and it must be the reference's. Logits
    are float32 torch tensors ``(N, V)`` (float64 in one case). Seven
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

    The reference is :func:`course_utils.students.layer_map`: student layer ``i`` starts from teacher
    layer ``i * n_teacher // n_student`` ("one layer out of two" for half the depth). Seven cases,
    all with ``n_teacher`` a multiple of ``n_student`` (the step is then unambiguous): 6 -> 3,
    12 -> 6, 4 -> 2, 2 -> 1, 6 -> 2, 12 -> 4, and 6 -> 6 (a copy of every layer).
    """
    sizes = [(6, 3), (12, 6), (4, 2), (2, 1), (6, 2), (12, 4), (6, 6)]
    cases = [Case(f"n_teacher_layers={t}, n_student_layers={s}", (t, s), students.layer_map(t, s)) for t, s in sizes]
    run_checks(_LAYER_MAP, fn, cases)
