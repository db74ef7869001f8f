"""Tests of the checker of lesson 02's training step: check_train_step.

Every correct version passes (F.cross_entropy or nn.CrossEntropyLoss or log_softmax + nll_loss,
zero_grad first or after the step, set_to_none or not, a returned numpy float); each wrong version
a learner writes (no zero_grad, no model.train(), model.eval(), a detached loss, no step, two steps,
its own optimiser, the tensor returned, a summed loss, the loss after the update, gradient ascent,
zero_grad between backward and step, no_grad around the forward, backward called twice, with or
without retain_graph) is rejected with the hint that
names its mistake; the stub prints one line; the reference's losses go down on every case.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch.nn import functional as F

from course_utils import checks, training
from course_utils.checks import training as training_checks
from tests.checker_cases import rejects as _rejects
from tests.checker_cases import stub as _stub

PASS = "✓ train_step: all 5 cases pass.\n"


def _zero_grad_last(model, batch, optimizer):
    inputs, targets = batch
    model.train()
    loss = F.cross_entropy(model(inputs), targets)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=False)
    return loss.item()


def _module_loss(model, batch, optimizer):
    model.train(True)
    optimizer.zero_grad()
    loss = torch.nn.CrossEntropyLoss()(model(batch[0]), batch[1])
    loss.backward()
    optimizer.step()
    return float(loss)


def _nll(model, batch, optimizer):
    inputs, targets = batch
    model.train()
    for p in model.parameters():  # zeroing by hand
        p.grad = None
    log_probabilities = F.log_softmax(model(inputs), dim=-1)  # (B, C)
    loss = F.nll_loss(log_probabilities, targets)
    loss.backward()
    optimizer.step()
    return np.float64(loss.detach().numpy())


CORRECT = {
    "the package's reference": training.train_step,
    "zero_grad after the step": _zero_grad_last,
    "nn.CrossEntropyLoss, float(loss)": _module_loss,
    "log_softmax + nll_loss, grads set to None by hand, a numpy float": _nll,
}


@pytest.mark.filterwarnings("ignore:Converting a tensor with requires_grad=True:UserWarning")  # float(loss)
@pytest.mark.parametrize("implementation", CORRECT.values(), ids=CORRECT.keys())
def test_check_train_step_accepts_correct_implementations(implementation, capsys):
    assert checks.check_train_step(implementation) is None
    assert capsys.readouterr().out == PASS


def _step(*, train=True, zero=True, detach=False, steps=1, returned="item", reduction="mean", sign=1.0,
          zero_between=False, no_grad=False, own_optimizer=False, eval_mode=False, backwards=1,
          retain_graph=False):  # fmt: skip
    """A train_step with one mistake switched on."""

    def train_step(model, batch, optimizer):
        inputs, targets = batch
        if train:
            model.train()
        if eval_mode:
            model.eval()
        if own_optimizer:
            optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
        if zero:
            optimizer.zero_grad()
        if no_grad:
            with torch.no_grad():
                logits = model(inputs)
        else:
            logits = model(inputs)
        loss = sign * F.cross_entropy(logits, targets, reduction=reduction)
        (loss.detach().requires_grad_() if detach else loss).backward(retain_graph=retain_graph)
        for _ in range(backwards - 1):
            loss.backward()
        if zero_between:
            optimizer.zero_grad()
        for _ in range(steps):
            optimizer.step()
        if returned == "tensor":
            return loss
        if returned == "after":
            with torch.no_grad():
                return F.cross_entropy(model(inputs), targets).item()
        return loss.item()

    return train_step


def _item_backward(model, batch, optimizer):
    model.train()
    optimizer.zero_grad()
    loss = F.cross_entropy(model(batch[0]), batch[1]).item()
    loss.backward()
    optimizer.step()
    return loss


WRONG = {
    "no zero_grad": (_step(zero=False), "call 1 was right.*gradients add up across calls.*zero_grad"),
    "no model.train()": (_step(train=False), "ran in eval mode.*model.train\\(\\).*dropout was off"),
    "model.eval() in the step": (_step(eval_mode=True), "ran in eval mode.*model.train\\(\\)"),
    "a detached copy of the loss backpropagated": (_step(detach=True), "did not change.*loss.detach\\(\\)"),
    "backward on loss.item()": (_item_backward, "raised AttributeError.*cut from its graph"),
    "the forward under no_grad": (_step(no_grad=True), "raised RuntimeError.*does not require grad.*no_grad"),
    "no optimizer.step()": (_step(steps=0), "stepped 0 times.*call optimizer.step\\(\\) once"),
    "two steps": (_step(steps=2), "stepped 2 times.*more than once"),
    "an optimizer of its own": (_step(own_optimizer=True), "never stepped, yet the weights moved"),
    "the tensor returned": (_step(returned="tensor"), r"call 1 returned a torch tensor; return a float \(.*loss.item\(\)\)"),
    "the loss summed over the batch": (_step(reduction="sum"), "summed over the batch"),
    "the loss after the update returned": (_step(returned="after"), "before that update.*not a loss recomputed"),
    "gradient ascent": (_step(sign=-1.0), "the loss went up"),
    "zero_grad between backward and step": (_step(zero_between=True), "did not change.*zero_grad\\(\\) between"),
    "backward called twice": (
        _step(backwards=2),
        "raised RuntimeError.*backward through the graph a second time.*"
        "Hint: loss.backward\\(\\) ran twice.*once per step",
    ),
    "backward called twice, the graph retained": (
        _step(backwards=2, retain_graph=True),
        "twice the gradient.*loss.backward\\(\\) ran twice.*once per step",
    ),
}


@pytest.mark.parametrize("implementation, hint", WRONG.values(), ids=WRONG.keys())
def test_check_train_step_names_the_mistake(implementation, hint, capsys):
    _rejects(checks.check_train_step, implementation, hint, capsys)


def test_a_step_that_changes_the_batch_is_refused(capsys):
    def targets_in_place(model, batch, optimizer):
        batch[1].fill_(0)  # every target becomes class 0, in the caller's tensor too
        return training.train_step(model, batch, optimizer)

    _rejects(checks.check_train_step, targets_in_place, "changed in place.*do not change the batch", capsys)


def test_check_train_step_stub_and_odd_answers(capsys):
    assert checks.check_train_step(_stub) is None
    assert capsys.readouterr().out.startswith("○ train_step: not attempted yet.")
    for odd in ("0.5", [0.1], None, {"loss": 1.0}):
        with pytest.raises(AssertionError, match="train_step"):
            checks.check_train_step(lambda model, batch, optimizer, odd=odd: odd)
    with pytest.raises(TypeError, match="without calling it"):
        checks.check_train_step(0.5)


@pytest.mark.parametrize("name, setting", training_checks.SETTINGS, ids=[n for n, _ in training_checks.SETTINGS])
def test_the_reference_lowers_the_loss_on_every_case(name, setting):
    """The checker's claim 'the loss goes down' is a property of every case, not of one seed."""
    observed = training_checks.observe(training.train_step, setting)
    before, after = observed.eval_loss
    assert after < before
    assert all(steps == 1 for steps in observed.steps) and all(observed.moved)
    assert max(observed.off_by) <= 0  # the reference against itself: the same weights, exactly


def test_the_checker_restores_the_random_generator():
    state = torch.get_rng_state()
    checks.check_train_step(training.train_step)
    assert torch.equal(torch.get_rng_state(), state)


def test_train_step_refuses_a_batch_that_is_not_a_pair():
    model = torch.nn.Linear(3, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    with pytest.raises(TypeError, match="expected batch = \\(inputs, targets\\), a pair, got tuple of length 3"):
        training.train_step(model, (torch.zeros(1, 3), torch.zeros(1), 0), optimizer)
