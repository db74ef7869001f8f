"""Tests of the checkers of lessons 04-05 on attention: softmax, scaled dot-product attention, heads.

Each checker must accept every correct implementation however it is written (loops, einsum,
matmul, torch, float32, ``-inf`` or ``-1e9`` masking), reject the wrong versions a learner really
writes with the hint that names the mistake, print one line for the stub, and never let another
exception than ``AssertionError`` escape on a wrong answer.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

from course_utils import attention, checks
from tests.checker_cases import stub as _stub


def _rejects(checker, implementation, hint, capsys):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the learner's own overflow
        with pytest.raises(AssertionError, match=f"(?s){hint}") as error:
            checker(implementation)
    assert "on the case" in str(error.value)
    assert capsys.readouterr().out == ""  # no success line, no noise
    return error


# --------------------------------------------------------------------------------------------
# check_softmax

SOFTMAX_PASS = "✓ softmax: all 7 cases pass.\n"


def _softmax_loops(x, axis=-1):
    moved = np.moveaxis(np.asarray(x, dtype=np.float64), axis, -1)
    out = np.empty_like(moved)
    for index in np.ndindex(moved.shape[:-1]):
        row = moved[index]
        exps = [np.exp(value - max(row)) for value in row]
        total = sum(exps)
        out[index] = [e / total for e in exps]
    return np.moveaxis(out, -1, axis)


def _softmax_logsumexp(x, axis=-1):
    m = np.max(x, axis=axis, keepdims=True)
    return np.exp(x - m - np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)))


CORRECT_SOFTMAXES = {
    "stable numpy": lambda x, axis=-1: (lambda e: e / e.sum(axis=axis, keepdims=True))(
        np.exp(x - x.max(axis=axis, keepdims=True))
    ),
    "python loops over rows": _softmax_loops,
    "log-sum-exp": _softmax_logsumexp,
    "torch.softmax": lambda x, axis=-1: torch.softmax(torch.as_tensor(x), dim=axis),
    "float32 arithmetic": lambda x, axis=-1: (lambda e: e / e.sum(axis=axis, keepdims=True))(
        np.exp(np.float32(x) - np.float32(x).max(axis=axis, keepdims=True))
    ),
    "the package's reference": attention.softmax,
}


@pytest.mark.parametrize("implementation", CORRECT_SOFTMAXES.values(), ids=CORRECT_SOFTMAXES.keys())
def test_check_softmax_accepts_correct_implementations(implementation, capsys):
    assert checks.check_softmax(implementation) is None
    assert capsys.readouterr().out == SOFTMAX_PASS


def _naive(x, axis=-1):
    return np.exp(x) / np.exp(x).sum(axis=axis, keepdims=True)


WRONG_SOFTMAXES = {
    "no max subtraction (overflow)": (_naive, r"large values.*nan or inf.*Subtract the maximum of each row"),
    "subtracts the global max": (
        lambda x, axis=-1: _naive(x - np.max(x), axis),
        r"nan or inf.*Subtract the maximum of each row",
    ),
    "exp without normalising": (lambda x, axis=-1: np.exp(x), r"without the division by their sum"),
    "stable exp, not normalised": (
        lambda x, axis=-1: np.exp(x - x.max(axis=axis, keepdims=True)),
        r"not normalised: divide by their sum",
    ),
    "always over axis 0": (
        lambda x, axis=-1: attention.softmax(x, axis=0),
        r"case 'a matrix \(3, 5\).*sum to 1 along axis 0",
    ),
    "ignores the axis": (
        lambda x, axis=-1: attention.softmax(x, axis=-1),
        r"case 'a matrix \(4, 3\), axis=0.*the axis argument is ignored",
    ),
    "sums over the whole array": (
        lambda x, axis=-1: (lambda e: e / e.sum())(np.exp(x - x.max())),
        r"sum to 1 over the whole array",
    ),
    "no keepdims (crashes on a matrix)": (
        lambda x, axis=-1: (lambda e: e / e.sum(axis=axis))(np.exp(x - x.max(axis=axis, keepdims=True))),
        r"raised ValueError.*The checker calls softmax\(x, axis\).*keepdims=True",
    ),
    "normalises x, not exp(x)": (
        lambda x, axis=-1: x / x.sum(axis=axis, keepdims=True),
        r"without the exponential",
    ),
    "log-softmax": (
        lambda x, axis=-1: (
            x - x.max(axis, keepdims=True) - np.log(np.exp(x - x.max(axis, keepdims=True)).sum(axis, keepdims=True))
        ),
        r"some values are negative",
    ),
    "something else": (lambda x, axis=-1: attention.softmax(2 * x, axis), r"Hint: softmax\(x\) = exp\(x - max\)"),
}


@pytest.mark.parametrize("implementation, hint", WRONG_SOFTMAXES.values(), ids=WRONG_SOFTMAXES.keys())
def test_check_softmax_rejects_common_mistakes_with_a_hint(implementation, hint, capsys):
    _rejects(checks.check_softmax, implementation, hint, capsys)


def test_check_softmax_square_matrix_catches_a_missing_keepdims_by_value(capsys):
    """On a square matrix, forgetting keepdims divides by the column sums: no error, wrong values."""

    def no_keepdims_2d_only(x, axis=-1):
        e = np.exp(x - x.max(axis=axis, keepdims=True))
        return e / e.sum(axis=axis) if x.ndim == 2 and x.shape[0] == x.shape[1] else e / e.sum(axis, keepdims=True)

    _rejects(checks.check_softmax, no_keepdims_2d_only, r"square matrix.*broadcast along the wrong axis", capsys)


# --------------------------------------------------------------------------------------------
# check_scaled_dot_product_attention

SDPA_PASS_MASKED = "✓ scaled_dot_product_attention: all 11 cases pass.\n"
SDPA_PASS_UNMASKED = "✓ scaled_dot_product_attention: all 6 cases pass.\n"


def _softmax(scores):
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _sdpa_fill(fill):
    def sdpa(queries, keys, values, mask=None):
        scores = queries @ np.swapaxes(keys, -1, -2) / np.sqrt(queries.shape[-1])
        if mask is not None:
            scores = np.where(mask, scores, fill)
        weights = _softmax(scores)
        return weights @ values, weights

    return sdpa


def _sdpa_einsum(queries, keys, values, mask=None):
    scores = np.einsum("...qd,...kd->...qk", queries, keys) / np.sqrt(queries.shape[-1])
    if mask is not None:
        scores = scores + np.where(mask, 0.0, -np.inf)  # an additive mask
    weights = _softmax(scores)
    return np.einsum("...qk,...kv->...qv", weights, values), weights


def _sdpa_loops(queries, keys, values, mask=None):
    """Python loops over the batch and over the queries, on flattened leading axes."""
    batch = np.broadcast_shapes(queries.shape[:-2], keys.shape[:-2])
    t_q, t_k = queries.shape[-2], keys.shape[-2]
    q = np.broadcast_to(queries, (*batch, *queries.shape[-2:])).reshape(-1, t_q, queries.shape[-1])
    k = np.broadcast_to(keys, (*batch, *keys.shape[-2:])).reshape(-1, t_k, keys.shape[-1])
    v = np.broadcast_to(values, (*batch, *values.shape[-2:])).reshape(-1, t_k, values.shape[-1])
    m = (
        np.ones((len(q), t_q, t_k), bool)
        if mask is None
        else np.broadcast_to(mask, (*batch, t_q, t_k)).reshape(-1, t_q, t_k)
    )
    outputs, all_weights = np.zeros((len(q), t_q, v.shape[-1])), np.zeros((len(q), t_q, t_k))
    for b in range(len(q)):
        for i in range(t_q):
            scores = [q[b, i] @ k[b, j] / np.sqrt(q.shape[-1]) if m[b, i, j] else -1e9 for j in range(t_k)]
            all_weights[b, i] = _softmax(np.array(scores))
            outputs[b, i] = sum(all_weights[b, i, j] * v[b, j] for j in range(t_k))
    return outputs.reshape(*batch, t_q, -1), all_weights.reshape(*batch, t_q, t_k)


def _sdpa_float32(queries, keys, values, mask=None):
    q, k, v = (np.asarray(a, dtype=np.float32) for a in (queries, keys, values))
    return _sdpa_fill(np.float32(-1e9))(q, k, v, mask)


def _sdpa_2d_transpose_with_batch_loop(queries, keys, values, mask=None):
    """.T on each 2-D slice, looping over the leading axes: right for every case."""
    if queries.ndim == 2:
        scores = queries @ keys.T / np.sqrt(keys.shape[1])
        if mask is not None:
            scores = np.where(mask, scores, -np.inf)
        weights = _softmax(scores)
        return weights @ values, weights
    scores_shape = (*queries.shape[:-1], keys.shape[-2])
    masks = [None] * len(queries) if mask is None else np.broadcast_to(mask, scores_shape)
    pairs = [_sdpa_2d_transpose_with_batch_loop(q, k, v, m) for q, k, v, m in zip(queries, keys, values, masks)]
    return np.stack([p[0] for p in pairs]), np.stack([p[1] for p in pairs])


CORRECT_SDPAS = {
    "matmul, -inf": _sdpa_fill(-np.inf),
    "matmul, -1e9": _sdpa_fill(-1e9),
    "matmul, finfo.min": _sdpa_fill(np.finfo(np.float64).min),
    "einsum, additive -inf mask": _sdpa_einsum,
    "python loops, -1e9": _sdpa_loops,
    "2-D code with a loop over the batch, .T": _sdpa_2d_transpose_with_batch_loop,
    "float32 arithmetic, -1e9": _sdpa_float32,
    "the package's reference": attention.scaled_dot_product_attention,
}


@pytest.mark.parametrize("implementation", CORRECT_SDPAS.values(), ids=CORRECT_SDPAS.keys())
def test_check_sdpa_accepts_correct_implementations(implementation, capsys):
    assert checks.check_scaled_dot_product_attention(implementation) is None
    assert capsys.readouterr().out == SDPA_PASS_MASKED


def test_check_sdpa_accepts_torch_results(capsys):
    def torch_version(queries, keys, values, mask=None):
        q, k, v = (torch.as_tensor(a) for a in (queries, keys, values))
        scores = q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5
        if mask is not None:
            scores = scores.masked_fill(~torch.as_tensor(mask), float("-inf"))
        weights = scores.softmax(dim=-1)
        return weights @ v, weights

    checks.check_scaled_dot_product_attention(torch_version)
    assert capsys.readouterr().out == SDPA_PASS_MASKED


def test_check_sdpa_without_a_mask_argument_runs_the_unmasked_cases(capsys):
    """Lesson 04's version takes no mask: it is checked on the six unmasked cases only."""

    def lesson_04(queries, keys, values):
        weights = _softmax(queries @ np.swapaxes(keys, -1, -2) / np.sqrt(queries.shape[-1]))
        return weights @ values, weights

    checks.check_scaled_dot_product_attention(lesson_04)
    assert capsys.readouterr().out == SDPA_PASS_UNMASKED


