"""Tests of the checkers of lesson 08: check_classification_head and check_align_labels.

Every correct version passes (``@ W.T``, ``F.linear``, an ``nn.Sequential`` holding the weights,
``hidden[:, 0, :]``, float64, in place; a loop, a comprehension, tuples, numpy and torch results);
each wrong version a learner writes is rejected with the hint that names its mistake; the stub
prints one line; odd answers never crash the checker.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn
from torch.nn import functional as F

from course_utils import checks, data, task_heads
from course_utils.checks import task_heads as task_head_checks
from tests.checker_cases import rejects as _rejects
from tests.checker_cases import stub as _stub

# --------------------------------------------------------------------------------------------
# check_classification_head

HEAD_PASS = "✓ classification_head: all 6 cases pass.\n"


def _by_hand(hidden, wp, bp, w, b):
    cls = hidden[:, 0]
    return torch.relu(cls @ wp.T + bp) @ w.T + b


def _functional(hidden, wp, bp, w, b):
    return F.linear(F.relu(F.linear(hidden[:, 0, :], wp, bp)), w, b)


def classification_head_sequential(hidden, wp, bp, w, b):
    pre, classifier = nn.Linear(wp.shape[1], wp.shape[0]), nn.Linear(w.shape[1], w.shape[0])
    head = nn.Sequential(pre, nn.ReLU(), nn.Dropout(0.2), classifier).to(hidden.dtype).eval()
    with torch.no_grad():
        pre.weight.copy_(wp), pre.bias.copy_(bp), classifier.weight.copy_(w), classifier.bias.copy_(b)
        return head(hidden[:, 0])


def _float64_numpy(hidden, wp, bp, w, b):
    h, wp, bp, w, b = (t.double().numpy() for t in (hidden, wp, bp, w, b))
    return np.maximum(h[:, 0] @ wp.T + bp, 0) @ w.T + b


def _in_place(hidden, wp, bp, w, b):
    cls = hidden[:, 0]
    cls.copy_(cls @ wp.T)  # writes into hidden_states (wp is square)
    cls += bp
    cls.relu_()
    return torch.addmm(b, cls, w.T)


def _einsum(hidden, wp, bp, w, b):
    pooled = torch.einsum("bd,ed->be", hidden[:, 0], wp) + bp
    return torch.einsum("bd,cd->bc", pooled.clamp(min=0), w) + b


CORRECT_HEADS = {
    "by hand, @ W.T": _by_hand,
    "F.linear": _functional,
    "numpy in float64": _float64_numpy,
    "einsum and clamp": _einsum,
    "the package's reference": task_heads.classification_head,
}


@pytest.mark.parametrize("implementation", CORRECT_HEADS.values(), ids=CORRECT_HEADS.keys())
def test_check_classification_head_accepts_correct_implementations(implementation, capsys):
    assert checks.check_classification_head(implementation) is None
    assert capsys.readouterr().out == HEAD_PASS


def _head(h, wp, bp, w, b, act=torch.relu):
    return act(h @ wp.T + bp) @ w.T + b


WRONG_HEADS = {
    "mean over tokens": (
        lambda x, wp, bp, w, b: _head(x.mean(dim=1), wp, bp, w, b),
        "averaged.*hidden_states\\[:, 0\\]",
    ),
    "max over tokens": (lambda x, wp, bp, w, b: _head(x.max(dim=1).values, wp, bp, w, b), "max-pooled"),
    "last token": (lambda x, wp, bp, w, b: _head(x[:, -1, :], wp, bp, w, b), "last position"),
    "first sentence": (lambda x, wp, bp, w, b: _head(x[0], wp, bp, w, b), "first sentence"),
    "every token": (lambda x, wp, bp, w, b: _head(x, wp, bp, w, b), "every token, \\(B, T, C\\)"),
    "no ReLU": (lambda x, wp, bp, w, b: _head(x[:, 0], wp, bp, w, b, act=lambda z: z), "ReLU between the two layers"),
    "tanh, as BERT's pooler": (lambda x, wp, bp, w, b: _head(x[:, 0], wp, bp, w, b, act=torch.tanh), "BERT's pooler"),
    "GELU": (lambda x, wp, bp, w, b: _head(x[:, 0], wp, bp, w, b, act=F.gelu), "GELU"),
    "pre_classifier not transposed": (
        lambda x, wp, bp, w, b: torch.relu(x[:, 0] @ wp + bp) @ w.T + b,
        "pre_classifier_weight is used as it is.*h @ W.T",
    ),
    "softmax at the end": (lambda x, wp, bp, w, b: _head(x[:, 0], wp, bp, w, b).softmax(-1), "softmax"),
    "log_softmax at the end": (lambda x, wp, bp, w, b: F.log_softmax(_head(x[:, 0], wp, bp, w, b), -1), "log_softmax"),
    "ReLU after the classifier too": (
        lambda x, wp, bp, w, b: F.relu(_head(x[:, 0], wp, bp, w, b)),
        "after the classifier",
    ),
    "no pre_classifier bias": (
        lambda x, wp, bp, w, b: _head(x[:, 0], wp, 0 * bp, w, b),
        "pre_classifier_bias is missing",
    ),
    "no classifier bias": (lambda x, wp, bp, w, b: torch.relu(x[:, 0] @ wp.T + bp) @ w.T, "classifier_bias is missing"),
    "no classifier": (lambda x, wp, bp, w, b: torch.relu(x[:, 0] @ wp.T + bp), "classifier layer is missing"),
    "no pre_classifier": (lambda x, wp, bp, w, b: x[:, 0] @ w.T + b, "pre_classifier layer"),
    "a token axis kept": (lambda x, wp, bp, w, b: _head(x[:, :1], wp, bp, w, b), "\\(B, 1, C\\)"),
    "(C, B) instead of (B, C)": (
        lambda x, wp, bp, w, b: w @ torch.relu(wp @ x[:, 0].T + bp[:, None]) + b[:, None],
        "swapped, \\(C, B\\)",
    ),  # fmt: skip
    "the first sentence's logits only": (lambda x, wp, bp, w, b: _head(x[0, 0], wp, bp, w, b), "even when B = 1"),
    "a wrong scale": (lambda x, wp, bp, w, b: 2 * _head(x[:, 0], wp, bp, w, b), "compare with h = hidden_states"),
}


@pytest.mark.parametrize("implementation, hint", WRONG_HEADS.values(), ids=WRONG_HEADS.keys())
def test_check_classification_head_names_the_mistake(implementation, hint, capsys):
    _rejects(checks.check_classification_head, implementation, hint, capsys)


def test_untransposed_weights_raise_and_the_checker_explains_the_layout(capsys):
    """x @ W fails for the (C, D) classifier (C != D in the first case): the error hint says why."""
    with pytest.raises(AssertionError, match="(?s)raised RuntimeError.*nn.Linear's layout, \\(out, in\\).*h @ W.T"):
        checks.check_classification_head(lambda x, wp, bp, w, b: torch.relu(x[:, 0] @ wp + bp) @ w + b)
    assert capsys.readouterr().out == ""


def test_the_cases_cannot_be_changed_by_a_function_that_writes_into_them(capsys):
    def vandal(hidden, wp, bp, w, b):
        result = _by_hand(hidden, wp, bp, w, b)
        for tensor in (hidden, wp, bp, w, b):
            tensor.zero_()
        return result

    with pytest.raises(AssertionError, match="changed its input `hidden` in place"):
        checks.check_classification_head(vandal)
    with pytest.raises(AssertionError, match="changed its input"):
        checks.check_classification_head(_in_place)
    checks.check_classification_head(_by_hand)
    assert capsys.readouterr().out == HEAD_PASS


def test_check_classification_head_stub_and_odd_answers(capsys):
    assert checks.check_classification_head(_stub) is None
    assert (
        capsys.readouterr().out
        == "○ classification_head: not attempted yet. Write it above, then run this cell again.\n"
    )
    odd_answers = (None, [0.1, 0.2], "logits", {"logits": 1.0}, np.zeros((2, 7)), np.zeros(3), 0.5, [[1, 2], [3]])
    for odd in odd_answers:
        with pytest.raises(AssertionError, match="classification_head"):
            checks.check_classification_head(lambda *args, odd=odd: odd)
    with pytest.raises(AssertionError, match="(?s)raised ZeroDivisionError.*torch tensors"):
        checks.check_classification_head(lambda *args: 1 / 0)
    with pytest.raises(TypeError, match="without calling it"):
        checks.check_classification_head(torch.zeros(2, 2))
    assert capsys.readouterr().out == ""


def test_nan_logits_are_rejected(capsys):
    _rejects(checks.check_classification_head, lambda x, *args: torch.full((x.shape[0], args[2].shape[0]), np.nan),
             "nan or inf", capsys)  # fmt: skip


# --------------------------------------------------------------------------------------------
# check_align_labels

ALIGN_PASS = "✓ align_labels: all 7 cases pass.\n"


def _loop(word_ids, word_labels):
    labels, previous = [], None
    for word in word_ids:
        if word is None:
            labels.append(-100)
        elif word != previous:
            labels.append(word_labels[word])
        else:
            labels.append(-100)
        previous = word
    return labels


def _comprehension(word_ids, word_labels):
    previous = [None] + list(word_ids[:-1])
    return [-100 if w is None or w == p else word_labels[w] for w, p in zip(word_ids, previous)]


def _seen_set(word_ids, word_labels):
    seen, labels = set(), []
    for w in word_ids:
        labels.append(-100 if w is None or w in seen else word_labels[w])
        seen.add(w)
    return labels


def _numpy_result(word_ids, word_labels):
    ids = np.array([-1 if w is None else w for w in word_ids])
    labels = np.full(len(ids), -100)
    first = (ids >= 0) & (ids != np.concatenate([[-1], ids[:-1]]))
    labels[first] = np.asarray(word_labels)[ids[first]]
    return labels  # numpy integers


def _tuple_of_numpy_ints(word_ids, word_labels):
    return tuple(np.int64(v) for v in _loop(word_ids, word_labels))


def _torch_result(word_ids, word_labels):
    return torch.tensor(_loop(word_ids, word_labels))


def align_labels_consuming_its_input(word_ids, word_labels):
    labels = []
    previous = None
    while word_ids:  # empties the list it was given
        word = word_ids.pop(0)
        labels.append(-100 if word is None or word == previous else word_labels[word])
        previous = word
    return labels


CORRECT_ALIGNS = {
    "a loop with the previous word id": _loop,
    "a comprehension with the previous word ids": _comprehension,
    "a set of the words seen": _seen_set,
    "numpy, returning an array": _numpy_result,
    "a tuple of numpy integers": _tuple_of_numpy_ints,
    "a torch tensor": _torch_result,
    "the package's reference": task_heads.align_labels,
}


@pytest.mark.parametrize("implementation", CORRECT_ALIGNS.values(), ids=CORRECT_ALIGNS.keys())
def test_check_align_labels_accepts_correct_implementations(implementation, capsys):
    assert checks.check_align_labels(implementation) is None
    assert capsys.readouterr().out == ALIGN_PASS


def _every_piece(word_ids, word_labels):
    return [-100 if w is None else word_labels[w] for w in word_ids]


def _with(word_ids, word_labels, *, special=-100, later=-100):
    return [special if lab == -100 and w is None else later if lab == -100 else lab
            for w, lab in zip(word_ids, _loop(word_ids, word_labels))]  # fmt: skip


def _last_piece(word_ids, word_labels):
    following = list(word_ids[1:]) + [None]
    return [-100 if w is None or w == n else word_labels[w] for w, n in zip(word_ids, following)]


def _wrap_around(word_ids, word_labels):
    return [-100 if w is None or w == word_ids[i - 1] else word_labels[w] for i, w in enumerate(word_ids)]


WRONG_ALIGNS = {
    "every piece labelled": (_every_piece, "every piece of a word is labelled"),
    "0 for the special tokens": (lambda i, lab: _with(i, lab, special=0), "special tokens have the label 0"),
    "0 for everything unlabelled": (lambda i, lab: _with(i, lab, special=0, later=0), "label 0.*-100"),
    "0 for the later pieces": (lambda i, lab: _with(i, lab, later=0), "later pieces have the label 0"),
    "specials labelled with the last word's label": (
        lambda ids, lab: [lab[-1] if w is None else v for w, v in zip(ids, _loop(ids, lab))],
        "label of the last word",
    ),
    "specials labelled with the first word's label": (
        lambda ids, lab: [lab[0] if w is None else v for w, v in zip(ids, _loop(ids, lab))],
        "a special token .* has a label",
    ),
    "last piece labelled": (_last_piece, "last piece of each word"),
    "the word ids as labels": (
        lambda ids, lab: [-100 if w is None else w for w in _loop(ids, list(range(len(lab))))],
        "word ids themselves",
    ),  # fmt: skip
    "word_labels[w - 1]": (lambda ids, lab: _loop(ids, [lab[-1]] + list(lab[:-1])), "w - 1"),
    "shifted left (the [CLS] position skipped)": (
        lambda ids, lab: _loop(ids, lab)[1:] + [-100],
        "shifted one token to the left",
    ),
    "shifted right": (lambda ids, lab: [-100] + _loop(ids, lab)[:-1], "shifted one token to the right"),
    "word_ids[i - 1] wraps round": (_wrap_around, "previous = None"),
    "word labels returned unchanged": (lambda ids, lab: list(lab), "one label per word"),
    "None for the specials": (
        lambda ids, lab: [None if w is None else v for w, v in zip(ids, _loop(ids, lab))],
        "label None",
    ),  # fmt: skip
    "one label too many": (lambda ids, lab: _loop(ids, lab) + [-100], "as many as word_ids"),
    "a word left without its label": (
        lambda ids, lab: [-100 if v == lab[-1] else v for v in _loop(ids, lab)],
        "some words have no label",
    ),  # fmt: skip
    "second pieces labelled too": (
        lambda ids, lab: [
            v if v != -100 or w is None or (i > 1 and ids[i - 2] == w) else lab[w]
            for i, (w, v) in enumerate(zip(ids, _loop(ids, lab)))
        ],
        "more tokens are labelled than there are words",
    ),  # fmt: skip
}


@pytest.mark.parametrize("implementation, hint", WRONG_ALIGNS.values(), ids=WRONG_ALIGNS.keys())
def test_check_align_labels_names_the_mistake(implementation, hint, capsys):
    _rejects(checks.check_align_labels, implementation, hint, capsys)


def test_word_labels_of_none_raise_and_the_checker_says_why(capsys):
    with pytest.raises(AssertionError, match="(?s)raised TypeError.*None for the special tokens"):
        checks.check_align_labels(lambda ids, lab: [lab[w] for w in ids])
    with pytest.raises(AssertionError, match="(?s)raised IndexError.*0 <= w < len\\(word_labels\\)"):
        checks.check_align_labels(lambda ids, lab: _loop(ids, list(lab[1:]) + []))
    assert capsys.readouterr().out == ""


def test_a_case_comes_from_the_course_tokenizer(capsys):
    """The last case is a real test sentence; a function right only on the hand-written cases fails it."""

    def right_on_short_sentences(ids, lab):
        return _loop(ids, lab) if len(ids) < 12 else _every_piece(ids, lab)

    error = _rejects(checks.check_align_labels, right_on_short_sentences, "every piece", capsys)
    name, _, _ = task_head_checks._tokenized_case()
    assert name.startswith("the course tokenizer on '") and name in str(error.value)
    text = name.removeprefix("the course tokenizer on '").split("' (")[0]
    assert any(s.text == text for s in data.corpus("test"))  # a real test sentence, not a hand-written one


def test_check_align_labels_stub_and_odd_answers(capsys):
    assert checks.check_align_labels(_stub) is None
    assert capsys.readouterr().out == "○ align_labels: not attempted yet. Write it above, then run this cell again.\n"
    odd_answers = (None, "-100 3 4", 3, [[-100, 3]], [0.5] * 5, [True, 3, 4, 2, False], {"labels": []},
                   np.zeros((5, 2)), torch.zeros(2, 3), object())  # fmt: skip
    for odd in odd_answers:
        with pytest.raises(AssertionError, match="align_labels"):
            checks.check_align_labels(lambda ids, lab, odd=odd: odd)
    with pytest.raises(AssertionError, match="(?s)raised ZeroDivisionError"):
        checks.check_align_labels(lambda ids, lab: 1 / 0)
    with pytest.raises(TypeError, match="without calling it"):
        checks.check_align_labels([-100, 3, -100])
    assert capsys.readouterr().out == ""
