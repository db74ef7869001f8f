"""Checkers of the lessons on tokens: framing a sentence (00), padding a batch, looking up embeddings and their gradient (02)."""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from .. import data, embeddings, tokenization
from .engine import Case, Exercise, Mistake, Symptom, close_arrays, returned, run_checks


def _same_tokens(result: Any, expected: Any) -> str | None:
    if isinstance(result, str):
        return f"expected a list of tokens, got one string {result!r}"
    try:
        result = list(result)
    except TypeError:
        return f"expected a list of tokens, got a {type(result).__name__}"
    if result != list(expected):
        return f"got {result!r}"
    return None


_FRAME_TOKENS = Exercise(
    name="frame_tokens",
    call="frame_tokens(words) with words a list of strings, e.g. ['I', 'love', 'NLP']",
    compare=_same_tokens,
    mistakes=(
        Mistake("[SEP] is missing: it closes the sentence.", lambda words: ["[CLS]", *words]),
        Mistake("[CLS] is missing: it opens the sentence.", lambda words: [*words, "[SEP]"]),
        Mistake("[CLS] comes first and [SEP] last, not the other way round.", lambda words: ["[SEP]", *words, "[CLS]"]),
        Mistake(
            "the words sit in one nested list: unpack them (with *) so that each word is a token.",
            lambda words: ["[CLS]", list(words), "[SEP]"],
        ),
    ),
    returns=lambda result, case: None if isinstance(result, list) else returned(
        result, "a list", "the statement asks for a list of tokens: ['[CLS]', *words, '[SEP]']"),
    symptoms=(
        Symptom(
            "the special tokens are written in capitals inside square brackets: '[CLS]' and '[SEP]'.",
            lambda result, case: [str(t).upper() for t in result] == [t.upper() for t in case.expected],
        ),
    ),
    fallback="the result should be '[CLS]', then every word in order, then '[SEP]'.",
)


def check_frame_tokens(fn: Callable[[Sequence[str]], Sequence[str]]) -> None:
    """Check a learner's ``frame_tokens(words) -> list of tokens`` against :func:`course_utils.data.frame_tokens`.

    Five cases: the running example, one word, an empty sentence, a long sentence, a tuple of words.
    """
    sentences = {
        "I love NLP": ["I", "love", "NLP"],
        "one word": ["attention"],
        "an empty sentence": [],
        "a long sentence": "the cats that the dog chased were not happy but they ran".split(),
        "words given as a tuple": ("queries", "keys", "values"),
    }
    cases = [Case(name, (words,), data.frame_tokens(words)) for name, words in sentences.items()]
    run_checks(_FRAME_TOKENS, fn, cases)


# --------------------------------------------------------------------------------------------
# Lesson 02: padding a batch and building its attention mask


def _same_batch(result: Any, expected: Any) -> str | None:
    if not isinstance(result, (tuple, list)) or len(result) != 2:
        return f"expected a pair (input_ids, attention_mask), got a {type(result).__name__}"
    for name, got, want in zip(("input_ids", "attention_mask"), result, expected):
        try:
            got = np.asarray(got)
        except (TypeError, ValueError):
            return f"expected {name} to be an array, got a {type(got).__name__}"
        if got.shape != want.shape:
            return f"expected {name} of shape (B, T)={want.shape}, got {got.shape}"
        try:
            same = np.array_equal(got.astype(np.float64), want)  # the dtype is the engine's to name, once right
        except (TypeError, ValueError):
            same = False
        if not same:
            return f"{name} differs from the reference"
    return None


def _left_padded(sequences, pad_id):
    ids, mask = tokenization.pad_batch(sequences, pad_id)
    order = np.argsort(mask, axis=1, kind="stable")  # padding first, then the tokens, in order
    return np.take_along_axis(ids, order, 1), np.take_along_axis(mask, order, 1)


_PAD_BATCH = Exercise(
    name="pad_batch",
    call="pad_batch(sequences, pad_id) with sequences a list of lists of token ids, and expects "
    "(input_ids (B, T), attention_mask (B, T)) with T the longest length",
    compare=_same_batch,
    mistakes=(
        Mistake(
            "the attention mask is inverted: 1 marks a real token (attend to it), 0 marks padding.",
            lambda seqs, pad: (tokenization.pad_batch(seqs, pad)[0], 1 - tokenization.pad_batch(seqs, pad)[1]),
        ),
        Mistake(
            "the padding is on the left: pad after the tokens, on the right, as Hugging Face does by default.",
            _left_padded,
        ),
        Mistake(
            "the padding id is always 0: use the pad_id argument (a tokenizer's [PAD] need not be 0).",
            lambda seqs, pad: tokenization.pad_batch(seqs, 0),
        ),
        Mistake(
            "the attention mask was built from the ids' values (ids != pad_id): a real token can have the "
            "padding id's value too; build the mask from each sequence's length instead.",
            lambda seqs, pad: (
                tokenization.pad_batch(seqs, pad)[0],
                (tokenization.pad_batch(seqs, pad)[0] != pad).astype(np.int64),
            ),
        ),
        Mistake(
            "the attention mask is 1 everywhere: it must be 0 at the padding positions.",
            lambda seqs, pad: (
                tokenization.pad_batch(seqs, pad)[0],
                np.ones_like(tokenization.pad_batch(seqs, pad)[1]),
            ),
        ),
    ),
    symptoms=(
        Symptom(
            "T should be the length of the longest sequence, not more.",
            lambda result, case: np.shape(result[0])[1] > case.expected[0].shape[1],
        ),
        Symptom(
            "return a pair: input_ids first, then attention_mask.",
            lambda result, case: np.array_equal(np.asarray(result[1]), case.expected[0]),
        ),
    ),
    fallback="each row: the sequence's ids, then pad_id up to the longest length; the mask has 1 for "
    "each real token and 0 for each pad.",
    on_error="sequences is a list of lists of ints, and the sequences have different lengths.",
)


