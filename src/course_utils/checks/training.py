"""Checker of lesson 02: the training step, ``train_step(model, batch, optimizer) -> float``.

The reference is :func:`course_utils.training.train_step`: model in train mode, forward, the
cross-entropy loss, ``zero_grad``, ``backward``, ``step``, the loss returned as a float.

A training step is checked by what it *does*, not only by what it returns. Each case builds a
small model with dropout (so train and eval mode differ), an optimiser and a fixed batch, calls
the learner's ``train_step`` a few times on that batch, and watches: the mode the model is in
when it runs (a forward pre-hook), how often the optimiser steps (a step post-hook), whether the
weights move, and where they go, compared with the reference run on a copy of the model under
the same random seeds (the same dropout masks). Then:

- the eval-mode loss on the batch must go down over the calls;
- the returned values must be the losses before each update, as floats;
- the weights after every call must be those of the reference, so gradients that accumulate
  over calls (``zero_grad`` missing), a loss cut from its graph before ``backward``
  (``loss.item()``, ``.detach()``), a second ``step``, a second ``backward`` (twice the
  gradient) or an optimiser of the function's own are each found, and named in the hint.

The models are float64, so that every correct way of writing the step (``F.cross_entropy`` or
``nn.CrossEntropyLoss``, ``zero_grad`` first or last, ``set_to_none`` or not) gives the
reference's weights to rounding, and any real mistake differs by far more.
"""

from __future__ import annotations

import copy
import math
import numbers
from dataclasses import dataclass, field
from typing import Any, Callable

import torch

from .. import training
from .engine import Case, Exercise, Symptom, Tracked, require_callable, returned, run_checks
from .values import describe

ATOL, RTOL = 1e-7, 1e-5  # float64 weights: rounding differences are ~1e-15


@dataclass(frozen=True)
class Setting:
    """One case: which model, which optimiser, the mode the model comes in, how many calls."""

    model: str  # "bag": bag of embeddings on ids (B, T); "mlp": two layers on floats (B, F)
    optimizer: str  # "sgd", "momentum" or "adam"
    mode: str  # "train", or "eval" (as after an evaluation)
    calls: int
    batch_size: int
    seed: int


@dataclass
class Observed:
    """What a ``train_step`` did over the calls of one case (one entry per call)."""

    returned: list = field(default_factory=list)  # what each call returned
    losses: list[float] = field(default_factory=list)  # the reference's loss of each call
    modes: list[list[bool]] = field(default_factory=list)  # model.training at each forward
    steps: list[int] = field(default_factory=list)  # optimizer.step() calls
    moved: list[bool] = field(default_factory=list)  # did any weight change?
    off_by: list[float] = field(default_factory=list)  # largest difference from the reference's weights
    off_by_doubled: float = math.inf  # after call 1, from a step on twice the gradient (backward run twice)
    eval_loss: tuple[float, float] = (math.nan, math.nan)  # eval-mode loss before the first call, after the last
    batch_changed: bool = False


def _model(setting: Setting) -> tuple[torch.nn.Module, tuple[torch.Tensor, torch.Tensor]]:
    """A small float64 model with dropout and its fixed batch ``(inputs, targets)``."""
    generator = torch.Generator().manual_seed(setting.seed)
    torch.manual_seed(setting.seed)  # the layers' initial weights
    b = setting.batch_size
    if setting.model == "bag":
        vocab, width, classes, length = 20, 6, 3, 5
        model = torch.nn.Sequential(
            torch.nn.EmbeddingBag(vocab, width, mode="mean"), torch.nn.Dropout(0.3), torch.nn.Linear(width, classes)
        )
        inputs = torch.randint(vocab, (b, length), generator=generator)  # (B, T) ids
    else:
        features, hidden, classes = 5, 8, 4
        model = torch.nn.Sequential(
            torch.nn.Linear(features, hidden), torch.nn.ReLU(), torch.nn.Dropout(0.3), torch.nn.Linear(hidden, classes)
        )
        inputs = torch.randn(b, features, generator=generator, dtype=torch.float64)  # (B, F)
    targets = torch.randint(classes, (b,), generator=generator)  # (B,)
    return model.double().train(setting.mode == "train"), (inputs, targets)


