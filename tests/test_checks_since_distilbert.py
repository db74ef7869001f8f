"""Tests of the checkers of lesson 09: check_apply_rope, check_decode_step, check_repeat_kv, check_blocked_attention.

Every correct version passes (torch, numpy, loops, other layouts of the same maths); the wrong versions a
learner writes are rejected with the hint naming the mistake; the stub prints one line.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from course_utils import checks, decoder, grouped_query, online_softmax, rope
from course_utils.attention import scaled_dot_product_attention
from tests.checker_cases import rejects as _rejects
from tests.checker_cases import stub as _stub

# --------------------------------------------------------------------------------------------
# check_apply_rope


def _rope_torch(x, positions):
    d = x.shape[-1]
    theta = 10000.0 ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
    angles = positions[:, None].double() * theta
    angles = torch.cat([angles, angles], dim=-1)
    rotated = torch.cat([-x[..., d // 2:], x[..., : d // 2]], dim=-1)
    return x * angles.cos().to(x.dtype) + rotated * angles.sin().to(x.dtype)


def _rope_complex(x, positions):
    """The pairs as complex numbers z = x_i + i x_{i+d/2}, multiplied by e^{i p theta}."""
    d = x.shape[-1]
    z = torch.complex(x[..., : d // 2].double(), x[..., d // 2:].double())
    theta = 1.0 / 10000.0 ** (torch.arange(d // 2, dtype=torch.float64) * 2 / d)
    angles = positions[:, None].double() * theta
    turned = z * torch.polar(torch.ones_like(angles), angles)
    return torch.cat([turned.real, turned.imag], dim=-1)


def _rope_numpy_loops(x, positions):
    x = np.asarray(x, dtype=np.float64)
    out = x.copy()
    d = x.shape[-1]
    for t, p in enumerate(np.asarray(positions)):
        for i in range(d // 2):
            a = p * 10000.0 ** (-2 * i / d)
            x1, x2 = x[..., t, i], x[..., t, i + d // 2]
            out[..., t, i] = x1 * np.cos(a) - x2 * np.sin(a)
            out[..., t, i + d // 2] = x2 * np.cos(a) + x1 * np.sin(a)
    return out


@pytest.mark.parametrize("fn", [_rope_torch, _rope_complex, _rope_numpy_loops, rope.apply_rope],
                         ids=["torch", "complex numbers", "numpy loops", "the package's reference"])
def test_check_apply_rope_accepts_correct_versions(fn, capsys):
    checks.check_apply_rope(fn)
    assert capsys.readouterr().out == "✓ apply_rope: all 6 cases pass.\n"


def _rope_interleaved(x, positions):
    out = torch.empty_like(x)
    d = x.shape[-1]
    theta = 10000.0 ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
    a = positions[:, None].double() * theta
    out[..., 0::2] = x[..., 0::2] * a.cos() - x[..., 1::2] * a.sin()
    out[..., 1::2] = x[..., 0::2] * a.sin() + x[..., 1::2] * a.cos()
    return out


@pytest.mark.parametrize("fn, hint", [
    (lambda x, p: x.clone(), "positions are not used"),
    (_rope_interleaved, "pairs are interleaved"),
    (lambda x, p: _rope_torch(x, -p), "rotation goes the wrong way"),
    (lambda x, p: _rope_torch(x, p)[..., :-1], r"expected the result of shape"),
], ids=["no rotation", "interleaved", "negative angle", "wrong shape"])
def test_check_apply_rope_rejects_wrong_versions(fn, hint, capsys):
    _rejects(checks.check_apply_rope, fn, hint, capsys)


def test_check_apply_rope_reports_the_stub(capsys):
    checks.check_apply_rope(_stub)
    assert "apply_rope: not attempted yet" in capsys.readouterr().out


# --------------------------------------------------------------------------------------------
# check_decode_step


def _step_torch(query, key, value, cache):
    keys, values = cache
    t = keys.shape[-2]
    q = rope.apply_rope(query, torch.tensor([t]))
    k = rope.apply_rope(key, torch.tensor([t]))
    keys, values = torch.cat([keys, k], dim=-2), torch.cat([values, value], dim=-2)
    weights = torch.softmax(q @ keys.transpose(-1, -2) / q.shape[-1] ** 0.5, dim=-1)
    return weights @ values, (keys, values)


def _step_sdpa(query, key, value, cache):
    keys, values = cache
    position = torch.full((1,), keys.shape[2])
    keys = torch.cat((keys, rope.apply_rope(key, position)), 2)
    values = torch.cat((values, value), 2)
    return torch.nn.functional.scaled_dot_product_attention(rope.apply_rope(query, position), keys, values), (keys, values)


@pytest.mark.parametrize("fn", [_step_torch, _step_sdpa, decoder.decode_step], ids=["torch", "sdpa", "reference"])
def test_check_decode_step_accepts_correct_versions(fn, capsys):
    checks.check_decode_step(fn)
    assert capsys.readouterr().out == "✓ decode_step: all 5 cases pass.\n"


def _not_appended(query, key, value, cache):
    output, _ = _step_torch(query, key, value, cache)
    return output, cache


def _twice(query, key, value, cache):
    keys, values = cache
    t = keys.shape[-2]
    k = rope.apply_rope(key, torch.tensor([t]))
    keys, values = torch.cat([keys, k, k], dim=-2), torch.cat([values, value, value], dim=-2)
    q = rope.apply_rope(query, torch.tensor([t]))
    return scaled_dot_product_attention(q, keys, values)[0], (keys, values)


def _masked(query, key, value, cache):
    keys, values = cache
    t = keys.shape[-2]
    keys = torch.cat([keys, rope.apply_rope(key, torch.tensor([t]))], dim=-2)
    values = torch.cat([values, value], dim=-2)
    mask = torch.tril(torch.ones(1, t + 1, dtype=torch.bool))  # the causal mask's first row
    return scaled_dot_product_attention(rope.apply_rope(query, torch.tensor([t])), keys, values, mask)[0], (keys, values)


def _restarted(query, key, value, cache):
    keys, values = cache
    keys = torch.cat([keys, rope.apply_rope(key, torch.tensor([0]))], dim=-2)
    values = torch.cat([values, value], dim=-2)
    return scaled_dot_product_attention(rope.apply_rope(query, torch.tensor([0])), keys, values)[0], (keys, values)


@pytest.mark.parametrize("fn, hint", [
    (_not_appended, "cache is not appended"),
    (_twice, "appended twice"),
    (_masked, "a mask lets the new query see only the first cached key"),
    (_restarted, "positions restart at 0"),
    (lambda q, k, v, c: _step_torch(q, k, v, c)[0], "expected the pair"),
], ids=["not appended", "appended twice", "mask on the cache", "positions restarted", "no cache returned"])
def test_check_decode_step_rejects_wrong_versions(fn, hint, capsys):
    _rejects(checks.check_decode_step, fn, hint, capsys)


def test_check_decode_step_reports_the_stub(capsys):
    checks.check_decode_step(_stub)
    assert "decode_step: not attempted yet" in capsys.readouterr().out


# --------------------------------------------------------------------------------------------
# check_repeat_kv


def _repeat_expand(x, n_rep):
    b, h, t, d = x.shape
    return x[:, :, None].expand(b, h, n_rep, t, d).reshape(b, h * n_rep, t, d)


def _repeat_loop(x, n_rep):
    return torch.stack([x[:, g] for g in range(x.shape[1]) for _ in range(n_rep)], dim=1)


@pytest.mark.parametrize("fn", [lambda x, n: torch.repeat_interleave(x, n, dim=1), _repeat_expand, _repeat_loop,
                                grouped_query.repeat_kv],
                         ids=["repeat_interleave", "expand", "loop", "reference"])
def test_check_repeat_kv_accepts_correct_versions(fn, capsys):
    checks.check_repeat_kv(fn)
    assert capsys.readouterr().out == "✓ repeat_kv: all 5 cases pass.\n"


@pytest.mark.parametrize("fn, hint", [
    (lambda x, n: x.repeat(1, n, 1, 1), "groups are interleaved"),
    (lambda x, n: x.repeat_interleave(n, dim=2), "tokens are repeated"),
    (lambda x, n: x.repeat_interleave(n, dim=-1), "features are repeated"),
    (lambda x, n: np.repeat(x.numpy(), n, axis=1), "returned a numpy array; return a torch tensor"),
], ids=["tiled", "along T", "along d", "numpy for a torch input"])
def test_check_repeat_kv_rejects_wrong_versions(fn, hint, capsys):
    _rejects(checks.check_repeat_kv, fn, hint, capsys)


# --------------------------------------------------------------------------------------------
# check_blocked_attention


def _blocked_numpy(q, k, v, block_size):
    m = np.full(q.shape[:-1] + (1,), -np.inf)
    total = np.zeros(q.shape[:-1] + (1,))
    acc = np.zeros(q.shape[:-1] + (v.shape[-1],))
    for start in range(0, k.shape[-2], block_size):
        s = q @ np.swapaxes(k[..., start:start + block_size, :], -1, -2) / np.sqrt(q.shape[-1])
        new = np.maximum(m, s.max(axis=-1, keepdims=True))
        e = np.exp(s - new)
        total = total * np.exp(m - new) + e.sum(axis=-1, keepdims=True)
        acc = acc * np.exp(m - new) + e @ v[..., start:start + block_size, :]
        m = new
    return acc / total


def _blocked_normalised_as_it_goes(q, k, v, block_size):
    """Keeps the output normalised after every block (another correct form of the recurrence)."""
    out, m, total = None, None, None
    for start in range(0, k.shape[-2], block_size):
        s = q @ np.swapaxes(k[..., start:start + block_size, :], -1, -2) / np.sqrt(q.shape[-1])
        bm = s.max(axis=-1, keepdims=True)
        e = np.exp(s - bm)
        bsum = e.sum(axis=-1, keepdims=True)
        bout = (e @ v[..., start:start + block_size, :]) / bsum
        if out is None:
            out, m, total = bout, bm, bsum
            continue
        new = np.maximum(m, bm)
        a, b = total * np.exp(m - new), bsum * np.exp(bm - new)
        out, m, total = (a * out + b * bout) / (a + b), new, a + b
    return out


@pytest.mark.parametrize("fn", [_blocked_numpy, _blocked_normalised_as_it_goes, online_softmax.blocked_attention],
                         ids=["numpy", "normalised as it goes", "reference"])
def test_check_blocked_attention_accepts_correct_versions(fn, capsys):
    checks.check_blocked_attention(fn)
    assert capsys.readouterr().out == "✓ blocked_attention: all 6 cases pass.\n"


def _without(name):
    def wrong(q, k, v, block_size):
        m = np.full(q.shape[:-1] + (1,), -np.inf)
        total = np.zeros(q.shape[:-1] + (1,))
        acc = np.zeros(q.shape[:-1] + (v.shape[-1],))
        stop = (k.shape[-2] // block_size) * block_size if name == "last" else k.shape[-2]
        for start in range(0, stop, block_size):
            s = q @ np.swapaxes(k[..., start:start + block_size, :], -1, -2) / np.sqrt(q.shape[-1])
            new = np.maximum(m, s.max(axis=-1, keepdims=True))
            e = np.exp(s - new)
            c = np.exp(m - new)
            total = (total if name == "sum" else total * c) + e.sum(axis=-1, keepdims=True)
            acc = (acc if name == "acc" else acc * c) + e @ v[..., start:start + block_size, :]
            m = new
        return acc / total

    return wrong


def _no_max(q, k, v, block_size):
    with np.errstate(over="ignore", invalid="ignore"):
        s = np.exp(q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1]))
        return (s @ v) / s.sum(axis=-1, keepdims=True)


@pytest.mark.parametrize("fn, hint", [
    (_without("last"), "after the last full block are skipped"),
    (_without("acc"), "running sum of the values is not rescaled"),
    (_without("sum"), "running sum of the exponentials is not rescaled"),
    (_no_max, "nan or inf"),
], ids=["last block dropped", "acc not rescaled", "sum not rescaled", "no maximum"])
def test_check_blocked_attention_rejects_wrong_versions(fn, hint, capsys):
    _rejects(checks.check_blocked_attention, fn, hint, capsys)