def check_pad_batch(fn: Callable[..., Any]) -> None:
    """Check a learner's ``pad_batch(sequences, pad_id) -> (input_ids (B, T), attention_mask (B, T))``.

    The reference is :func:`course_utils.tokenization.pad_batch`. Cases: the lesson's batch, a
    padding id other than 0, one sequence, sequences of equal length, a batch with a one-token
    sequence, a real token whose id equals ``pad_id`` (a mask built from ``ids != pad_id`` is
    wrong there). Also fails when ``fn`` changes the lists it is given.
    """
    batches = {
        "three sentences, pad_id=0": (
            [
                [2, 15, 461, 191, 3],
                [2, 60, 3],
                [
                    2,
                    7,
                    8,
                    9,
                    3,
                ],
            ],
            0,
        ),
        "pad_id=99": ([[5, 6], [7, 8, 9, 10]], 99),
        "a single sequence": ([[2, 11, 12, 3]], 0),
        "equal lengths: nothing to pad": ([[1, 2, 3], [4, 5, 6]], 0),
        "a one-token sequence": ([[2], [2, 30, 31, 32, 3], [2, 40, 3]], 0),
        # id 0 is an ordinary token here: only the lengths say where the padding is
        "a real token with the padding id's value": ([[5, 0, 7], [8]], 0),
    }
    cases = []
    for name, (sequences, pad_id) in batches.items():
        cases.append(Case(name, (sequences, pad_id), tokenization.pad_batch(sequences, pad_id)))
    run_checks(_PAD_BATCH, fn, cases)  # the engine refuses a function that appends to the lists it is given


# --------------------------------------------------------------------------------------------
# Lesson 02: looking up embeddings

_EMBEDDING_LOOKUP = Exercise(
    name="embedding_lookup",
    call="embedding_lookup(ids, table) with ids an integer array (B, T) and table (V, D), and expects (B, T, D)",
    compare=close_arrays(("B", "T", "D"), atol=1e-12, rtol=1e-12),
    mistakes=(
        Mistake(
            "the ids are off by one: token id i is row i of the table (ids start at 0).",
            lambda ids, table: table[ids - 1],  # id 0 wraps round to the last row
        ),
        Mistake(
            "the batch and time axes are swapped: keep the shape of ids and add D at the end.",
            lambda ids, table: np.swapaxes(table[ids], 0, 1),
        ),
        Mistake(
            "the ids were multiplied by the table as numbers: turn each id into a one-hot row first, "
            "or index the table's rows with the ids.",
            lambda ids, table: ids[..., None] * table[: ids.shape[-1]].mean(0),
        ),
    ),
    symptoms=(
        Symptom(
            "the result has D x V entries per token: did you index the columns (table[:, ids])? Rows are tokens.",
            lambda result, case: np.shape(result)[-1] != case.expected.shape[-1],
        ),
    ),
    fallback="row t of sequence b of the result is table[ids[b, t]].",
    on_error="ids are integers; table[ids] or one_hot(ids) @ table both work.",
)


def check_embedding_lookup(fn: Callable[..., Any]) -> None:
    """Check a learner's ``embedding_lookup(ids (B, T), table (V, D)) -> (B, T, D)``.

    The reference is :func:`course_utils.embeddings.embedding_lookup`. Cases: the running example,
    a batch, repeated ids, ids 0 and V-1, a non-square table with D > V, float32 tables.
    """
    rng = np.random.default_rng(2)
    example_table = data.running_example().embeddings  # 5 tokens, D=4
    raw = [
        ("the running example: ids 0..4 of a (5, 4) table", np.array([[0, 1, 2, 3, 4]]), example_table),
        ("a batch of 3 sequences of 4 ids, V=10, D=3", rng.integers(0, 10, (3, 4)), rng.standard_normal((10, 3))),
        ("repeated ids and the ends 0 and V-1", np.array([[0, 0, 6], [6, 3, 0]]), rng.standard_normal((7, 2))),
        ("D > V: table (3, 8)", np.array([[2, 1], [0, 2]]), rng.standard_normal((3, 8))),
        ("float32 table", rng.integers(0, 20, (2, 5)), rng.standard_normal((20, 6)).astype(np.float32)),
    ]
    cases = [Case(name, (ids, table), embeddings.embedding_lookup(ids, table)) for name, ids, table in raw]
    run_checks(_EMBEDDING_LOOKUP, fn, cases)


