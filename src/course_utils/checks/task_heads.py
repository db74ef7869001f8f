"""Checkers of lesson 08: DistilBERT's classification head, and word labels aligned to WordPiece tokens.

The references are :func:`course_utils.task_heads.classification_head` and :func:`course_utils.task_heads.align_labels`.
"""

from __future__ import annotations

import functools
import numbers
from typing import Any, Callable, Sequence

import numpy as np
import torch
from torch.nn import functional as F

from .. import data, task_heads, tokenization
from .engine import Case, Exercise, Mistake, Symptom, require_callable, run_checks
from .values import as_float_array, close_values, describe

# --------------------------------------------------------------------------------------------
# The classification head


def _linear(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """``nn.Linear``: ``x Wᵀ + b``, ``W`` of shape ``(out, in)``."""
    return x @ weight.T + bias


def _head(h, wp, bp, w, b, activation=torch.relu):
    """The head on vectors ``h (..., D)`` -> ``(..., C)``, with another activation if asked."""
    return _linear(activation(_linear(h, wp, bp)), w, b)


def _logits(x, wp, bp, w, b):
    return _head(x[:, 0], wp, bp, w, b)


def _compare_logits(result: Any, expected: Any) -> str | None:
    array = as_float_array(expected)
    return close_values(result, array, "the logits", ("B", "C"))


def _shape(result: Any) -> tuple[int, ...]:
    array = as_float_array(result)
    return () if array is None else array.shape


_CLASSIFICATION_HEAD = Exercise(
    name="classification_head",
    call="classification_head(hidden_states, pre_classifier_weight, pre_classifier_bias, classifier_weight, "
    "classifier_bias) with torch tensors: hidden_states (B, T, D), pre_classifier_weight (D, D), "
    "pre_classifier_bias (D,), classifier_weight (C, D), classifier_bias (C,), and expects logits (B, C)",
    compare=_compare_logits,
    mistakes=(
        Mistake(
            "the tokens are averaged: DistilBERT's head reads only the first position, [CLS]: "
            "hidden_states[:, 0] (B, D), not hidden_states.mean(dim=1).",
            lambda x, wp, bp, w, b: _head(x.mean(1), wp, bp, w, b),
        ),
        Mistake(
            "the tokens are max-pooled: DistilBERT's head reads only the first position, [CLS]: hidden_states[:, 0].",
            lambda x, wp, bp, w, b: _head(x.amax(1), wp, bp, w, b),
        ),
        Mistake(
            "this is the last position, hidden_states[:, -1]: the head reads the first one, [CLS], hidden_states[:, 0] "
            "(with padding, the last position is often a [PAD] token).",
            lambda x, wp, bp, w, b: _head(x[:, -1], wp, bp, w, b),
        ),
        Mistake(
            "hidden_states[0] is the first sentence (T, D), not the first position: the [CLS] vectors of all the "
            "sentences are hidden_states[:, 0] (B, D).",
            lambda x, wp, bp, w, b: _head(x[0], wp, bp, w, b),
        ),
        Mistake(
            "the head was applied to every token, (B, T, C): keep only the first position, [CLS], "
            "hidden_states[:, 0], before the two layers.",
            lambda x, wp, bp, w, b: _head(x, wp, bp, w, b),
        ),
        Mistake(
            "the ReLU between the two layers is missing: logits = ReLU(h Wₚᵀ + bₚ) Wᵀ + b.",
            lambda x, wp, bp, w, b: _head(x[:, 0], wp, bp, w, b, activation=lambda z: z),
        ),
        Mistake(
            "this is tanh, the activation of BERT's pooler: DistilBERT has no pooler, and its pre_classifier is "
            "followed by a ReLU.",
            lambda x, wp, bp, w, b: _head(x[:, 0], wp, bp, w, b, activation=torch.tanh),
        ),
        Mistake(
            "this is GELU, the activation inside the encoder's feed-forward network: the head uses a ReLU.",
            lambda x, wp, bp, w, b: _head(x[:, 0], wp, bp, w, b, activation=F.gelu),
        ),
        Mistake(
            "pre_classifier_weight is used as it is (h @ W): nn.Linear stores one row per output, (out, in), "
            "and computes h @ W.T + b (or F.linear(h, W, b)). The matrix is square, so h @ W runs, but gives "
            "other numbers.",
            lambda x, wp, bp, w, b: _linear(torch.relu(x[:, 0] @ wp + bp), w, b),
        ),
        Mistake(
            "neither weight is transposed: nn.Linear stores one row per output, (out, in), and computes "
            "h @ W.T + b (or F.linear(h, W, b)).",
            lambda x, wp, bp, w, b: torch.relu(x[:, 0] @ wp + bp) @ w + b,
        ),
        Mistake(
            "the result went through a softmax: return the logits, before any softmax (the loss, "
            "F.cross_entropy, applies log_softmax itself).",
            lambda x, wp, bp, w, b: torch.softmax(_logits(x, wp, bp, w, b), dim=-1),
        ),
        Mistake(
            "the result went through a log_softmax: return the logits themselves (F.cross_entropy applies "
            "log_softmax itself).",
            lambda x, wp, bp, w, b: torch.log_softmax(_logits(x, wp, bp, w, b), dim=-1),
        ),
        Mistake(
            "there is a ReLU after the classifier too: logits may be negative; the ReLU sits only between "
            "pre_classifier and classifier.",
            lambda x, wp, bp, w, b: torch.relu(_logits(x, wp, bp, w, b)),
        ),
        Mistake(
            "pre_classifier_bias is missing: each nn.Linear adds its bias, h @ W.T + b.",
            lambda x, wp, bp, w, b: _head(x[:, 0], wp, torch.zeros_like(bp), w, b),
        ),
        Mistake(
            "classifier_bias is missing: each nn.Linear adds its bias, h @ W.T + b.",
            lambda x, wp, bp, w, b: _head(x[:, 0], wp, bp, w, torch.zeros_like(b)),
        ),
        Mistake(
            "the classifier layer is missing: this is ReLU(pre_classifier(h)), (B, D); apply classifier to it to "
            "get one logit per class, (B, C).",
            lambda x, wp, bp, w, b: torch.relu(_linear(x[:, 0], wp, bp)),
        ),
        Mistake(
            "the pre_classifier layer (and its ReLU) is missing: the head has two layers, "
            "classifier(ReLU(pre_classifier(h))).",
            lambda x, wp, bp, w, b: _linear(x[:, 0], w, b),
        ),
    ),
    symptoms=(
        Symptom(
            "the result keeps a token axis of length 1, (B, 1, C): hidden_states[:, 0] gives (B, D), "
            "hidden_states[:, :1] keeps (B, 1, D). Index the position, or squeeze the axis.",
            lambda result, case: _shape(result) == (case.expected.shape[0], 1, case.expected.shape[1]),
        ),
        Symptom(
            "the result has three axes: return one row of logits per sentence, (B, C), from the first position "
            "hidden_states[:, 0].",
            lambda result, case: len(_shape(result)) == 3,
        ),
        Symptom(
            "the axes are swapped, (C, B): return one row per sentence, (B, C): h @ W.T, not W @ h.T.",
            lambda result, case: _shape(result) == case.expected.shape[::-1] != case.expected.shape,
        ),
        Symptom(
            "the result has D columns, the width of the model: the classifier turns them into C logits, (B, C).",
            lambda result, case: _shape(result) == (case.expected.shape[0], case.args[0].shape[-1]),
        ),
        Symptom(
            "return one row of C logits per sentence, (B, C), even when B = 1.",
            lambda result, case: _shape(result) != case.expected.shape,
        ),
    ),
    fallback="compare with h = hidden_states[:, 0], then ReLU(h @ pre_classifier_weight.T + pre_classifier_bias) "
    "@ classifier_weight.T + classifier_bias.",
    on_error="the arguments are torch tensors, the weights in nn.Linear's layout, (out, in): a layer computes "
    "h @ W.T + b (or F.linear(h, W, b)), and h @ W fails when W is not square. Keep the inputs' dtype "
    "(one case is float64).",
)


def _head_case(name: str, generator: torch.Generator, b: int, t: int, d: int, c: int, dtype=torch.float32) -> Case:
    def draw(*shape, scale=1.0):
        return scale * torch.randn(*shape, generator=generator, dtype=torch.float64)

    args = (draw(b, t, d), draw(d, d, scale=d**-0.5), draw(d, scale=0.5), draw(c, d, scale=d**-0.5), draw(c, scale=0.5))
    expected = task_heads.classification_head(*args).numpy()
    return Case(name, tuple(a.to(dtype) for a in args), expected)


def check_classification_head(fn: Callable[..., Any]) -> None:
    """Check a learner's ``classification_head(hidden_states, pre_classifier_weight, pre_classifier_bias,
    classifier_weight, classifier_bias) -> logits (B, C)``.

    The reference is :func:`course_utils.task_heads.classification_head`: ``ReLU(h Wₚᵀ + bₚ) Wᵀ + b`` with
    ``h = hidden_states[:, 0]``, the weights in ``nn.Linear``'s layout ``(out, in)``. Random torch tensors
    (non-symmetric weights, non-zero biases), float32 except one float64 case. Six cases: C ≠ D (two
    shapes), one sentence (B = 1), one token (T = 1: every pooling gives the same vector), more classes
    than D, float64. The learner's function gets copies, so writing into its inputs cannot change the cases.
    """
    require_callable(_CLASSIFICATION_HEAD.name, fn)
    generator = torch.Generator().manual_seed(2019)
    cases = [
        _head_case("B=3 sentences, T=5 tokens, D=6, C=2 classes", generator, 3, 5, 6, 2),
        _head_case("B=2, T=7, D=8, C=4", generator, 2, 7, 8, 4),
        _head_case("one sentence: B=1, T=4, D=5, C=3", generator, 1, 4, 5, 3),
        _head_case("one token, [CLS] alone: B=4, T=1, D=4, C=2", generator, 4, 1, 4, 2),
        _head_case("more classes than dimensions: B=2, T=3, D=3, C=5", generator, 2, 3, 3, 5),
        _head_case("float64: B=2, T=6, D=7, C=3", generator, 2, 6, 7, 3, dtype=torch.float64),
    ]
    run_checks(_CLASSIFICATION_HEAD, fn, cases)


# --------------------------------------------------------------------------------------------
# Word labels aligned to WordPiece tokens

IGNORE = task_heads.IGNORE_INDEX


def _label_values(result: Any) -> list:
    """``result`` (a list, tuple, numpy array, torch tensor) as a python list of its values."""
    if isinstance(result, (str, bytes, numbers.Number)) or result is None:
        raise TypeError(f"expected a list of labels, got {describe(result)}")
    if isinstance(result, (np.ndarray, torch.Tensor)):
        return result.tolist()
    return [v.item() if isinstance(v, (np.generic, torch.Tensor)) else v for v in list(result)]


def _is_label(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and float(value).is_integer()


def equal_label_lists(result: Any, expected: Any) -> str | None:
    """An exact comparison of lists of token labels (lists, tuples, numpy arrays, torch tensors)."""
    try:
        values = _label_values(result)
    except TypeError:
        return f"expected a list of labels, one per token, got {describe(result)}"
    bad = next((i for i, v in enumerate(values) if not _is_label(v)), None)
    if bad is not None:
        return f"expected whole numbers (labels), got {values[bad]!r} at token {bad}"
    values, expected = [int(v) for v in values], list(expected)
    if len(values) != len(expected):
        return f"expected one label per token, {len(expected)} labels, got {len(values)}"
    if values != expected:
        wrong = [i for i, (v, e) in enumerate(zip(values, expected)) if v != e]
        return f"got {values}: the labels of tokens {wrong} are wrong"
    return None


def _aligned(word_ids, word_labels, *, special=IGNORE, later=IGNORE, label_of=None, piece="first"):
    """Labels with a chosen mistake: ``special`` for None, ``later`` for pieces that are not ``piece``
    ("first" or "last") of their word, ``label_of(w)`` the label given to a piece of word ``w``."""
    label_of = label_of or (lambda w: word_labels[w])
    labels = []
    for i, word in enumerate(word_ids):
        if word is None:
            labels.append(special)
            continue
        neighbour = word_ids[i - 1] if piece == "first" else (word_ids[i + 1] if i + 1 < len(word_ids) else None)
        starts = (i == 0 and piece == "first") or neighbour != word
        labels.append(label_of(word) if starts else later)
    return labels


def _wrapped_previous(word_ids, word_labels):
    """Comparing with ``word_ids[i - 1]``, which for the first token is the last one."""
    return [IGNORE if w is None or w == word_ids[i - 1] else word_labels[w] for i, w in enumerate(word_ids)]


def _shift_left(word_ids, word_labels):
    return task_heads.align_labels(word_ids, word_labels)[1:] + [IGNORE]


def _shift_right(word_ids, word_labels):
    return [IGNORE] + task_heads.align_labels(word_ids, word_labels)[:-1]


def _specials(result, case) -> list[int]:
    return [v for v, w in zip(_label_values(result), case.args[0]) if w is None]


def _labelled(result) -> int:
    return sum(v != IGNORE for v in _label_values(result))


_ALIGN_LABELS = Exercise(
    name="align_labels",
    call="align_labels(word_ids, word_labels) with word_ids a list of word indices or None (one per token, "
    "as tokenizer(...).word_ids() gives) and word_labels a list of ints (one per word), and expects a list "
    "of ints, one per token",
    compare=equal_label_lists,
    mistakes=(
        Mistake(
            "every piece of a word is labelled: only the first piece gets the word's label; later ## pieces get "
            "-100, so that each word is counted once by the loss and the accuracy.",
            lambda ids, labels: task_heads.align_labels(ids, labels, every_piece=True),
        ),
        Mistake(
            "the special tokens have the label 0: 0 is a real label (here the tag DET), so the loss would learn "
            "to predict it on [CLS], [SEP] and padding. Give them -100, the label the loss ignores (and to the "
            "later pieces of a word too).",
            lambda ids, labels: _aligned(ids, labels, special=0),
        ),
        Mistake(
            "0 marks the tokens without a label: 0 is a real label (here the tag DET). Give special tokens and "
            "later pieces -100, the label the loss ignores.",
            lambda ids, labels: _aligned(ids, labels, special=0, later=0),
        ),
        Mistake(
            "the later pieces have the label 0: 0 is a real label (here the tag DET). Give them -100, the label "
            "the loss ignores.",
            lambda ids, labels: _aligned(ids, labels, later=0),
        ),
        Mistake(
            "the special tokens have the label of the last word (word_labels[-1]): a token whose word id is None "
            "([CLS], [SEP], padding) gets -100.",
            lambda ids, labels: _aligned(ids, labels, special=labels[-1]),
        ),
        Mistake(
            "the label sits on the last piece of each word: put it on the first piece (the first token whose word "
            "id differs from the previous token's), and -100 on the later ones.",
            lambda ids, labels: _aligned(ids, labels, piece="last"),
        ),
        Mistake(
            "the labels are the word ids themselves: the label of word w is word_labels[w].",
            lambda ids, labels: _aligned(ids, labels, label_of=lambda w: w),
        ),
        Mistake(
            "the labels are off by one word: word ids count from 0, so word w's label is word_labels[w], "
            "not word_labels[w - 1].",
            lambda ids, labels: _aligned(ids, labels, label_of=lambda w: labels[w - 1]),
        ),
        Mistake(
            "the first token was compared with word_ids[-1], the last token: a sequence without [CLS] may start "
            "with a piece of the word it ends with. Start from previous = None instead of word_ids[i - 1].",
            _wrapped_previous,
        ),
        Mistake(
            "the labels are shifted one token to the left: label i belongs to token i, the token whose word id "
            "is word_ids[i]; [CLS], at position 0, keeps its -100.",
            _shift_left,
        ),
        Mistake(
            "the labels are shifted one token to the right: label i belongs to token i, the token whose word id "
            "is word_ids[i] (no extra -100 in front).",
            _shift_right,
        ),
    ),
    symptoms=(
        Symptom(
            "the special tokens have the label None: give them -100, the label that the loss "
            "(F.cross_entropy's ignore_index) and the accuracy skip.",
            lambda result, case: any(v is None for v in _label_values(result)),
        ),
        Symptom(
            "this is one label per word: return one label per token, as many as word_ids has entries.",
            lambda result, case: len(_label_values(result)) == len(case.args[1]) != len(case.args[0]),
        ),
        Symptom(
            "return one label per token, as many as word_ids has entries.",
            lambda result, case: len(_label_values(result)) != len(case.args[0]),
        ),
        Symptom(
            "a special token (word id None: [CLS], [SEP], padding) has a label: give it -100.",
            lambda result, case: any(v != IGNORE for v in _specials(result, case)),
        ),
        Symptom(
            "more tokens are labelled than there are words: label only the first piece of each word.",
            lambda result, case: _labelled(result) > len(case.args[1]),
        ),
        Symptom(
            "some words have no label: the first piece of every word gets the word's label.",
            lambda result, case: _labelled(result) < len(case.args[1]),
        ),
    ),
    fallback="go through word_ids with the previous word id (None at the start): None -> -100; a new word id w -> "
    "word_labels[w]; the same word id as the previous token -> -100.",
    on_error="word_ids holds None for the special tokens ([CLS], [SEP], padding): give them -100 before using a "
    "word id as an index; a word id w is an index into word_labels, 0 <= w < len(word_labels).",
)


@functools.lru_cache(maxsize=1)
def _tokenized_case() -> tuple[str, list, list[int]]:
    """The first test sentence of the corpus with a made-up creature that the course tokenizer splits:
    its text, its word ids, its tags (indices into :data:`course_utils.data.TAGS`)."""
    tokenizer = tokenization.load_bundled_tokenizer()
    creatures = set(data.made_up_creatures())
    for sentence in data.corpus("test"):
        encoding = tokenizer(list(sentence.words), is_split_into_words=True)
        word_ids = encoding.word_ids()
        split = [w for w in sentence.words if w in creatures and len(tokenizer.tokenize(w)) > 1]
        if split and max(word_ids.count(i) for i in range(len(sentence.words))) >= 3:
            pieces = " ".join(tokenizer.tokenize(split[0]))
            name = f"the course tokenizer on '{sentence.text}' ({split[0]} -> {pieces})"
            return name, word_ids, [data.TAGS.index(tag) for tag in sentence.tags]
    raise RuntimeError("no test sentence has a made-up creature split into pieces")  # pragma: no cover


def check_align_labels(fn: Callable[[Sequence[int | None], Sequence[int]], Any]) -> None:
    """Check a learner's ``align_labels(word_ids, word_labels) -> list[int]``, one label per token.

    The reference is :func:`course_utils.task_heads.align_labels`: the first piece of each word gets the
    word's label, later pieces and special tokens (word id None) get -100. Seven cases: no word split,
    words split into 2 and 3 pieces, padding, a one-word sentence, labels that are all 0 or 1 (0 is a
    real label, DET), a word in pieces without special tokens (its first token has no predecessor),
    and a test sentence of the corpus tokenized by the course tokenizer. The function gets copies of
    the lists.
    """
    require_callable(_ALIGN_LABELS.name, fn)
    tag = {name: i for i, name in enumerate(data.TAGS)}
    examples = {
        "no word split: [CLS] i love nlp [SEP]": (
            [None, 0, 1, 2, None],
            [tag["PRON"], tag["VERB"], tag["NOUN"]],
        ),
        "words in pieces: [CLS] the fe ##em ##el sing ##s [SEP]": (
            [None, 0, 1, 1, 1, 2, 2, None],
            [tag["DET"], tag["NOUN"], tag["VERB"]],
        ),
        "padding: [CLS] my noom ##p sings . [SEP] [PAD] [PAD]": (
            [None, 0, 1, 1, 2, 3, None, None, None],
            [tag["DET"], tag["NOUN"], tag["VERB"], tag["PUNCT"]],
        ),
        "a one-word sentence: [CLS] dri ##xin [SEP]": ([None, 0, 0, None], [tag["NOUN"]]),
        "two classes, labels 0 and 1 (0 is a real label): [CLS] the tall f ##imp ##ons sing [SEP]": (
            [None, 0, 1, 2, 2, 2, 3, None],
            [0, 1, 1, 0],
        ),
        "no special tokens (add_special_tokens=False): fe ##em ##el": ([0, 0, 0], [tag["NOUN"]]),
    }
    name, word_ids, word_labels = _tokenized_case()
    examples[name] = (word_ids, word_labels)
    cases = [Case(n, (ids, labels), task_heads.align_labels(ids, labels)) for n, (ids, labels) in examples.items()]
    run_checks(_ALIGN_LABELS, fn, cases)
