"""Tests of the checkers of lesson 07: check_distillation_loss and check_layer_map.

Every correct version passes (F.kl_div, nn.KLDivLoss, the formula by hand, log_target=True, the
cross-entropy minus the entropy, float64, in-place division); each wrong version a learner writes
is rejected with the hint that names its mistake; the stub prints one line; odd answers never
crash the checker.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn
from torch.nn import functional as F

from course_utils import checks, distill, students
from tests.checker_cases import rejects as _rejects
from tests.checker_cases import stub as _stub

# --------------------------------------------------------------------------------------------
# check_distillation_loss

LOSS_PASS = "✓ distillation_loss: all 7 cases pass.\n"


def _kl_div(s, t, T):
    return F.kl_div(F.log_softmax(s / T, dim=-1), F.softmax(t / T, dim=-1), reduction="batchmean") * T**2


def _module(s, t, T):
    return nn.KLDivLoss(reduction="batchmean")(F.log_softmax(s / T, dim=1), F.softmax(t / T, dim=1)) * T * T


def _by_hand(s, t, T):
    log_p, log_q = F.log_softmax(t / T, -1), F.log_softmax(s / T, -1)
    return T**2 * (log_p.exp() * (log_p - log_q)).sum(dim=1).mean()


def _log_target(s, t, T):
    return T**2 * F.kl_div(F.log_softmax(s / T, -1), F.log_softmax(t / T, -1), reduction="batchmean", log_target=True)


def _cross_entropy_minus_entropy(s, t, T):
    p = F.softmax(t / T, -1)
    cross_entropy = F.cross_entropy(s / T, p)  # soft targets, averaged over rows
    entropy = -(p * F.log_softmax(t / T, -1)).sum(-1).mean()
    return (cross_entropy - entropy) * T**2


def distillation_loss_in_place(s, t, T):
    t /= T  # the teacher's logits, divided in place: the caller's tensor changes
    return F.kl_div((s / T).log_softmax(-1), t.softmax(-1), reduction="sum") / s.shape[0] * T**2


def _float64_python_number(s, t, T):
    return float(_kl_div(s.double(), t.double(), T))


CORRECT_LOSSES = {
    "F.kl_div batchmean": _kl_div,
    "nn.KLDivLoss": _module,
    "by hand": _by_hand,
    "log_target=True": _log_target,
    "cross-entropy minus the teacher's entropy": _cross_entropy_minus_entropy,
    "the package's reference": distill.distillation_loss,
}


@pytest.mark.parametrize("implementation", CORRECT_LOSSES.values(), ids=CORRECT_LOSSES.keys())
def test_check_distillation_loss_accepts_correct_implementations(implementation, capsys):
    assert checks.check_distillation_loss(implementation) is None
    assert capsys.readouterr().out == LOSS_PASS


def _kl(s, t, T, reduction="batchmean"):
    return F.kl_div(F.log_softmax(s / T, -1), F.softmax(t / T, -1), reduction=reduction)


WRONG_LOSSES = {
    "no T squared": (lambda s, t, T: _kl(s, t, T), "without the factor T²"),
    "T instead of T squared": (lambda s, t, T: _kl(s, t, T) * T, "T · KL"),
    "reversed KL": (
        lambda s, t, T: F.kl_div(F.log_softmax(t / T, -1), F.softmax(s / T, -1), reduction="batchmean") * T**2,
        "reversed",
    ),  # fmt: skip
    "mean over all elements": (lambda s, t, T: _kl(s, t, T, "mean") * T**2, "reduction='batchmean'"),
    "sum over rows": (lambda s, t, T: _kl(s, t, T, "sum") * T**2, r"reduction='sum'"),
    "logits not divided by T": (lambda s, t, T: _kl(s, t, 1.0) * T**2, "not divided by the temperature"),
    "only the teacher divided": (
        lambda s, t, T: F.kl_div(F.log_softmax(s, -1), F.softmax(t / T, -1), reduction="batchmean") * T**2,
        "only the teacher",
    ),
    "only the student divided": (
        lambda s, t, T: F.kl_div(F.log_softmax(s / T, -1), F.softmax(t, -1), reduction="batchmean") * T**2,
        "only the student",
    ),
    "log-probabilities as target without log_target": (
        lambda s, t, T: F.kl_div(F.log_softmax(s / T, -1), F.log_softmax(t / T, -1), reduction="batchmean") * T**2,
        "log_target=True",
    ),
    "softmax as the input": (
        lambda s, t, T: F.kl_div(F.softmax(s / T, -1), F.softmax(t / T, -1), reduction="batchmean") * T**2,
        "log-probabilities as its input",
    ),
    "cross-entropy with soft targets": (
        lambda s, t, T: F.cross_entropy(s / T, F.softmax(t / T, -1)) * T**2,
        "cross-entropy with soft targets.*entropy",
    ),
    "softmax over the rows": (
        lambda s, t, T: F.kl_div(F.log_softmax(s / T, 0), F.softmax(t / T, 0), reduction="batchmean") * T**2,
        "wrong axis",
    ),
    "naive log of softmax": (
        lambda s, t, T: (
            T**2
            * (F.softmax(t / T, -1) * (torch.log(F.softmax(t / T, -1)) - torch.log(F.softmax(s / T, -1))))
            .sum(-1)
            .mean()
        ),
        "large logits.*log_softmax",
    ),
    "one value per row": (lambda s, t, T: _kl(s, t, T, "none").sum(-1) * T**2, "one value per row"),
    "no reduction at all": (lambda s, t, T: _kl(s, t, T, "none") * T**2, "return one number"),
    "a python float (.item())": (_float64_python_number, r"returned a float; return a 0-d torch tensor"),
    "the student's logits divided in place": (
        lambda s, t, T: (s.__itruediv__(T), _kl_div(s, t / T, 1.0))[1],
        r"raised RuntimeError.*in place \(s /= T\).*s / T",
    ),
    "a detached tensor": (lambda s, t, T: _kl_div(s, t, T).detach(), r"cut from the autograd graph"),
    "the teacher's side from the student's logits": (
        lambda s, t, T: _kl_div(s, t, T) + 0 * (s * s.detach()).sum() + (s - s.detach()).sum() * 1e-3,
        r"its gradient with respect to the student's logits differs",
    ),
}


@pytest.mark.filterwarnings("ignore:reduction. 'mean' divides the total loss:UserWarning")  # torch's, on purpose
@pytest.mark.parametrize("implementation, hint", WRONG_LOSSES.values(), ids=WRONG_LOSSES.keys())
def test_check_distillation_loss_names_the_mistake(implementation, hint, capsys):
    _rejects(checks.check_distillation_loss, implementation, hint, capsys)


def test_the_hint_on_the_cross_entropy_explains_the_constant(capsys):
    """Only the value differs from the KL (by T² H(p)); the gradients are the KL's: the hint says so."""
    error = _rejects(checks.check_distillation_loss, WRONG_LOSSES["cross-entropy with soft targets"][0],
                     "H\\(p\\)", capsys)  # fmt: skip
    assert "gradients are the same" in str(error.value)


