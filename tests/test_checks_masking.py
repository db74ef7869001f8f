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
        r"got the right values of dtype int64.*the values are right but the mask is not boolean",
    ),
    "floats (np.tril of np.ones)": (
        lambda seq_len: np.tril(np.ones((seq_len, seq_len))),
        r"got the right values of dtype float64.*make it boolean",
    ),
    "float, transposed": (
        lambda seq_len: np.triu(np.ones((seq_len, seq_len))),
        r"got values of dtype float64.*Hint: the mask is not boolean",
    ),
    "torch int tril": (
        lambda seq_len: torch.ones(seq_len, seq_len).tril().long(),
        r"dtype int64.*the mask is not boolean",
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
        r"got the right values of dtype float32.*the values are right but the mask is not boolean",
    ),
    "int": (lambda m: m[:, None, None, :], r"got the right values of dtype int64.*not boolean"),
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