def _optimizer(setting: Setting, model: torch.nn.Module) -> torch.optim.Optimizer:
    if setting.optimizer == "adam":
        return torch.optim.Adam(model.parameters(), lr=0.05)
    momentum = 0.9 if setting.optimizer == "momentum" else 0.0
    return torch.optim.SGD(model.parameters(), lr=0.5, momentum=momentum)


def _weights(model: torch.nn.Module) -> list[torch.Tensor]:
    return [p.detach().clone() for p in model.parameters()]


def _largest_difference(a: list[torch.Tensor], b: list[torch.Tensor]) -> float:
    """Largest ``|a - b|`` beyond the tolerance's share (0 when every weight is within tolerance)."""
    return max(float(((x - y).abs() - RTOL * y.abs()).max()) for x, y in zip(a, b))


@torch.no_grad()
def _eval_loss(model: torch.nn.Module, batch) -> float:
    mode = model.training
    model.eval()
    loss = torch.nn.functional.cross_entropy(model(batch[0]), batch[1]).item()
    model.train(mode)
    return loss


def _doubled_step(model: torch.nn.Module, batch, setting: Setting) -> list[torch.Tensor]:
    """The weights after call 1 of a step whose gradient is twice the loss's (what ``loss.backward()`` run
    twice leaves, the graph retained), on a copy, under call 1's seed; the random generator put back."""
    other = copy.deepcopy(model).train()
    optimizer = _optimizer(setting, other)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(setting.seed + 1)
        loss = torch.nn.functional.cross_entropy(other(batch[0]), batch[1])
        optimizer.zero_grad()
        (2 * loss).backward()  # g + g: exactly 2g in floating point
        optimizer.step()
    return _weights(other)


def observe(train_step: Callable[..., Any], setting: Setting) -> Observed:
    """Call ``train_step(model, batch, optimizer)`` ``setting.calls`` times on one fixed batch and
    watch it, next to :func:`course_utils.training.train_step` on a copy (see the module's doc)."""
    observed = Observed()
    with torch.random.fork_rng(devices=[]):  # dropout draws from torch's generator: put it back after
        model, batch = _model(setting)
        reference = copy.deepcopy(model)
        optimizer, reference_optimizer = _optimizer(setting, model), _optimizer(setting, reference)
        before = _eval_loss(model, batch)
        doubled = _doubled_step(model, batch, setting)
        given = tuple(t.clone() for t in batch)  # the learner's own copy, compared with batch at the end
        modes: list[bool] = []
        steps = [0]
        hooks = [
            model.register_forward_pre_hook(lambda module, args: modes.append(module.training)),
            optimizer.register_step_post_hook(lambda *args: steps.__setitem__(0, steps[0] + 1)),
        ]
        try:
            for call in range(setting.calls):
                start = _weights(model)
                torch.manual_seed(setting.seed + 1 + call)  # the same dropout masks for both
                observed.losses.append(training.train_step(reference, batch, reference_optimizer))
                modes.clear()
                steps[0] = 0
                torch.manual_seed(setting.seed + 1 + call)
                observed.returned.append(train_step(model, given, optimizer))
                observed.modes.append(list(modes))
                observed.steps.append(steps[0])
                now = _weights(model)
                observed.moved.append(any(not torch.equal(x, y) for x, y in zip(start, now)))
                observed.off_by.append(_largest_difference(now, _weights(reference)))
                if call == 0:
                    observed.off_by_doubled = _largest_difference(now, doubled)
        finally:
            for hook in hooks:
                hook.remove()
        observed.eval_loss = (before, _eval_loss(model, batch))
        observed.batch_changed = any(not torch.equal(x, y) for x, y in zip(given, batch))
    return observed


# --------------------------------------------------------------------------------------------
# What differs, and why


def _as_loss(value: Any) -> float | None:
    """``value`` as a float when it is a plain number (a Python or numpy float), else None."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return None
    return float(value)


def _losses_returned(result: Any, case: Case) -> str | None:
    """What the next cells need of each call's return: the loss as a number."""
    for call, value in enumerate(getattr(result, "returned", []), start=1):
        if _as_loss(value) is None:
            return f"call {call} {returned(value, 'a float', 'the loss before the update: loss.item()')}"
    return None


