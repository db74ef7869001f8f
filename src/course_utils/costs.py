"""What a model costs: its weights and its time (lessons 07–08), and what training costs beyond the
weights (lesson 06): activations kept for backward, optimiser state, and the time of the backward
pass against the forward pass.

:func:`parameter_count` counts the weights (a tied matrix once); :func:`latencies` times forward
passes of several models in turn, so that a shared CPU's changes of load slow them alike.

A forward pass that will be differentiated keeps, for the backward pass, the tensors each
operation needs to compute its gradient (its inputs, a softmax's output, a dropout's mask):
these **activations** grow with the batch ``B`` and the length ``T``, unlike the weights. The
optimiser keeps its own numbers per weight: Adam two (the running mean of the gradient and of its
square). The backward pass computes, for most operations, two products where the forward computed
one (the gradient with respect to the input and to the weights), so it costs about twice the
forward's time.
"""

from __future__ import annotations

import numbers
import statistics
import time
from typing import Callable, Mapping

import numpy as np
import torch

from .validation import positive_int

__all__ = ["latencies", "latency", "parameter_count", "saved_activation_bytes", "optimizer_state_numbers",
           "forward_backward_flops", "forward_backward_seconds"]


def _loss(output) -> "torch.Tensor":
    """A scalar to differentiate: the sum of the model's main output (a tensor, or ``.last_hidden_state``)."""
    tensor = getattr(output, "last_hidden_state", output)
    tensor = getattr(tensor, "logits", tensor)
    return tensor.float().sum()


def saved_activation_bytes(model: "torch.nn.Module", forward: Callable[[], object]) -> int:
    """The bytes of the distinct tensors autograd saves for the backward pass while ``forward()`` runs.

    ``forward``: a function without arguments that runs ``model`` (with gradients enabled). A
    storage saved twice (one tensor used by two operations, or a view of it) counts once; the
    storages of ``model``'s weights, which exist anyway, are not counted. The count is exact and
    the same on every machine.
    """

    weights = {p.untyped_storage().data_ptr() for p in model.parameters()}
    saved: dict[int, int] = {}

    def pack(tensor: "torch.Tensor") -> "torch.Tensor":
        storage = tensor.untyped_storage()
        if storage.data_ptr() not in weights:
            saved[storage.data_ptr()] = storage.nbytes()
        return tensor

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
        output = forward()
    del output
    return int(sum(saved.values()))


def optimizer_state_numbers(model: "torch.nn.Module", optimizer: "torch.optim.Optimizer") -> int:
    """The numbers ``optimizer`` keeps for ``model``'s weights after one step (``step`` counters left out).

    The step uses zero gradients where a weight has none, so it changes the weights a little
    (AdamW's weight decay, for one): call it on a model you do not need afterwards.
    """

    for parameter in model.parameters():
        if parameter.requires_grad and parameter.grad is None:
            parameter.grad = torch.zeros_like(parameter)
    optimizer.step()
    return int(
        sum(
            value.numel()
            for state in optimizer.state.values()
            for name, value in state.items()
            if torch.is_tensor(value) and name != "step"
        )
    )


def forward_backward_flops(forward: Callable[[], object]) -> tuple[int, int]:
    """Floating-point operations of ``forward()`` and of the backward pass of the sum of its output,
    as ``torch.utils.flop_counter.FlopCounterMode`` counts them (matrix products: 2 per multiply-add).

    Exact and the same on every machine, unlike a time.
    """
    from torch.utils.flop_counter import FlopCounterMode

    with FlopCounterMode(display=False) as counter:
        loss = _loss(forward())
    forward_flops = counter.get_total_flops()
    with FlopCounterMode(display=False) as counter:
        loss.backward()
    return int(forward_flops), int(counter.get_total_flops())


