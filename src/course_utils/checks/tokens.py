"""Checkers of the lessons on tokens: framing a sentence (00)."""

from __future__ import annotations

from typing import Any, Callable, Sequence

from .. import data
from .engine import Case, Exercise, Mistake, Symptom, run_checks


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
    symptoms=(
        Symptom(
            "return the tokens as a list, not joined into one string.", lambda result, case: isinstance(result, str)
        ),
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