def compare_steps(result: Any, expected: Any) -> str | None:
    """What the learner's step did differently from the reference's, in words; None when nothing."""
    if not isinstance(result, Observed):
        return f"expected the observations of the checker, got {describe(result)}"  # never for a learner
    for call, value in enumerate(result.returned, start=1):
        if _as_loss(value) is None:
            return f"call {call} returned {describe(value)}, not the loss as a Python float"
    if result.batch_changed:
        return "the batch (inputs, targets) was changed in place"
    for call in range(len(result.returned)):
        when = f"in call {call + 1}"
        if not result.modes[call]:
            return f"the model was never run {when}"
        if not all(result.modes[call]):
            return f"the model ran in eval mode {when}"
        if result.steps[call] != 1:
            return f"the optimizer given stepped {result.steps[call]} times {when}, not once"
        if not result.moved[call]:
            return f"the weights did not change {when}"
        if call == 0 and result.off_by[0] > ATOL:
            return f"after call 1 the weights differ from those of one training step (by up to {result.off_by[0]:.3g})"
    before, after = result.eval_loss
    if not after < before:
        return f"the loss on the batch went from {before:.4f} to {after:.4f} over {len(result.returned)} calls"
    for call in range(1, len(result.returned)):
        if result.off_by[call] > ATOL:
            return (f"call 1 was right, but after call {call + 1} the weights differ from those of "
                    f"{call + 1} training steps (by up to {result.off_by[call]:.3g})")
    for call, (value, loss) in enumerate(zip(result.returned, result.losses), start=1):
        if not math.isclose(float(value), loss, rel_tol=1e-6, abs_tol=1e-9):
            return f"call {call} returned {float(value):.6g}; the loss before that update was {loss:.6g}"
    return None


def _first_bad(result: Observed, bad: Callable[[int], bool]) -> bool:
    return any(bad(call) for call in range(len(result.returned)))