# --------------------------------------------------------------------------------------------
# Lesson 02: the gradient of an embedding table, the one-hot product run backwards


def _assigned(ids, grad_vectors, vocab_size):
    grad = np.zeros((vocab_size, np.shape(grad_vectors)[-1]))
    grad[np.asarray(ids).reshape(-1)] = np.asarray(grad_vectors).reshape(-1, np.shape(grad_vectors)[-1])
    return grad  # a repeated id keeps its last position's gradient only (and += does the same)


def _averaged(ids, grad_vectors, vocab_size):
    grad = embeddings.embedding_grad(ids, grad_vectors, vocab_size)
    counts = np.bincount(np.asarray(ids).reshape(-1), minlength=vocab_size)
    return grad / np.maximum(counts, 1)[:, None]


_EMBEDDING_GRAD = Exercise(
    name="embedding_grad",
    call="embedding_grad(ids, grad_vectors, vocab_size) with ids an integer array (B, T) and grad_vectors "
    "(B, T, D), and expects (V, D)",
    # the lesson's next cell compares the result with torch's float32 gradient (np.allclose): float32 passes
    compare=close_arrays(("V", "D"), atol=1e-6, rtol=1e-5),
    mistakes=(
        Mistake(
            "a token that occurs twice got the gradient of one of its positions only: grad[ids] = ... (and "
            "grad[ids] += ...) write a repeated row once. Its row is the sum over all its positions: use "
            "np.add.at, or one_hot(ids).T @ grad_vectors.",
            _assigned,
        ),
        Mistake(
            "a repeated token's row is the mean of its positions' gradients: the lookup copies the row to "
            "every position, so the gradients of all the copies add up; do not divide by the count.",
            _averaged,
        ),
        Mistake(
            "the ids are off by one: token id i is row i of the table (ids start at 0).",
            lambda ids, g, v: np.roll(embeddings.embedding_grad(ids, g, v), -1, axis=0),
        ),
        Mistake(
            "every row got the gradient: only the rows of the tokens in ids were used, so the other rows' "
            "gradient is 0.",
            lambda ids, g, v: np.broadcast_to(np.asarray(g).reshape(-1, np.shape(g)[-1]).sum(0), (v, np.shape(g)[-1])),
        ),
    ),
    symptoms=(
        Symptom(
            "the result should have one row per token of the vocabulary, (V, D), like the table; did you "
            "return the gradient of the vectors, (B, T, D)?",
            lambda result, case: np.shape(result) == np.shape(case.args[1]),
        ),
    ),
    fallback="row v of the result is the sum of grad_vectors[b, t] over the positions where ids[b, t] == v, and 0 "
    "for the tokens that do not occur.",
    on_error="ids are integers (B, T), grad_vectors is (B, T, D), vocab_size is V; np.add.at(grad, ids, "
    "grad_vectors) or one_hot(ids, V).T @ grad_vectors, once the batch axes are flattened.",
)


def check_embedding_grad(fn: Callable[..., Any]) -> None:
    """Check a learner's ``embedding_grad(ids (B, T), grad_vectors (B, T, D), vocab_size) -> (V, D)``.

    The reference is :func:`course_utils.embeddings.embedding_grad`. Cases: the running example (each
    id once), a batch with repeated ids, a token three times in one sequence, ids 0 and V-1, a
    one-token batch, D > V, a batch where most tokens are absent. The gradients are float64; a
    float32 result passes too (the lesson's next cell compares with torch's float32 gradient),
    as long as it is a float array of shape (V, D).
    """
    rng = np.random.default_rng(3)
    raw = [
        ("the running example: ids 0..4 once each, V=5, D=4", np.array([[0, 1, 2, 3, 4]]), 5, 4, np.float64),
        ("a batch of 3 x 4 ids, repeats across sequences, V=10, D=3", rng.integers(0, 6, (3, 4)), 10, 3, np.float64),
        ("one token three times in a sequence", np.array([[2, 5, 2, 2], [1, 0, 5, 3]]), 6, 2, np.float64),
        ("the ends: ids 0 and V-1, V=7", np.array([[0, 6, 0], [6, 6, 0]]), 7, 3, np.float64),
        ("a single id", np.array([[4]]), 5, 2, np.float64),
        ("D > V: V=3, D=8", np.array([[2, 1], [0, 2]]), 3, 8, np.float64),
        ("a longer batch, V=12: most tokens absent", rng.integers(0, 12, (2, 5)), 12, 4, np.float64),
    ]
    cases = []
    for name, ids, vocab_size, dim, dtype in raw:
        grad_vectors = rng.standard_normal(ids.shape + (dim,)).astype(dtype)
        expected = embeddings.embedding_grad(ids, grad_vectors, vocab_size)
        cases.append(Case(name, (ids, grad_vectors, vocab_size), expected))
    run_checks(_EMBEDDING_GRAD, fn, cases)
