"""Tests of the checkers of lesson 05 on masks: check_causal_mask and check_padding_mask.

Every correct version passes (numpy, loops, comparisons of positions, torch, nested lists); the
wrong versions a learner writes (transposed, strict, inverted, integer or float, wrong shape) are
rejected with the hint naming the mistake; the stub prints one line; odd answers never crash.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from course_utils import checks, masking
from tests.checker_cases import rejects as _rejects
from tests.checker_cases import stub as _stub

# --------------------------------------------------------------------------------------------
# check_causal_mask

CAUSAL_PASS = "✓ causal_mask: all 5 cases pass.\n"


def _causal_loops(seq_len):
    mask = np.zeros((seq_len, seq_len), dtype=bool)
    for query in range(seq_len):
        for key in range(seq_len):
            mask[query, key] = key <= query
    return mask


CORRECT_CAUSAL_MASKS = {
    "np.tril of booleans": lambda seq_len: np.tril(np.ones((seq_len, seq_len), dtype=bool)),
    "np.tri": lambda seq_len: np.tri(seq_len, dtype=bool),
    "comparing positions": lambda seq_len: np.arange(seq_len)[None, :] <= np.arange(seq_len)[:, None],
    "np.tril then astype(bool)": lambda seq_len: np.tril(np.ones((seq_len, seq_len))).astype(bool),
    "python loops": _causal_loops,
    "not the upper triangle": lambda seq_len: ~np.triu(np.ones((seq_len, seq_len), dtype=bool), k=1),
    "torch": lambda seq_len: torch.ones(seq_len, seq_len, dtype=torch.bool).tril(),
    "the package's reference": masking.causal_mask,
}


@pytest.mark.parametrize("implementation", CORRECT_CAUSAL_MASKS.values(), ids=CORRECT_CAUSAL_MASKS.keys())
def test_check_causal_mask_accepts_correct_implementations(implementation, capsys):
    assert checks.check_causal_mask(implementation) is None
    assert capsys.readouterr().out == CAUSAL_PASS


WRONG_CAUSAL_MASKS = {
    "transposed (upper triangle)": (
        lambda seq_len: np.triu(np.ones((seq_len, seq_len), dtype=bool)),
        r"case 'seq_len=4'.*entries are wrong.*the mask is transposed \(the upper triangle\)",
    ),
    "strict (diagonal excluded)": (
        lambda seq_len: np.tril(np.ones((seq_len, seq_len), dtype=bool), k=-1),
        r"the diagonal is blocked: a token may attend to itself",
    ),
    "inverted (True = blocked)": (
        lambda seq_len: np.triu(np.ones((seq_len, seq_len), dtype=bool), k=1),
        r"the mask is inverted: True means 'may attend'",
    ),
    "integers instead of booleans": (
        lambda seq_len: np.tril(np.ones((seq_len, seq_len), dtype=int)),
        r"returned a mask of dtype int64; return a boolean mask \(dtype bool",
    ),
    "floats (np.tril of np.ones)": (
        lambda seq_len: np.tril(np.ones((seq_len, seq_len))),
        r"returned a mask of dtype float64; return a boolean mask \(dtype bool",
    ),
    "float, transposed": (
        lambda seq_len: np.triu(np.ones((seq_len, seq_len))),
        r"got values of dtype float64.*Hint: the mask is not boolean",
    ),
    "torch int tril": (
        lambda seq_len: torch.ones(seq_len, seq_len).tril().long(),
        r"returned a mask of dtype int64; return a boolean mask \(dtype bool",
    ),
    "nothing blocked": (lambda seq_len: np.ones((seq_len, seq_len), dtype=bool), r"everything is allowed"),
    "a (T, T+1) mask": (
        lambda seq_len: np.tri(seq_len, seq_len + 1, dtype=bool),
        r"expected a mask of shape \(T, T\)=\(4, 4\), got \(4, 5\)",
    ),
    "something else": (
        lambda seq_len: np.tri(seq_len, k=1, dtype=bool),
        r"Hint: row i is query i: it may attend to the keys 0 \.\.\. i",
    ),
}


@pytest.mark.parametrize("implementation, hint", WRONG_CAUSAL_MASKS.values(), ids=WRONG_CAUSAL_MASKS.keys())
def test_check_causal_mask_rejects_common_mistakes_with_a_hint(implementation, hint, capsys):
    _rejects(checks.check_causal_mask, implementation, hint, capsys)


# --------------------------------------------------------------------------------------------
# check_padding_mask

PADDING_PASS = "✓ padding_mask: all 5 cases pass.\n"


def _padding_loops(attention_mask):
    batch, seq_len = attention_mask.shape
    mask = np.zeros((batch, 1, 1, seq_len), dtype=bool)
    for b in range(batch):
        for t in range(seq_len):
            mask[b, 0, 0, t] = attention_mask[b, t] == 1
    return mask


CORRECT_PADDING_MASKS = {
    "== 1 then new axes": lambda attention_mask: (attention_mask == 1)[:, None, None, :],
    "astype(bool) and reshape": lambda attention_mask: attention_mask.astype(bool).reshape(
        attention_mask.shape[0], 1, 1, -1
    ),
    "np.expand_dims": lambda attention_mask: np.expand_dims(attention_mask.astype(bool), axis=(1, 2)),
    "!= 0": lambda attention_mask: attention_mask[:, np.newaxis, np.newaxis, :] != 0,
    "python loops": _padding_loops,
    "torch": lambda attention_mask: torch.as_tensor(attention_mask).bool()[:, None, None, :],
    "the package's reference": masking.padding_mask,
}


@pytest.mark.parametrize("implementation", CORRECT_PADDING_MASKS.values(), ids=CORRECT_PADDING_MASKS.keys())
def test_check_padding_mask_accepts_correct_implementations(implementation, capsys):
    assert checks.check_padding_mask(implementation) is None
    assert capsys.readouterr().out == PADDING_PASS


WRONG_PADDING_MASKS = {
    "inverted": (lambda m: (m == 0)[:, None, None, :], r"the mask is inverted: True means 'may attend'"),
    "still (B, T)": (
        lambda m: m == 1,
        r"expected a mask of shape \(B, 1, 1, T\)=\(3, 1, 1, 4\), got \(3, 4\).*add two axes",
    ),
    "(B, 1, T, 1)": (lambda m: (m == 1)[:, None, :, None], r"the mask is \(B, 1, T, 1\): it would block queries"),
    "(B, 1, T)": (lambda m: (m == 1)[:, None, :], r"the mask is \(B, 1, T\): add one more axis"),
    "float": (
        lambda m: m[:, None, None, :].astype(np.float32),
        r"returned a mask of dtype float32; return a boolean mask \(dtype bool",
    ),
    "int": (lambda m: m[:, None, None, :], r"returned a mask of dtype int64; return a boolean mask \(dtype bool"),
    "(B, T, 1, 1)": (
        lambda m: (m == 1)[:, :, None, None],
        r"the mask has the right number of values but the wrong shape",
    ),
    "something else": (
        lambda m: np.ones((m.shape[0], 1, 1, m.shape[1]), dtype=bool),
        r"Hint: True where attention_mask is 1",
    ),
}


@pytest.mark.parametrize("implementation, hint", WRONG_PADDING_MASKS.values(), ids=WRONG_PADDING_MASKS.keys())
def test_check_padding_mask_rejects_common_mistakes_with_a_hint(implementation, hint, capsys):
    _rejects(checks.check_padding_mask, implementation, hint, capsys)


# --------------------------------------------------------------------------------------------
# Both: the stub, non-callables, odd answers

CHECKERS = {"causal_mask": checks.check_causal_mask, "padding_mask": checks.check_padding_mask}


@pytest.mark.parametrize("name", CHECKERS)
def test_the_stub_prints_the_not_attempted_line(name, capsys):
    assert CHECKERS[name](_stub) is None
    assert capsys.readouterr().out == checks.not_attempted_message(name) + "\n"


@pytest.mark.parametrize("name", CHECKERS)
def test_checkers_reject_non_callables(name):
    with pytest.raises(TypeError, match=r"expected the function \w+ itself"):
        CHECKERS[name]("np.tril")


ODD_ANSWERS = {
    "a string": lambda arg: "tril",
    "a dict": lambda arg: {"mask": True},
    "a ragged list": lambda arg: [[True], [True, False]],
    "a scalar": lambda arg: True,
    "a list of strings": lambda arg: ["a", "b"],
    "an object array": lambda arg: np.array([object()]),
    "a tensor that requires grad": lambda arg: torch.zeros(3, requires_grad=True),
}


@pytest.mark.parametrize("answer", ODD_ANSWERS.values(), ids=ODD_ANSWERS.keys())
@pytest.mark.parametrize("name", CHECKERS)
def test_checkers_never_crash_on_a_wrong_answer(name, answer, capsys):
    with pytest.raises(AssertionError, match=f"{name} is not right yet on the case"):
        CHECKERS[name](answer)
    assert capsys.readouterr().out == ""


# --------------------------------------------------------------------------------------------
# check_safe_masked_softmax: attention weights under a mask, rows with no allowed key

SAFE_PASS = "✓ safe_masked_softmax: all 8 cases pass.\n"


def _softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _fill_inf_then_nan_to_num(scores, mask):
    with np.errstate(invalid="ignore"):
        return np.nan_to_num(_softmax(np.where(mask, scores, -np.inf)))


def _fill_min_then_times_mask(scores, mask):
    return _softmax(np.where(mask, scores, np.finfo(scores.dtype).min)) * mask


def _fill_minus_1e9_then_zero_empty_rows(scores, mask):
    weights = _softmax(np.where(mask, scores, -1e9))
    return np.where(np.broadcast_to(mask, scores.shape).any(axis=-1, keepdims=True), weights, 0.0)


def _exp_of_allowed_only(scores, mask):
    allowed = np.broadcast_to(mask, scores.shape)
    top = np.where(allowed, scores, -np.inf).max(axis=-1, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    exps = np.exp(np.where(allowed, scores - top, -np.inf))
    sums = exps.sum(axis=-1, keepdims=True)
    return np.divide(exps, sums, out=np.zeros_like(exps), where=sums > 0)


def _python_loops(scores, mask):
    allowed = np.broadcast_to(mask, scores.shape)
    weights = np.zeros(scores.shape)
    for index in np.ndindex(scores.shape[:-1]):
        keys = [j for j in range(scores.shape[-1]) if allowed[index][j]]
        if not keys:
            continue
        top = max(scores[index][j] for j in keys)
        total = sum(np.exp(scores[index][j] - top) for j in keys)
        for j in keys:
            weights[index][j] = np.exp(scores[index][j] - top) / total
    return weights


def _torch_masked_fill(scores, mask):
    scores, mask = torch.as_tensor(scores), torch.as_tensor(mask)
    return torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1).nan_to_num(0.0)


def _torch_where_any(scores, mask):
    scores, mask = torch.as_tensor(scores), torch.as_tensor(mask).expand(scores.shape)
    weights = torch.softmax(scores.masked_fill(~mask, torch.finfo(scores.dtype).min), dim=-1)
    return torch.where(mask.any(dim=-1, keepdim=True), weights, 0.0)


CORRECT_SAFE_SOFTMAXES = {
    "fill -inf, then nan_to_num": _fill_inf_then_nan_to_num,
    "fill finfo.min, then times the mask": _fill_min_then_times_mask,
    "fill -1e9, then zero the empty rows": _fill_minus_1e9_then_zero_empty_rows,
    "exp of the allowed scores only": _exp_of_allowed_only,
    "python loops": _python_loops,
    "torch masked_fill and nan_to_num": _torch_masked_fill,
    "torch, finfo.min and where": _torch_where_any,
    "float32 throughout": lambda s, m: _fill_min_then_times_mask(np.asarray(s, np.float32), m),
    "the package's reference": masking.safe_masked_softmax,
}


@pytest.mark.parametrize("implementation", CORRECT_SAFE_SOFTMAXES.values(), ids=CORRECT_SAFE_SOFTMAXES.keys())
def test_check_safe_masked_softmax_accepts_correct_implementations(implementation, capsys):
    assert checks.check_safe_masked_softmax(implementation) is None
    assert capsys.readouterr().out == SAFE_PASS


def _after_softmax(scores, mask):
    return _softmax(scores) * mask


def _after_softmax_renormalised(scores, mask):
    weights = _softmax(scores) * mask
    with np.errstate(invalid="ignore"):
        return weights / weights.sum(axis=-1, keepdims=True)


def _after_softmax_renormalised_nan_to_num(scores, mask):
    return np.nan_to_num(_after_softmax_renormalised(scores, mask))


def _no_max_subtraction(scores, mask):
    with np.errstate(over="ignore", invalid="ignore"):
        exps = np.exp(np.where(mask, scores, -np.inf))
        return np.nan_to_num(exps / exps.sum(axis=-1, keepdims=True))


def _fill_inf_only(scores, mask):
    with np.errstate(invalid="ignore"):
        return _softmax(np.where(mask, scores, -np.inf))


WRONG_SAFE_SOFTMAXES = {
    "mask after the softmax": (_after_softmax, r"case 'scores \(3, 5\).*the mask is applied after the softmax"),
    "mask after the softmax, renormalised": (
        _after_softmax_renormalised,
        r"case 'blocked keys with far larger.*hold nan.*masked after the softmax and divided by their new sum",
    ),
    "mask after the softmax, renormalised, nan to 0": (
        _after_softmax_renormalised_nan_to_num,
        r"case 'blocked keys with far larger scores.*divided by their new sum, nan set to 0",
    ),
    "softmax over the queries": (
        lambda s, m: np.nan_to_num(_fill_inf_only(s.swapaxes(-1, -2), np.swapaxes(m, -1, -2)).swapaxes(-1, -2) * m),
        r"the softmax is taken over the queries",
    ),
    "blocked scores set to 0": (lambda s, m: _softmax(np.where(m, s, 0.0)), r"the blocked scores are set to 0"),
    "scores times the mask": (lambda s, m: _softmax(s * m) * m.any(-1, keepdims=True),
                              r"the blocked scores are set to 0"),
    "fill -1e4 (not low enough)": (
        lambda s, m: _softmax(np.where(m, s, -1e4)) * m.any(axis=-1, keepdims=True),
        r"case 'very negative allowed scores.*a blocked key has a weight that is not zero.*not low enough",
    ),
    "fill -1e4, then times the mask (the issue-53 case)": (
        lambda s, m: _softmax(np.where(m, s, -1e4)) * m,
        r"case 'very negative allowed scores.*not below this case's allowed scores.*-np.inf",
    ),
    "log-softmax (no column sum is positive)": (
        lambda s, m: np.log(np.maximum(_fill_inf_then_nan_to_num(s, m), 1e-300)),
        r"(?!.*over the queries)^.*weights differ from the reference",
    ),
    "inverted mask": (
        lambda s, m: _fill_min_then_times_mask(s, ~m),
        r"the mask is inverted: True means 'may attend'",
    ),
    "inverted mask, -inf": (
        lambda s, m: _fill_inf_then_nan_to_num(s, ~np.asarray(m)),
        r"the mask is inverted: True means 'may attend'",
    ),
    "mask ignored": (lambda s, m: _softmax(s), r"the mask is ignored"),
    "fill -inf, empty rows left nan": (
        _fill_inf_only,
        r"case 'rows with no allowed key.*hold nan.*a row with no allowed key is nan",
    ),
    "fill finfo.min, empty rows uniform": (
        lambda s, m: _softmax(np.where(m, s, np.finfo(s.dtype).min)),
        r"case 'rows with no allowed key.*gets uniform weights 1/T_k",
    ),
    "fill -1e9, empty rows uniform": (
        lambda s, m: _softmax(np.where(m, s, -1e9)),
        r"gets uniform weights",
    ),
    "no max subtraction": (
        _no_max_subtraction,
        r"case 'large scores.*the exponentials overflow",
    ),
    "writes into scores": (
        lambda s, m: (s.__setitem__(~np.broadcast_to(m, s.shape), -np.inf), _fill_inf_then_nan_to_num(s, m))[1],
        r"changed its input `s` in place",
    ),
    "scores[~mask] with a broadcast mask": (
        lambda s, m: (lambda c: (c.__setitem__(~m, -np.inf), np.nan_to_num(_softmax(c)))[1])(s.copy()),
        r"raised IndexError.*np.where\(mask, scores, fill\) broadcasts it",
    ),
}


@pytest.mark.parametrize("implementation, hint", WRONG_SAFE_SOFTMAXES.values(), ids=WRONG_SAFE_SOFTMAXES.keys())
def test_check_safe_masked_softmax_rejects_common_mistakes_with_a_hint(implementation, hint, capsys):
    _rejects(checks.check_safe_masked_softmax, implementation, hint, capsys)


def test_safe_masked_softmax_cases_include_empty_rows_and_dominant_blocked_scores():
    """The cases that tell the wrong versions apart are there: rows with no allowed key, and blocked
    scores that make masking after the softmax underflow."""
    from course_utils.checks.masking import safe_masked_softmax_cases

    cases = safe_masked_softmax_cases()
    empty = [c for c in cases if not np.broadcast_to(c.args[1], c.args[0].shape).any(axis=-1).all()]
    assert empty and all(np.all(c.expected[~np.broadcast_to(c.args[1], c.args[0].shape).any(-1)] == 0) for c in empty)
    for case in cases:
        assert np.isfinite(case.expected).all()
        with np.errstate(invalid="ignore"):
            renormalised = _after_softmax_renormalised(np.asarray(case.args[0], np.float64), case.args[1])
        if "far larger" in case.name:
            assert np.isnan(renormalised).any()