def _scaled_by(divisor):
    def sdpa(queries, keys, values, mask=None):
        scores = queries @ np.swapaxes(keys, -1, -2) / divisor(queries, values)
        if mask is not None:
            scores = np.where(mask, scores, -np.inf)
        weights = _softmax(scores)
        return weights @ values, weights

    return sdpa


def _masked(how):
    def sdpa(queries, keys, values, mask=None):
        scores = queries @ np.swapaxes(keys, -1, -2) / np.sqrt(queries.shape[-1])
        if mask is None:
            weights = _softmax(scores)
        elif how == "inverted":
            weights = _softmax(np.where(mask, -np.inf, scores))
        elif how == "inverted, -1e9":
            weights = _softmax(np.where(mask, -1e9, scores))
        elif how == "multiplied":
            weights = _softmax(scores * mask)
        elif how == "filled with 0":
            weights = _softmax(np.where(mask, scores, 0.0))
        elif how == "after softmax":
            weights = _softmax(scores) * mask
        elif how == "ignored":
            weights = _softmax(scores)
        elif how == "boolean indexing":
            scores[~mask] = -np.inf  # fails when the mask broadcasts
            weights = _softmax(scores)
        return weights @ values, weights

    return sdpa


def _reference(queries, keys, values, mask=None):
    return attention.scaled_dot_product_attention(queries, keys, values, mask)


