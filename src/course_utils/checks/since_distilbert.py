"""Checkers of lesson 09: RoPE, one decoding step with a KV cache, repeat_kv, attention over blocks of keys.

The references are :func:`course_utils.rope.apply_rope`, :func:`course_utils.decoder.decode_step`,
:func:`course_utils.grouped_query.repeat_kv` and :func:`course_utils.online_softmax.blocked_attention`.
The cases are torch tensors (``blocked_attention``: numpy arrays); results are compared by value, so
numpy and torch answers, float32 and float64, loops and vectorised code all pass.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import torch

from .. import attention, decoder, grouped_query, rope
from .engine import Case, Exercise, Mistake, Symptom, run_checks, torch_for_torch
from .values import as_float_array, close_values, has_non_finite

__all__ = ["check_apply_rope", "check_blocked_attention", "check_decode_step", "check_repeat_kv"]


def _t(x) -> torch.Tensor:
    return torch.as_tensor(np.asarray(x.detach().cpu() if isinstance(x, torch.Tensor) else x, dtype=np.float64))


# --------------------------------------------------------------------------------------------
# apply_rope


def _rope_variant(x, positions, *, interleaved=False, sign=1.0, exponent=2.0, swap=False, zero=False):
    """A rotation with one chosen mistake (the reference when every option is off)."""
    x = _t(x)
    d = x.shape[-1]
    pos = torch.zeros(len(positions)) if zero else torch.as_tensor(np.asarray(positions), dtype=torch.float64)
    theta = rope.BASE ** (-exponent * torch.arange(d // 2, dtype=torch.float64) / d)  # (d/2,)
    angles = sign * pos[:, None].double() * theta  # (T, d/2)
    cos, sin = angles.cos(), angles.sin()
    if swap:
        cos, sin = sin, cos
    if interleaved:  # pairs (0, 1), (2, 3), ...
        even, odd = x[..., 0::2], x[..., 1::2]
        out = torch.empty_like(x)
        out[..., 0::2] = even * cos - odd * sin
        out[..., 1::2] = even * sin + odd * cos
        return out
    first, second = x[..., : d // 2], x[..., d // 2:]
    return torch.cat([first * cos - second * sin, second * cos + first * sin], dim=-1)


def _rope_no_minus(x, positions):
    x = _t(x)
    cos, sin = rope.rope_cos_sin(torch.as_tensor(np.asarray(positions)), x.shape[-1])
    half = x.shape[-1] // 2
    return x * cos + torch.cat([x[..., half:], x[..., :half]], dim=-1) * sin


def _compare_tensor(axes):
    def compare(result: Any, expected: Any) -> str | None:
        return close_values(result, _t(expected).numpy(), "the result", axes, atol=1e-5, rtol=1e-5)

    return compare


_APPLY_ROPE = Exercise(
    name="apply_rope",
    call="apply_rope(x, positions) with x a torch tensor (..., T, d), d even, and positions an integer tensor (T,), "
    "and expects a tensor of x's shape",
    compare=_compare_tensor(("...", "T", "d")),
    mistakes=(
        Mistake("the positions are not used: every token is rotated as if it were at position 0 (no rotation at all). "
                "The angle of pair i at position p is p * theta_i.", lambda x, p: _rope_variant(x, p, zero=True)),
        Mistake("the pairs are interleaved, (x_0, x_1), (x_2, x_3), ...: that is the paper's layout, but Hugging "
                "Face's Llama pairs x_i with x_{i + d/2} (rotate_half). Split x into its two halves.",
                lambda x, p: _rope_variant(x, p, interleaved=True)),
        Mistake("the rotation goes the wrong way: rotate_half(x) is (-x_2, x_1), the minus on the second half, "
                "and the result is x * cos + rotate_half(x) * sin.", lambda x, p: _rope_variant(x, p, sign=-1.0)),
        Mistake("rotate_half lost its minus sign: it is cat(-x_2, x_1), not cat(x_2, x_1).", _rope_no_minus),
        Mistake("the frequencies are base ** (-i / d): the exponent is -2i / d for pair i (i = 0 .. d/2 - 1), "
                "the frequencies of lesson 03.", lambda x, p: _rope_variant(x, p, exponent=1.0)),
        Mistake("cos and sin are swapped: x * cos + rotate_half(x) * sin.", lambda x, p: _rope_variant(x, p, swap=True)),
    ),
    symptoms=(
        Symptom("the result should have the shape of x, (..., T, d).",
                lambda result, case: tuple(np.shape(as_float_array(result))) != tuple(case.args[0].shape)),
    ),
    fallback="theta_i = 10000 ** (-2i / d) for i < d/2; angles = positions[:, None] * theta, concatenated "
    "twice to (T, d); then x * cos(angles) + rotate_half(x) * sin(angles), rotate_half(x) = cat(-x_2, x_1).",
    on_error="x has shape (..., T, d) and positions shape (T,): the angles (T, d) broadcast against x.",
)


def check_apply_rope(fn: Callable[..., Any]) -> None:
    """Check a learner's ``apply_rope(x, positions)`` against :func:`course_utils.rope.apply_rope`.

    Six cases: one head of width 2; ``(T, d) = (5, 8)``; a batch of heads ``(2, 3, 4, 16)``; positions
    that do not start at 0 (a continued text); large positions (up to 2,000); float32 input.
    """
    g = torch.Generator().manual_seed(909)

    def rnd(*shape, dtype=torch.float64):
        return torch.randn(*shape, generator=g, dtype=dtype)

    inputs = [
        ("one head of width d=2, T=3", (rnd(3, 2), torch.arange(3))),
        ("T=5, d=8", (rnd(5, 8), torch.arange(5))),
        ("a batch of heads (B=2, H=3, T=4, d=16)", (rnd(2, 3, 4, 16), torch.arange(4))),
        ("positions 7 to 10 (a text that goes on)", (rnd(4, 8), torch.arange(7, 11))),
        ("large positions (up to 2,000)", (rnd(3, 8), torch.tensor([0, 999, 2000]))),
        ("float32 input (T=6, d=32)", (rnd(6, 32, dtype=torch.float32), torch.arange(6))),
    ]
    cases = [Case(name, args, rope.apply_rope(args[0].double(), args[1])) for name, args in inputs]
    run_checks(_APPLY_ROPE, fn, cases)


# --------------------------------------------------------------------------------------------
# decode_step


def _attend(query, keys, values):
    n_rep = query.shape[1] // keys.shape[1]
    return attention.scaled_dot_product_attention(query, grouped_query.repeat_kv(keys, n_rep),
                                                  grouped_query.repeat_kv(values, n_rep))[0]


def _step_variant(query, key, value, cache, *, position=None, append=1, attend_new=True, rotate_query=True,
                  rotate_key=True, cache_unrotated=False, first_key_only=False, return_old=False):
    """One decoding step with one chosen mistake (the reference when every option is at its default)."""
    keys, values = (_t(c) for c in cache)
    query, key, value = _t(query), _t(key), _t(value)
    t = keys.shape[-2]
    pos = torch.tensor([t if position is None else position(t)])
    q = rope.apply_rope(query, pos) if rotate_query else query
    k = rope.apply_rope(key, pos) if rotate_key else key
    new_keys = torch.cat([keys] + [k] * append, dim=-2)
    new_values = torch.cat([values] + [value] * append, dim=-2)
    seen_keys, seen_values = (new_keys, new_values) if attend_new else (keys, values)
    if first_key_only:
        seen_keys, seen_values = seen_keys[..., :1, :], seen_values[..., :1, :]
    output = _attend(q, seen_keys, seen_values)
    if cache_unrotated:
        new_keys = torch.cat([keys, key], dim=-2)
    if return_old:
        new_keys, new_values = keys, values
    return output, (new_keys, new_values)


def _compare_step(result: Any, expected: Any) -> str | None:
    if not (isinstance(result, (tuple, list)) and len(result) == 2 and isinstance(result[1], (tuple, list))
            and len(result[1]) == 2):
        return f"expected the pair (output, (keys, values)), got {type(result).__name__}"
    output, (keys, values) = result
    exp_output, (exp_keys, exp_values) = expected
    for what, got, want, axes in (("the cached keys", keys, exp_keys, ("B", "H", "t + 1", "d")),
                                  ("the cached values", values, exp_values, ("B", "H", "t + 1", "d")),
                                  ("the output", output, exp_output, ("B", "H", "1", "d"))):
        problem = close_values(got, _t(want).numpy(), what, axes, atol=1e-5, rtol=1e-5)
        if problem:
            return problem
    return None


_DECODE_STEP = Exercise(
    name="decode_step",
    call="decode_step(query, key, value, (keys, values)) with query, key, value (B, H, 1, d) of the new token, "
    "not rotated, and the cache keys, values (B, H, t, d), and expects (output (B, H, 1, d), (keys, values) "
    "(B, H, t + 1, d))",
    compare=_compare_step,
    mistakes=(
        Mistake("the cache is not appended: return the new cache, torch.cat([keys, key], dim=-2) (and the same for "
                "the values), so that the next step sees this token.", lambda *a: _step_variant(*a, return_old=True)),
        Mistake("the cache is not appended, and the query attends over the old cache only: append the new key and "
                "value first, then attend over all t + 1 of them (a token attends to itself).",
                lambda *a: _step_variant(*a, attend_new=False, return_old=True)),
        Mistake("the new key and value are appended twice: one torch.cat per step.",
                lambda *a: _step_variant(*a, append=2)),
        Mistake("a mask lets the new query see only the first cached key. The new token is the last one: it may "
                "attend to every cached key, no mask is needed (a causal mask's first row is not its row).",
                lambda *a: _step_variant(*a, first_key_only=True)),
        Mistake("the positions restart at 0: the new token is at position t = keys.shape[-2] (the number of "
                "tokens cached), so rotate its query and key by t, not by 0.",
                lambda *a: _step_variant(*a, position=lambda t: 0)),
        Mistake("the position is one too far: with t tokens cached (positions 0 .. t-1) the new one is at t; take "
                "t from the cache before appending.", lambda *a: _step_variant(*a, position=lambda t: t + 1)),
        Mistake("the query is not rotated: RoPE rotates both the query and the key, by the same position.",
                lambda *a: _step_variant(*a, rotate_query=False)),
        Mistake("the key is not rotated: RoPE rotates both the query and the key, by the same position.",
                lambda *a: _step_variant(*a, rotate_key=False)),
        Mistake("the cache holds the key before its rotation: cache the rotated key, since the cached keys are "
                "never rotated again.", lambda *a: _step_variant(*a, cache_unrotated=True)),
    ),
    fallback="t = keys.shape[-2]; rotate query and key with apply_rope(..., torch.tensor([t])); append the key and "
    "value with torch.cat(..., dim=-2); attend with scaled_dot_product_attention(query, keys, values), no mask.",
    on_error="the cache is a pair (keys, values) of tensors (B, H, t, d); torch.cat([keys, key], dim=-2) appends.",
)


def check_decode_step(fn: Callable[..., Any]) -> None:
    """Check a learner's ``decode_step(query, key, value, cache)`` against :func:`course_utils.decoder.decode_step`.

    Five cases: an empty cache (the first token), 3 and 6 tokens cached, two sequences and three heads,
    and values larger than the keys (so a wrong weight shows in the output).
    """
    g = torch.Generator().manual_seed(910)

    def rnd(*shape, scale=1.0):
        return scale * torch.randn(*shape, generator=g, dtype=torch.float64)

    def args(b, h, t, d, scale=1.0):
        return (rnd(b, h, 1, d), rnd(b, h, 1, d), rnd(b, h, 1, d, scale=scale),
                (rnd(b, h, t, d), rnd(b, h, t, d, scale=scale)))

    inputs = [
        ("an empty cache, t=0 (the first token)", args(1, 1, 0, 4)),
        ("t=3 cached, one head of width 4", args(1, 1, 3, 4)),
        ("t=6 cached, two heads of width 8", args(1, 2, 6, 8)),
        ("B=2 sequences, H=3 heads, t=4", args(2, 3, 4, 6)),
        ("values 10 times larger, t=5", args(1, 2, 5, 4, scale=10.0)),
    ]
    cases = [Case(name, a, decoder.decode_step(*a)) for name, a in inputs]
    run_checks(_DECODE_STEP, fn, cases)


# --------------------------------------------------------------------------------------------
# repeat_kv

_REPEAT_KV = Exercise(
    name="repeat_kv",
    call="repeat_kv(x, n_rep) with x a torch tensor (B, H_kv, T, d), and expects (B, H_kv * n_rep, T, d)",
    compare=_compare_tensor(("B", "H_kv * n_rep", "T", "d")),
    returns=lambda result, case: torch_for_torch(result, case, "attention then multiplies it with torch queries"),
    mistakes=(
        Mistake("the groups are interleaved: x.repeat(1, n_rep, 1, 1) gives heads 0, 1, 0, 1, ...; each key head "
                "serves n_rep query heads in a row, 0, 0, 1, 1 (torch.repeat_interleave(x, n_rep, dim=1)).",
                lambda x, n: _t(x).repeat(1, n, 1, 1)),
        Mistake("the tokens are repeated instead of the heads: repeat along dim=1, the heads, not dim=2.",
                lambda x, n: _t(x).repeat_interleave(n, dim=2)),
        Mistake("the features are repeated instead of the heads: repeat along dim=1, the heads, not the last axis.",
                lambda x, n: _t(x).repeat_interleave(n, dim=-1)),
    ),
    fallback="head g of x becomes heads g * n_rep to g * n_rep + n_rep - 1: torch.repeat_interleave(x, n_rep, dim=1).",
    on_error="x has shape (B, H_kv, T, d); repeat along dim=1.",
)


def check_repeat_kv(fn: Callable[..., Any]) -> None:
    """Check a learner's ``repeat_kv(x, n_rep)`` against :func:`course_utils.grouped_query.repeat_kv`.

    Five cases: ``n_rep=1`` (multi-head: nothing to do), 2 groups of 2, one key head for 4 query heads
    (multi-query), a batch of 2 with ``T != d``, and ``n_rep=3``.
    """
    g = torch.Generator().manual_seed(911)
    inputs = [
        ("n_rep=1 (multi-head attention)", (torch.randn(1, 2, 3, 4, generator=g), 1)),
        ("2 key heads, n_rep=2 (grouped-query)", (torch.randn(1, 2, 3, 4, generator=g), 2)),
        ("1 key head, n_rep=4 (multi-query)", (torch.randn(1, 1, 5, 4, generator=g), 4)),
        ("B=2, 2 key heads, T=6, d=3", (torch.randn(2, 2, 6, 3, generator=g), 2)),
        ("3 key heads, n_rep=3", (torch.randn(1, 3, 2, 2, generator=g), 3)),
    ]
    cases = [Case(name, args, grouped_query.repeat_kv(*args)) for name, args in inputs]
    run_checks(_REPEAT_KV, fn, cases)


# --------------------------------------------------------------------------------------------
# blocked_attention


def _blocked_variant(q, k, v, block_size, *, rescale_acc=True, rescale_sum=True, divide=True, scale=True,
                     drop_last=False, no_max=False):
    """Online-softmax attention with one chosen mistake, in float64 numpy."""
    q, k, v = (np.asarray(a, dtype=np.float64) for a in (q, k, v))
    lead = np.broadcast_shapes(q.shape[:-2], k.shape[:-2])
    m = np.full((*lead, q.shape[-2], 1), -np.inf)
    s = np.zeros((*lead, q.shape[-2], 1))
    acc = np.zeros((*lead, q.shape[-2], v.shape[-1]))
    stop = (k.shape[-2] // block_size) * block_size if drop_last else k.shape[-2]
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        for start in range(0, stop, block_size):
            scores = q @ np.swapaxes(k[..., start:start + block_size, :], -1, -2)
            if scale:
                scores = scores / np.sqrt(q.shape[-1])
            new_m = np.zeros_like(m) if no_max else np.maximum(m, scores.max(axis=-1, keepdims=True))
            correction = np.ones_like(m) if no_max else np.exp(m - new_m)
            e = np.exp(scores - new_m)
            s = (s * correction if rescale_sum else s) + e.sum(axis=-1, keepdims=True)
            acc = (acc * correction if rescale_acc else acc) + e @ v[..., start:start + block_size, :]
            m = new_m
        return acc / s if divide else acc




_BLOCKED = Exercise(
    name="blocked_attention",
    call="blocked_attention(queries, keys, values, block_size) with queries (..., T_q, d_k), keys (..., T_k, d_k), "
    "values (..., T_k, d_v), and expects the output (..., T_q, d_v) of softmax(Q K^T / sqrt(d_k)) V",
    compare=lambda result, expected: close_values(result, expected, "the result", ("...", "T_q", "d_v")),
    mistakes=(
        Mistake("the keys after the last full block are skipped: range(0, T_k, block_size) and slices "
                "keys[..., start:start + block_size, :] take the shorter last block too.",
                lambda *a: _blocked_variant(*a, drop_last=True)),
        Mistake("the scores are not divided by sqrt(d_k).", lambda *a: _blocked_variant(*a, scale=False)),
        Mistake("the running sum of the values is not rescaled when the maximum grows: multiply it by "
                "exp(m_old - m_new) before adding the new block.", lambda *a: _blocked_variant(*a, rescale_acc=False)),
        Mistake("the running sum of the exponentials is not rescaled when the maximum grows: multiply it by "
                "exp(m_old - m_new) before adding the new block's.", lambda *a: _blocked_variant(*a, rescale_sum=False)),
        Mistake("the end is missing: the weighted sum must be divided by the sum of the exponentials, acc / l.",
                lambda *a: _blocked_variant(*a, divide=False)),
    ),
    symptoms=(
        Symptom("nan or inf: with large scores exp overflows. Subtract the running maximum before the exponential, "
                "and rescale what was summed by exp(m_old - m_new) when it grows.", lambda result, case: has_non_finite(result)),
    ),
    fallback="for each block: scores = Q @ K_block^T / sqrt(d_k); m_new = max(m, scores.max(-1)); "
    "c = exp(m - m_new); l = l * c + exp(scores - m_new).sum(-1); acc = acc * c + exp(scores - m_new) @ V_block; "
    "at the end acc / l.",
    on_error="keep m (..., T_q, 1) starting at -inf, l (..., T_q, 1) and acc (..., T_q, d_v) at 0, and slice the "
    "keys and values along axis -2.",
)


def check_blocked_attention(fn: Callable[..., Any]) -> None:
    """Check a learner's ``blocked_attention(queries, keys, values, block_size)`` against lesson 04's attention.

    Six cases: T_k a multiple of the block; a shorter last block; blocks of one key; one block larger than
    T_k; scores in the hundreds (only a running maximum avoids overflow); a batch with ``d_v != d_k``.
    The expected outputs are :func:`course_utils.attention.scaled_dot_product_attention`'s.
    """
    rng = np.random.default_rng(912)
    inputs = [
        ("T_k=8 in blocks of 4", (rng.standard_normal((3, 4)), rng.standard_normal((8, 4)),
                                  rng.standard_normal((8, 4)), 4)),
        ("T_k=7 in blocks of 3 (a shorter last block)", (rng.standard_normal((2, 4)), rng.standard_normal((7, 4)),
                                                         rng.standard_normal((7, 4)), 3)),
        ("blocks of one key", (rng.standard_normal((2, 2)), rng.standard_normal((5, 2)),
                               rng.standard_normal((5, 2)), 1)),
        ("one block larger than T_k", (rng.standard_normal((3, 4)), rng.standard_normal((5, 4)),
                                       rng.standard_normal((5, 4)), 16)),
        ("large scores (hundreds): the maximum must be subtracted",
         (30 * rng.standard_normal((3, 4)), 30 * rng.standard_normal((9, 4)), rng.standard_normal((9, 4)), 2)),
        ("a batch (B=2, T_q=3, T_k=10), d_v=5", (rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 10, 4)),
                                                  rng.standard_normal((2, 10, 5)), 4)),
    ]
    cases = [Case(name, args, attention.scaled_dot_product_attention(*args[:3])[0]) for name, args in inputs]
    run_checks(_BLOCKED, fn, cases)