def test_check_distillation_loss_stub_and_odd_answers(capsys):
    assert checks.check_distillation_loss(_stub) is None
    assert capsys.readouterr().out.startswith("○ distillation_loss: not attempted yet.")
    for odd in ("0.5", [0.1, 0.2], None, {"loss": 1.0}):
        with pytest.raises(AssertionError, match="distillation_loss"):
            checks.check_distillation_loss(lambda s, t, T, odd=odd: odd)
    with pytest.raises(AssertionError, match="(?s)raised ZeroDivisionError.*torch tensors"):
        checks.check_distillation_loss(lambda s, t, T: 1 / 0)
    with pytest.raises(TypeError, match="without calling it"):
        checks.check_distillation_loss(0.5)


# --------------------------------------------------------------------------------------------
# check_layer_map

MAP_PASS = "✓ layer_map: all 7 cases pass.\n"

CORRECT_MAPS = {
    "list comprehension": lambda n_t, n_s: [i * (n_t // n_s) for i in range(n_s)],
    "range with a step": lambda n_t, n_s: list(range(0, n_t, n_t // n_s)),
    "a range object": lambda n_t, n_s: range(0, n_t, n_t // n_s),
    "a tuple": lambda n_t, n_s: tuple(range(0, n_t, n_t // n_s)),
    "np.arange": lambda n_t, n_s: np.arange(n_s) * (n_t // n_s),
    "torch.arange": lambda n_t, n_s: torch.arange(0, n_t, n_t // n_s),
    "float steps rounded down": lambda n_t, n_s: [int(i * n_t / n_s) for i in range(n_s)],
    "the package's reference": students.layer_map,
}


@pytest.mark.parametrize("implementation", CORRECT_MAPS.values(), ids=CORRECT_MAPS.keys())
def test_check_layer_map_accepts_correct_implementations(implementation, capsys):
    assert checks.check_layer_map(implementation) is None
    assert capsys.readouterr().out == MAP_PASS


WRONG_MAPS = {
    "starting at 1": (lambda n_t, n_s: list(range(1, n_t, n_t // n_s)), "start at 1"),
    "the last of each group": (lambda n_t, n_s: [(i + 1) * (n_t // n_s) - 1 for i in range(n_s)][::1], "start at 1"),
    "last layers only": (lambda n_t, n_s: list(range(n_t - n_s, n_t)), "last layers only"),
    "first half only": (lambda n_t, n_s: list(range(n_s)), "first layers only"),
    "always a step of 2, cut": (lambda n_t, n_s: list(range(0, n_t, 2))[:n_s], "n_teacher_layers // n_student_layers"),
    "always a step of 2": (lambda n_t, n_s: list(range(0, n_t, 2)), "n_teacher_layers // n_student_layers"),
    "one too many": (lambda n_t, n_s: list(range(0, n_t + 1, n_t // n_s)), "as many indices"),
    "counting from the top": (lambda n_t, n_s: [n_t - 1 - i * (n_t // n_s) for i in range(n_s)], "i \\* \\("),
}


@pytest.mark.parametrize("implementation, hint", WRONG_MAPS.values(), ids=WRONG_MAPS.keys())
def test_check_layer_map_names_the_mistake(implementation, hint, capsys):
    _rejects(checks.check_layer_map, implementation, hint, capsys)


def test_check_layer_map_stub_and_odd_answers(capsys):
    assert checks.check_layer_map(_stub) is None
    assert capsys.readouterr().out.startswith("○ layer_map: not attempted yet.")
    for odd in (3, "0, 2, 4", [0.5, 2, 4], [True, 2, 4], [[0, 2, 4]], None):
        with pytest.raises(AssertionError, match="layer_map"):
            checks.check_layer_map(lambda n_t, n_s, odd=odd: odd)
    with pytest.raises(TypeError, match="without calling it"):
        checks.check_layer_map([0, 2, 4])