def forward_backward_seconds(forward: Callable[[], object], repeats: int = 5) -> tuple[float, float]:
    """Median seconds of ``forward()`` and of the backward pass of the sum of its output.

    ``forward``: runs a model with gradients enabled and returns its output (a tensor or a
    ``transformers``/course output with ``last_hidden_state`` or ``logits``). One warm-up run first.
    """
    positive_int("repeats", repeats)
    _loss(forward()).backward()  # warm-up
    forward_times, backward_times = [], []
    for _ in range(repeats):
        start = time.perf_counter()
        loss = _loss(forward())
        middle = time.perf_counter()
        loss.backward()
        end = time.perf_counter()
        forward_times.append(middle - start)
        backward_times.append(end - middle)
    return float(np.median(forward_times)), float(np.median(backward_times))


# --------------------------------------------------------------------------------------------
# What a trained model costs: weights and time (lessons 07-08)


def parameter_count(model: torch.nn.Module, *, trainable_only: bool = False) -> int:
    """The number of parameters of ``model``; a tied matrix (input and output embeddings) counts once."""
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"expected a torch.nn.Module, got {type(model).__name__}")
    return sum(p.numel() for p in model.parameters() if p.requires_grad or not trainable_only)


def latency(
    model: torch.nn.Module,
    input_ids: torch.Tensor,
    attention_mask: torch.Tensor | None = None,
    *,
    repeats: int = 20,
    warmup: int = 3,
) -> float:
    """Median wall-clock seconds of one forward pass of ``model`` on ``input_ids (B, T)``.

    In eval mode under ``torch.inference_mode``, after ``warmup`` untimed passes; the median of
    ``repeats`` timed ones (robust to the odd slow run of a shared CPU). The paper's Table 3
    times batch 1 (one example at a time); a lesson also times batch 32. The model's train/eval
    mode is restored afterwards. To compare models, use :func:`latencies`.
    """
    return latencies({"model": model}, input_ids, attention_mask, repeats=repeats, warmup=warmup)["model"]


def latencies(
    models: Mapping[str, torch.nn.Module],
    input_ids: torch.Tensor,
    attention_mask: torch.Tensor | None = None,
    *,
    repeats: int = 20,
    warmup: int = 3,
) -> dict[str, float]:
    """:func:`latency` of several models, ``{name: median seconds}``, timed **in turn**.

    Each round times one pass of every model, one after the other, so that a change of load on a
    shared CPU (another process starting) slows every model alike and their ratio stays fair;
    timing one model ``repeats`` times and then the other would not.
    """
    repeats = positive_int("repeats", repeats)
    if isinstance(warmup, bool) or not isinstance(warmup, numbers.Integral) or warmup < 0:
        raise ValueError(f"expected warmup to be an integer >= 0, got {warmup!r}")
    if not isinstance(models, Mapping) or not models:
        raise TypeError(f"expected a dict of models {{name: model}}, got {type(models).__name__}")
    for name, model in models.items():
        if not isinstance(model, torch.nn.Module):
            raise TypeError(f"expected a torch.nn.Module for {name!r}, got {type(model).__name__}")
    if not isinstance(input_ids, torch.Tensor) or input_ids.ndim != 2:
        raise ValueError(
            f"expected input_ids to be a tensor of shape (B, T), got "
            f"{tuple(input_ids.shape) if isinstance(input_ids, torch.Tensor) else type(input_ids).__name__}"
        )
    kwargs = {"input_ids": input_ids}
    if attention_mask is not None:
        kwargs["attention_mask"] = attention_mask
    modes = {name: model.training for name, model in models.items()}
    times: dict[str, list[float]] = {name: [] for name in models}
    try:
        for model in models.values():
            model.eval()
        with torch.inference_mode():
            for round_ in range(warmup + repeats):
                for name, model in models.items():
                    start = time.perf_counter()
                    model(**kwargs)
                    if round_ >= warmup:
                        times[name].append(time.perf_counter() - start)
    finally:
        for name, model in models.items():
            model.train(modes[name])
    return {name: statistics.median(values) for name, values in times.items()}