WRONG_SDPAS = {
    "no scaling": (_scaled_by(lambda q, v: 1.0), r"the scores are not scaled"),
    "scaled by d_k": (_scaled_by(lambda q, v: q.shape[-1]), r"divided by d_k: divide by its square root"),
    "scaled by sqrt(d_v)": (_scaled_by(lambda q, v: np.sqrt(v.shape[-1])), r"divided by sqrt\(d_v\)"),
    "softmax over the queries": (
        lambda q, k, v, mask=None: (lambda w: (w @ v, w))(
            attention.softmax(q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1]), axis=-2)
        ),
        r"softmax is taken over the queries",
    ),
    "keys not transposed": (
        lambda q, k, v, mask=None: (lambda w: (w @ v, w))(_softmax(q @ k / np.sqrt(q.shape[-1]))),
        r"the keys are not transposed",
    ),
    "keys.T on a batch": (
        lambda q, k, v, mask=None: (lambda w: (w @ v, w))(_softmax(q @ k.T / np.sqrt(q.shape[-1]))),
        r"raised ValueError on the case 'a batch.*keys\.T reverses every axis of a batch",
    ),
    "values transposed": (
        lambda q, k, v, mask=None: (lambda w: (w @ v.T, w))(_softmax(q @ np.swapaxes(k, -1, -2) / 2)),
        r"raised ValueError.*the output is weights @ values",
    ),
    "pair in the wrong order": (lambda *args: _reference(*args)[::-1], r"the pair is in the wrong order"),
    "returns only the output": (lambda *args: _reference(*args)[0], r"expected a pair.*return the pair"),
    "values @ weights": (
        lambda q, k, v, mask=None: (lambda out, w: (np.swapaxes(v, -1, -2) @ np.swapaxes(w, -1, -2), w))(
            *_reference(q, k, v, mask)
        ),
        r"expected the output of shape \(T_q, d_v\)=\(3, 2\), got \(2, 3\)",
    ),
    "unstable softmax": (
        lambda q, k, v, mask=None: (lambda e: (e / e.sum(-1, keepdims=True) @ v, e / e.sum(-1, keepdims=True)))(
            np.exp(q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1]))
        ),
        r"large scores.*nan or inf for large scores: your softmax overflows",
    ),
    "mask inverted (-inf)": (_masked("inverted"), r"causal mask.*a row of weights is nan.*Is the mask inverted"),
    "mask inverted (-1e9)": (_masked("inverted, -1e9"), r"causal mask.*the mask is inverted: True means"),
    "scores multiplied by the mask": (_masked("multiplied"), r"the blocked scores are set to 0 \(or multiplied"),
    "blocked scores set to 0": (_masked("filled with 0"), r"the blocked scores are set to 0"),
    "blocked scores set to -5": (_sdpa_fill(-5.0), r"a blocked key has a weight that is not zero"),
    "mask applied after the softmax": (_masked("after softmax"), r"the mask is applied after the softmax"),
    "mask ignored": (_masked("ignored"), r"causal mask.*the mask is ignored"),
    "boolean indexing with a broadcast mask": (
        _masked("boolean indexing"),
        r"raised IndexError.*use np\.where\(mask, scores, -np\.inf\)",
    ),
    "something else": (
        lambda q, k, v, mask=None: (lambda out, w: (out + 0.1, w))(*_reference(q, k, v, mask)),
        r"the output differs.*Hint: compare your code with weights = softmax",
    ),
}


