"""What training costs beyond the weights (lesson 06): activations kept for backward, optimiser
state, and the time of the backward pass against the forward pass.

A forward pass that will be differentiated keeps, for the backward pass, the tensors each
operation needs to compute its gradient (its inputs, a softmax's output, a dropout's mask):
these **activations** grow with the batch ``B`` and the length ``T``, unlike the weights. The
optimiser keeps its own numbers per weight: Adam two (the running mean of the gradient and of its
square). The backward pass computes, for most operations, two products where the forward computed
one (the gradient with respect to the input and to the weights), so it costs about twice the
forward's time.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Callable

import numpy as np

from .validation import positive_int

if TYPE_CHECKING:  # pragma: no cover
    import torch

__all__ = ["saved_activation_bytes", "optimizer_state_numbers", "forward_backward_flops", "forward_backward_seconds"]


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
    import torch

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
    import torch

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