_TRAIN_STEP = Exercise(
    name="train_step",
    call="train_step(model, batch, optimizer) with a torch model (dropout inside), batch = (inputs, targets) "
    "(model(inputs) gives logits (B, C); targets (B,) class ids) and a torch optimizer over the model's "
    "weights, several times on the same batch, and expects the loss of each call as a float",
    compare=compare_steps,
    returns=_losses_returned,
    symptoms=(
        Symptom(
            "return loss.item(): a Python float. The tensor `loss` holds the whole computation graph of the "
            "step; a loop that keeps the losses in a list would keep every graph alive.",
            lambda result, case: _first_bad(result, lambda k: isinstance(result.returned[k], torch.Tensor)),
        ),
        Symptom(
            "return the loss, loss.item(): one number.",
            lambda result, case: _first_bad(result, lambda k: _as_loss(result.returned[k]) is None),
        ),
        Symptom(
            "do not change the batch: compute new tensors from it (x = x / 2, not x /= 2).",
            lambda result, case: result.batch_changed,
        ),
        Symptom(
            "call model(inputs), with inputs, targets = batch: the forward pass is the first part of a step.",
            lambda result, case: _first_bad(result, lambda k: not result.modes[k]),
        ),
        Symptom(
            "call model.train() at the start of the step. The model came in eval mode (as after an evaluation, "
            "which calls model.eval()), so its dropout was off while it trained: it learns without the noise "
            "that dropout is there to add, and the loss is not the training loss.",
            lambda result, case: _first_bad(result, lambda k: not all(result.modes[k])),
        ),
        Symptom(
            "the optimizer you are given never stepped, yet the weights moved: use it, optimizer.step(). A new "
            "optimizer made inside train_step starts from nothing every call (Adam's running averages, "
            "momentum and step count are lost), and the caller's optimizer never learns of the steps.",
            lambda result, case: _first_bad(result, lambda k: result.steps[k] == 0 and result.moved[k]),
        ),
        Symptom(
            "call optimizer.step() once, after loss.backward(): it is the step that moves the weights.",
            lambda result, case: _first_bad(result, lambda k: result.steps[k] == 0),
        ),
        Symptom(
            "optimizer.step() ran more than once in a call: one call of train_step is one step, a single "
            "optimizer.step().",
            lambda result, case: _first_bad(result, lambda k: result.steps[k] > 1),
        ),
        Symptom(
            "the weights did not change: optimizer.step() found no gradients. Call loss.backward() on the loss "
            "tensor itself, between optimizer.zero_grad() and optimizer.step(). A loss cut from its graph "
            "(loss.item(), loss.detach(), torch.tensor(loss.item()), or a forward under torch.no_grad()) has no "
            "path back to the weights, and zero_grad() between backward and step erases what backward computed.",
            lambda result, case: _first_bad(result, lambda k: not result.moved[k]),
        ),
        Symptom(
            "the step followed twice the gradient: loss.backward() ran twice in one call (the graph retained). "
            "backward *adds* its gradient to .grad, so a second call adds the same gradient again: call "
            "loss.backward() once per step.",
            lambda result, case: result.off_by_doubled <= ATOL < result.off_by[0],  # (Adam barely tells them apart)
        ),
        Symptom(
            "the loss is summed over the batch: average it. F.cross_entropy(logits, targets) averages by "
            "default (reduction='mean'); with reduction='sum' the step grows with the batch size.",
            lambda result, case: math.isclose(
                float(result.returned[0]), case.args[0].batch_size * result.losses[0], rel_tol=1e-6
            ) and case.args[0].batch_size > 1,
        ),
        Symptom(
            "the loss went up: the weights moved against the gradient's advice. Minimise the loss itself "
            "(loss.backward(), not (-loss).backward()), with the optimizer you are given.",
            lambda result, case: not result.eval_loss[1] < result.eval_loss[0],
        ),
        Symptom(
            "call 1 was right but the later calls are not: the gradients add up across calls. loss.backward() "
            "*adds* each new gradient to .grad, so call optimizer.zero_grad() in every step (before backward, "
            "or after step), else each step also follows the gradients of all the earlier ones.",
            lambda result, case: result.off_by[0] <= ATOL and _first_bad(result, lambda k: result.off_by[k] > ATOL),
        ),
        Symptom(
            "the weights are right but the returned value is not: return the loss computed in this call's "
            "forward pass, before the update (loss.item()), not a loss recomputed after the step.",
            lambda result, case: max(result.off_by) <= ATOL,
        ),
    ),
    fallback="the loss is the cross-entropy of the model's logits and the batch's targets, "
    "F.cross_entropy(model(inputs), targets), averaged over the batch, on logits (no softmax first); "
    "then zero_grad, backward, step.",
    on_error="if the error says a tensor 'does not require grad' or a float has no attribute 'backward', the "
    "loss was cut from its graph before backward: loss.item() and loss.detach() give a number with no "
    "history, and so does a forward under torch.no_grad(). Call loss.backward() on the loss tensor, and "
    ".item() only for the value you return. The batch is a pair: inputs, targets = batch.",
    error_hints=(
        ("backward through the graph a second time",
         "loss.backward() ran twice in one call: the first backward frees the graph it walked, so the second "
         "finds nothing to walk (and with retain_graph=True it would add the same gradient to .grad again). "
         "Call loss.backward() once per step."),
    ),
)


SETTINGS = (
    ("bag of embeddings: ids (B=6, T=5), 3 classes, SGD, 3 calls", Setting("bag", "sgd", "train", 3, 6, 1)),
    ("the model comes in eval mode, as after an evaluation: bag of embeddings, Adam, 3 calls",
     Setting("bag", "adam", "eval", 3, 6, 2)),
    ("two layers on float inputs (B=8, 5 features), 4 classes, Adam, 4 calls",
     Setting("mlp", "adam", "train", 4, 8, 3)),
    ("SGD with momentum (it keeps a velocity per weight), in eval mode, 3 calls",
     Setting("mlp", "momentum", "eval", 3, 7, 4)),
    ("one example (B=1), SGD, 2 calls", Setting("bag", "sgd", "train", 2, 1, 5)),
)  # fmt: skip


def check_train_step(fn: Callable[..., Any]) -> None:
    """Check a learner's ``train_step(model, batch, optimizer) -> float`` by what it does.

    Five cases (two models with dropout, SGD, SGD with momentum and Adam, models that come in
    train or in eval mode, batches of 6, 8, 7 and 1), each of 2 to 4 calls on one fixed batch;
    see the module's documentation for what is watched.
    """
    require_callable(_TRAIN_STEP.name, fn)
    cases = [Case(name, (setting,), observe(training.train_step, setting)) for name, setting in SETTINGS]

    learner = Tracked(fn)  # a function that returns on its first calls and then raises is not finished

    def watched(setting: Setting) -> Observed:
        return observe(learner, setting)

    run_checks(_TRAIN_STEP, watched, cases, learner=learner)