@pytest.mark.parametrize("implementation, hint", WRONG_SDPAS.values(), ids=WRONG_SDPAS.keys())
def test_check_sdpa_rejects_common_mistakes_with_a_hint(implementation, hint, capsys):
    _rejects(checks.check_scaled_dot_product_attention, implementation, hint, capsys)


# --------------------------------------------------------------------------------------------
# check_split_heads and check_merge_heads


def _split_loop(x, n_heads):
    d_head = x.shape[-1] // n_heads
    return np.stack([x[:, :, h * d_head : (h + 1) * d_head] for h in range(n_heads)], axis=1)


CORRECT_SPLITS = {
    "reshape then transpose": lambda x, n_heads: x.reshape(x.shape[0], x.shape[1], n_heads, -1).transpose(0, 2, 1, 3),
    "reshape then swapaxes": lambda x, n_heads: np.swapaxes(x.reshape(*x.shape[:2], n_heads, -1), 1, 2),
    "a loop over the heads": _split_loop,
    "torch view and transpose": lambda x, n_heads: torch.as_tensor(x).view(*x.shape[:2], n_heads, -1).transpose(1, 2),
    "np.split and stack": lambda x, n_heads: np.stack(np.split(x, n_heads, axis=-1), axis=1),
    "the package's reference": attention.split_heads,
}


