"""Data of the course: the running example (the course grammar and corpus arrive with lesson 02).

The running example threads through lessons 01–06: the sentence ``"I love NLP"``, framed by the
special tokens ``[CLS]`` and ``[SEP]``, with hidden size 4, 2 attention heads and 2 layers. Small
enough to print every number, big enough to show every idea.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

RUNNING_TEXT = "I love NLP"
CLS, SEP = "[CLS]", "[SEP]"


def frame_tokens(words: Sequence[str]) -> list[str]:
    """Frame a sentence's ``T`` words as BERT does: ``[CLS]``, the words, ``[SEP]`` (``T + 2`` tokens).

    ``[CLS]``'s final vector is the summary of the sentence; ``[SEP]`` marks its end.
    """
    if isinstance(words, str):
        raise TypeError(f"expected a sequence of words such as {words.split()!r}, got the string {words!r}")
    words = list(words)
    if not all(isinstance(word, str) for word in words):
        raise TypeError(f"expected every word to be a string, got {words!r}")
    return [CLS, *words, SEP]


@dataclass(frozen=True)
class RunningExample:
    """The running example: five tokens, each a ``d_model``-dimensional vector.

    ``embeddings`` has shape ``(T, D) = (5, 4)``: row ``t`` is the vector of ``tokens[t]``.
    """

    text: str
    tokens: tuple[str, ...]
    d_model: int
    n_heads: int
    n_layers: int
    embeddings: np.ndarray

    @property
    def seq_len(self) -> int:
        """T, the number of tokens."""
        return len(self.tokens)


def running_example(d_model: int = 4, seed: int = 0) -> RunningExample:
    """``"I love NLP"`` as ``[CLS] I love NLP [SEP]`` with seeded embeddings of shape ``(5, d_model)``.

    The embeddings are drawn from N(0, 1) with their own generator (``seed``), so they are the
    same whatever else a notebook has drawn before. Lesson 02 shows where such vectors come from
    (an embedding table looked up by token id).
    """
    if isinstance(d_model, bool) or not isinstance(d_model, (int, np.integer)) or d_model < 1:
        raise ValueError(f"expected d_model to be a positive integer, got {d_model!r}")
    tokens = tuple(frame_tokens(RUNNING_TEXT.split()))
    rng = np.random.default_rng(seed)
    embeddings = rng.standard_normal((len(tokens), int(d_model)))
    embeddings.setflags(write=False)
    return RunningExample(
        text=RUNNING_TEXT, tokens=tokens, d_model=int(d_model), n_heads=2, n_layers=2, embeddings=embeddings
    )
