"""Attention without the T x T matrix: the online softmax over blocks of keys (lesson 09).

Lesson 04's attention computes every score ``(T_q, T_k)`` at once, then the softmax, then the
weighted sum of the values: its memory grows as ``T^2``. The online softmax (Milakov & Gimelshein,
2018) computes a softmax's normaliser in one pass, with a running maximum ``m`` and a running sum
``l`` of ``exp(score - m)``. Rabe & Staats (2021) and FlashAttention (Dao et al., 2022, section 3.1)
carry it to attention: reading the keys block by block, they also keep, for each query, the
weighted sum of the values so far ``acc``. When a block brings a larger maximum, what was summed is
rescaled by ``exp(m_old - m_new)``; at the end ``acc / l`` is exactly ``softmax(scores) @ V``.
FlashAttention runs this loop in tiles that fit a GPU's fast memory.

:func:`blocked_attention` is the loop (:func:`blocked_attention_steps` yields its state block by
block, for lesson 09's figure); :func:`peak_memory_bytes` measures the peak memory that torch
allocates while a function runs (torch's profiler, on the CPU), the measure of lesson 09's figure.

Axis names: ``T_q`` queries, ``T_k`` keys and values, ``d_k`` query/key width, ``d_v`` value width,
``...`` any leading axes.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections import deque
from dataclasses import dataclass
from typing import Any, Callable, Iterator

import torch

from .attention import _as_given, _tensors, is_torch
from .validation import positive_int

__all__ = ["BlockState", "blocked_attention", "blocked_attention_steps", "peak_memory_bytes"]


@dataclass(frozen=True)
class BlockState:
    """The loop's state after one block of keys: the block's keys ``start .. stop - 1``, its
    ``scores (..., T_q, b)``, and, for every query, the running maximum ``m (..., T_q, 1)``, the
    factor ``correction = exp(m_old - m)`` that rescaled what was summed before, the running sum
    ``l (..., T_q, 1)`` and the running weighted sum of the values ``acc (..., T_q, d_v)``."""

    start: int
    stop: int
    scores: torch.Tensor
    m: torch.Tensor
    correction: torch.Tensor
    l: torch.Tensor  # noqa: E741 (the papers' name)
    acc: torch.Tensor


def blocked_attention_steps(queries: Any, keys: Any, values: Any, block_size: int) -> Iterator[BlockState]:
    """The online softmax's loop, one :class:`BlockState` per block of ``block_size`` keys.

    Shapes as :func:`blocked_attention`, which returns the last state's ``acc / l``. Yields torch
    tensors (numpy in is computed in float64).
    """
    block_size = positive_int("block_size", block_size)
    queries, keys, values = _tensors(queries=queries, keys=keys, values=values)
    if queries.ndim < 2 or keys.ndim < 2 or values.ndim < 2:
        raise ValueError(f"expected queries, keys, values of shape (..., T, d), got {tuple(queries.shape)}, "
                         f"{tuple(keys.shape)}, {tuple(values.shape)}")
    if keys.shape[-1] != queries.shape[-1]:
        raise ValueError(f"expected keys of shape (..., T_k, d_k={queries.shape[-1]}), got {tuple(keys.shape)}")
    if values.shape[-2] != keys.shape[-2] or keys.shape[-2] == 0:
        raise ValueError(f"expected values of shape (..., T_k={keys.shape[-2]}, d_v) and T_k >= 1, "
                         f"got {tuple(values.shape)}")
    scale = queries.shape[-1] ** -0.5
    lead = torch.broadcast_shapes(queries.shape[:-2], keys.shape[:-2], values.shape[:-2])
    running_max = torch.full((*lead, queries.shape[-2], 1), -torch.inf, dtype=queries.dtype)  # m: (..., T_q, 1)
    running_sum = torch.zeros((*lead, queries.shape[-2], 1), dtype=queries.dtype)  # l: (..., T_q, 1)
    acc = torch.zeros((*lead, queries.shape[-2], values.shape[-1]), dtype=queries.dtype)  # (..., T_q, d_v)
    for start in range(0, keys.shape[-2], block_size):
        block_keys = keys[..., start:start + block_size, :]  # (..., b, d_k)
        block_values = values[..., start:start + block_size, :]  # (..., b, d_v)
        scores = (queries @ block_keys.transpose(-2, -1)) * scale  # (..., T_q, b): one block of scores
        new_max = torch.maximum(running_max, scores.amax(dim=-1, keepdim=True))  # (..., T_q, 1)
        correction = torch.exp(running_max - new_max)  # rescales what was summed under the old maximum
        exps = torch.exp(scores - new_max)  # (..., T_q, b)
        running_sum = running_sum * correction + exps.sum(dim=-1, keepdim=True)
        acc = acc * correction + exps @ block_values
        running_max = new_max
        yield BlockState(start, start + block_keys.shape[-2], scores, running_max, correction, running_sum, acc)


def blocked_attention(queries: Any, keys: Any, values: Any, block_size: int) -> Any:
    """``softmax(Q K^T / sqrt(d_k)) V`` without the ``(T_q, T_k)`` matrix, ``block_size`` keys at a time.

    ``queries (..., T_q, d_k)``, ``keys (..., T_k, d_k)``, ``values (..., T_k, d_v)`` ->
    ``(..., T_q, d_v)``. Never holds more than ``(..., T_q, block_size)`` scores; equal to
    :func:`course_utils.attention.scaled_dot_product_attention` to float rounding (tested). No mask.
    numpy in gives numpy out. The loop is :func:`blocked_attention_steps`.
    """
    numpy_in = not is_torch(queries)
    (state,) = deque(blocked_attention_steps(queries, keys, values, block_size), maxlen=1)  # the last state only
    acc, running_sum = state.acc, state.l
    return _as_given(acc / running_sum, numpy_in)


@contextlib.contextmanager
def _quiet_stderr():
    """Silence file descriptor 2 (torch's profiler prints start/stop lines from C++ there)."""
    sys.stderr.flush()
    try:
        saved = os.dup(2)
    except OSError:  # no real stderr (some embedded interpreters): nothing to silence
        yield
        return
    with open(os.devnull, "w") as null:
        os.dup2(null.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)


def peak_memory_bytes(fn: Callable[..., Any], *args: Any) -> int:
    """The peak of the memory torch allocates on the CPU while ``fn(*args)`` runs, in bytes.

    Measured with ``torch.profiler`` (``profile_memory=True``): each operator's own net allocation
    (what it allocated less what it freed, its sub-operators' left to them), summed in the order the
    operators ran; the largest running total is the peak. So a buffer that one operator allocates
    and frees inside itself (a fused kernel's workspace) is not seen: for such an operator the
    result is a lower bound. It counts the tensors torch allocates during the call (the inputs,
    allocated before, are not counted; the output is), not Python objects or numpy arrays. Runs on one thread, so that the
    number does not depend on the machine's cores (kernels allocate per-thread buffers).
    """
    from torch.profiler import ProfilerActivity, profile

    if not callable(fn):
        raise TypeError(f"expected a function to measure, got {type(fn).__name__}")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with _quiet_stderr(), profile(activities=[ProfilerActivity.CPU], profile_memory=True) as profiler:
            result = fn(*args)
            del result
    finally:
        torch.set_num_threads(threads)
    events = sorted((e for e in profiler.events() if e.self_cpu_memory_usage), key=lambda e: e.time_range.start)
    current = peak = 0
    for event in events:
        current += event.self_cpu_memory_usage  # its own allocations, not its sub-operations' again
        peak = max(peak, current)
    return peak