@pytest.mark.parametrize("implementation", CORRECT_SPLITS.values(), ids=CORRECT_SPLITS.keys())
def test_check_split_heads_accepts_correct_implementations(implementation, capsys):
    checks.check_split_heads(implementation)
    assert capsys.readouterr().out == "✓ split_heads: all 6 cases pass.\n"


WRONG_SPLITS = {
    "plain reshape to (B, H, T, d)": (
        lambda x, n_heads: x.reshape(x.shape[0], n_heads, x.shape[1], -1),
        r"the shape is right but the values are mixed up: a reshape straight to \(B, H, T, D/H\)",
    ),
    "no transpose": (
        lambda x, n_heads: x.reshape(x.shape[0], x.shape[1], n_heads, -1),
        r"expected the result of shape \(B, H, T, D/H\)=\(2, 2, 3, 4\), got \(2, 3, 2, 4\).*swap the axes T and H",
    ),
    "heads interleaved": (
        lambda x, n_heads: x.reshape(x.shape[0], x.shape[1], -1, n_heads).transpose(0, 3, 1, 2),
        r"each head gets every H-th value",
    ),
    "wrong axes transposed": (
        lambda x, n_heads: x.reshape(x.shape[0], x.shape[1], n_heads, -1).transpose(0, 2, 3, 1),
        r"the wrong axes are swapped",
    ),
    ".T on the 4-D array": (
        lambda x, n_heads: x.reshape(x.shape[0], x.shape[1], n_heads, -1).T,
        r"x\.T reverses every axis",
    ),
    "something else": (lambda x, n_heads: attention.split_heads(x[:, ::-1], n_heads), r"the shape is right but"),
}


@pytest.mark.parametrize("implementation, hint", WRONG_SPLITS.values(), ids=WRONG_SPLITS.keys())
def test_check_split_heads_rejects_common_mistakes_with_a_hint(implementation, hint, capsys):
    _rejects(checks.check_split_heads, implementation, hint, capsys)


def _merge_loop(x):
    batch, n_heads, seq_len, d_head = x.shape
    out = np.zeros((batch, seq_len, n_heads * d_head))
    for b in range(batch):
        for t in range(seq_len):
            out[b, t] = np.concatenate([x[b, h, t] for h in range(n_heads)])
    return out


CORRECT_MERGES = {
    "transpose then reshape": lambda x: x.transpose(0, 2, 1, 3).reshape(x.shape[0], x.shape[2], -1),
    "concatenate the heads": lambda x: np.concatenate([x[:, h] for h in range(x.shape[1])], axis=-1),
    "python loops": _merge_loop,
    "torch transpose, contiguous, view": lambda x: (
        torch.as_tensor(x).transpose(1, 2).contiguous().view(x.shape[0], x.shape[2], -1)
    ),
    "the package's reference": attention.merge_heads,
}


@pytest.mark.parametrize("implementation", CORRECT_MERGES.values(), ids=CORRECT_MERGES.keys())
def test_check_merge_heads_accepts_correct_implementations(implementation, capsys):
    checks.check_merge_heads(implementation)
    assert capsys.readouterr().out == "✓ merge_heads: all 5 cases pass.\n"


WRONG_MERGES = {
    "reshape without transposing back": (
        lambda x: x.reshape(x.shape[0], x.shape[2], -1),
        r"swap the axes H and T back first",
    ),
    "heads interleaved": (lambda x: x.transpose(0, 2, 3, 1).reshape(x.shape[0], x.shape[2], -1), r"interleaved"),
    "no reshape": (lambda x: x.transpose(0, 2, 1, 3), r"the result is \(B, T, H, d_head\)"),
    "concatenated along T": (
        lambda x: np.concatenate([x[:, h] for h in range(x.shape[1])], axis=1),
        r"concatenated along the sequence",
    ),
    "something else": (lambda x: attention.merge_heads(x[:, ::-1]), r"the shape is right but the values are not"),
}


@pytest.mark.parametrize("implementation, hint", WRONG_MERGES.values(), ids=WRONG_MERGES.keys())
def test_check_merge_heads_rejects_common_mistakes_with_a_hint(implementation, hint, capsys):
    _rejects(checks.check_merge_heads, implementation, hint, capsys)


# --------------------------------------------------------------------------------------------
# All four: the stub, non-callables, robustness to any wrong answer

CHECKERS = {
    "softmax": checks.check_softmax,
    "scaled_dot_product_attention": checks.check_scaled_dot_product_attention,
    "split_heads": checks.check_split_heads,
    "merge_heads": checks.check_merge_heads,
}


@pytest.mark.parametrize("name", CHECKERS)
def test_the_stub_prints_the_not_attempted_line(name, capsys):
    assert CHECKERS[name](_stub) is None
    assert capsys.readouterr().out == checks.not_attempted_message(name) + "\n"


@pytest.mark.parametrize("name", CHECKERS)
def test_checkers_reject_non_callables(name):
    with pytest.raises(TypeError, match=r"expected the function \w+ itself"):
        CHECKERS[name](np.zeros(3))


ODD_ANSWERS = {
    "a string": lambda *args, **kwargs: "softmax",
    "a dict": lambda *args, **kwargs: {"output": 1},
    "a ragged list": lambda *args, **kwargs: [[1.0, 2.0], [3.0]],
    "a scalar": lambda *args, **kwargs: 0.5,
    "an empty tuple": lambda *args, **kwargs: (),
    "a pair of strings": lambda *args, **kwargs: ("a", "b"),
    "a pair of ragged lists": lambda *args, **kwargs: ([[1.0], [2.0, 3.0]], [[1.0], []]),
    "all nan": lambda x, *args, **kwargs: np.full(np.shape(x), np.nan),
    "a tensor that requires grad": lambda x, *args, **kwargs: torch.zeros(np.shape(x), requires_grad=True),
    "a pair of tensors that require grad": lambda x, *args, **kwargs: (
        torch.zeros(np.shape(x), requires_grad=True),
        torch.ones(np.shape(x), requires_grad=True),
    ),
    "an object array": lambda x, *args, **kwargs: np.array([object(), object()]),
}


@pytest.mark.parametrize("answer", ODD_ANSWERS.values(), ids=ODD_ANSWERS.keys())
@pytest.mark.parametrize("name", CHECKERS)
def test_checkers_never_crash_on_a_wrong_answer(name, answer, capsys):
    with pytest.raises(AssertionError, match=f"{name} is not right yet on the case"):
        CHECKERS[name](answer)
    assert capsys.readouterr().out == ""


def test_a_function_that_writes_into_its_inputs_is_refused_and_the_cases_survive(capsys):
    def vandal(queries, keys, values, mask=None):
        result = attention.scaled_dot_product_attention(queries, keys, values, mask)
        for array in (queries, keys, values):
            array[...] = 0.0
        return result

    with pytest.raises(AssertionError, match="changed its input `queries` in place"):
        checks.check_scaled_dot_product_attention(vandal)
    checks.check_scaled_dot_product_attention(attention.scaled_dot_product_attention)
    assert capsys.readouterr().out == SDPA_PASS_MASKED


# --------------------------------------------------------------------------------------------
# check_weights_entropy (lesson 04: predict, then measure what dropping the 1/sqrt(d_k) does)

ENTROPY_PASS = "✓ weights_entropy: all 7 cases pass.\n"


def _entropy_numpy(queries, keys, scaled=True):
    scores = queries @ np.swapaxes(keys, -1, -2)
    if scaled:
        scores = scores / np.sqrt(queries.shape[-1])
    w = np.exp(scores - scores.max(axis=-1, keepdims=True))
    w = w / w.sum(axis=-1, keepdims=True)
    return -(w * np.log(np.where(w > 0, w, 1.0))).sum(axis=-1)


def _entropy_loops(queries, keys, scaled=True):
    queries, keys = np.asarray(queries, dtype=float), np.asarray(keys, dtype=float)
    batch = np.broadcast_shapes(queries.shape[:-2], keys.shape[:-2])
    q, k = np.broadcast_to(queries, (*batch, *queries.shape[-2:])), np.broadcast_to(keys, (*batch, *keys.shape[-2:]))
    out = np.zeros((*batch, queries.shape[-2]))
    for index in np.ndindex(*batch, queries.shape[-2]):
        row = [float(np.dot(q[index], key)) for key in k[index[:-1]]]
        if scaled:
            row = [s / np.sqrt(queries.shape[-1]) for s in row]
        top = max(row)
        exps = [np.exp(s - top) for s in row]
        total = sum(exps)
        out[index] = -sum(e / total * np.log(e / total) for e in exps if e > 0)
    return out


def _entropy_xlogy(queries, keys, scaled=True):
    q, k = torch.as_tensor(queries), torch.as_tensor(keys)
    w = torch.softmax(q @ k.transpose(-2, -1) / (q.shape[-1] ** 0.5 if scaled else 1.0), dim=-1)
    return -torch.special.xlogy(w, w).sum(-1)  # xlogy(0, 0) = 0


def _entropy_torch(queries, keys, scaled=True):
    q, k = torch.as_tensor(queries), torch.as_tensor(keys)
    scores = q @ k.transpose(-2, -1) / (q.shape[-1] ** 0.5 if scaled else 1)
    return torch.distributions.Categorical(logits=scores).entropy()  # log-softmax inside: no 0 * log 0


def _entropy_log_softmax(queries, keys, scaled=True):
    scores = np.einsum("...qd,...kd->...qk", queries, keys) * (queries.shape[-1] ** -0.5 if scaled else 1.0)
    log_w = scores - scores.max(-1, keepdims=True)
    log_w = log_w - np.log(np.exp(log_w).sum(-1, keepdims=True))
    return -(np.exp(log_w) * log_w).sum(-1)  # exp(-big) * (-big) is 0 * finite, no nan


CORRECT_ENTROPIES = {
    "numpy, np.where for 0 log 0": _entropy_numpy,
    "python loops, skipping zero weights": _entropy_loops,
    "torch.special.xlogy": _entropy_xlogy,
    "torch Categorical(logits=...).entropy()": _entropy_torch,
    "einsum and log-softmax": _entropy_log_softmax,
    "the package's softmax, clipped log": lambda q, k, scaled=True: -(
        (w := attention.softmax(q @ np.swapaxes(k, -1, -2) / (np.sqrt(q.shape[-1]) if scaled else 1)))
        * np.log(np.clip(w, 1e-300, None))
    ).sum(-1),
    "the package's reference": attention.weights_entropy,
}


@pytest.mark.parametrize("implementation", CORRECT_ENTROPIES.values(), ids=CORRECT_ENTROPIES.keys())
def test_check_weights_entropy_accepts_correct_implementations(implementation, capsys):
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # a correct version warns of nothing here
        assert checks.check_weights_entropy(implementation) is None
    assert capsys.readouterr().out == ENTROPY_PASS


def _with(scale, *, log=np.log, reduce=np.sum, axis=-1, nan_at_zero=False, sign=-1.0, stable=True):
    """A learner's version: ``scale(d_k, scaled)`` divides the scores; the other knobs are the mistakes."""

    def entropy(queries, keys, scaled=True):
        scores = queries @ np.swapaxes(keys, -1, -2) / scale(queries.shape[-1], scaled)
        e = np.exp(scores - scores.max(axis=axis, keepdims=True)) if stable else np.exp(scores)
        w = e / e.sum(axis=axis, keepdims=True)
        logs = log(w) if nan_at_zero else log(np.where(w > 0, w, 1.0))
        return sign * reduce(w * logs, axis=-1)

    return entropy


RIGHT_SCALE = lambda d_k, scaled: np.sqrt(d_k) if scaled else 1.0  # noqa: E731

WRONG_ENTROPIES = {
    "divides by d_k": (_with(lambda d_k, scaled: d_k if scaled else 1.0), r"divided by d_k: the scale is its square root"),
    "always scales": (_with(lambda d_k, scaled: np.sqrt(d_k)), r"with scaled=False the scores are still divided"),
    "never scales": (_with(lambda d_k, scaled: 1.0), r"never divided by √d_k"),
    "reads scaled the wrong way round": (
        _with(lambda d_k, scaled: 1.0 if scaled else np.sqrt(d_k)),
        r"case 'one sentence.*never divided by √d_k",
    ),
    "bits, not nats": (_with(RIGHT_SCALE, log=np.log2), r"in bits.*np\.log"),
    "mean over the keys": (_with(RIGHT_SCALE, reduce=np.mean), r"averaged over the keys"),
    "softmax over the queries": (_with(RIGHT_SCALE, axis=-2), r"softmax runs over the queries"),
    "0 * log(0) gives nan": (_with(RIGHT_SCALE, nan_at_zero=True), r"exactly 0.*0 \* log\(0\) is nan"),
    "plain exp overflows": (_with(RIGHT_SCALE, stable=False), r"large scores.*exp overflowed"),
    "minus sign missing": (_with(RIGHT_SCALE, sign=1.0), r"negative.*minus sign missing"),
    "one mean for everything": (lambda q, k, scaled=True: float(np.mean(_entropy_numpy(q, k, scaled))), r"one number for everything"),
    "keys.T on a batch": (
        lambda q, k, scaled=True: _entropy_numpy(q, k, scaled) if k.ndim == 2 else q @ k.T,
        r"raised ValueError.*np\.swapaxes\(keys, -1, -2\)",
    ),
}


@pytest.mark.parametrize("implementation, hint", WRONG_ENTROPIES.values(), ids=WRONG_ENTROPIES.keys())
def test_check_weights_entropy_rejects_common_mistakes_with_a_hint(implementation, hint, capsys):
    _rejects(checks.check_weights_entropy, implementation, hint, capsys)


def test_check_weights_entropy_says_not_attempted_for_the_stub(capsys):
    checks.check_weights_entropy(_stub)
    assert capsys.readouterr().out.startswith("○ weights_entropy: not attempted yet.")


def test_the_reference_entropy_is_ln_t_for_uniform_weights_and_0_for_one_hot():
    keys = np.eye(4)  # (T_k=4, d_k=4)
    assert np.isclose(attention.weights_entropy(np.zeros((1, 4)), keys)[0], np.log(4))
    assert attention.weights_entropy(np.array([[1e4, 0, 0, 0]]), keys, False)[0] == 0.0
    with pytest.raises(TypeError, match="scaled to be True or False"):
        attention.weights_entropy(np.zeros((1, 4)), keys, "yes")
    with pytest.raises(ValueError, match=r"keys \(\.\.\., T_k >= 1, d_k\)"):
        attention.weights_entropy(np.zeros((1, 4)), np.zeros((3, 5)))
