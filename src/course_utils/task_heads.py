"""Task heads on DistilBERT's encoder (lesson 08): the classification head by hand, and word labels
aligned to WordPiece tokens for token classification.

The encoder turns ``input_ids (B, T)`` into hidden states ``(B, T, D)``; a task head turns those into
what a task needs:

- sequence classification reads the first position, ``[CLS]``, as a summary of the sentence:
  :func:`classification_head` is ``DistilBertForSequenceClassification``'s head written out
  (``pre_classifier`` → ReLU → dropout → ``classifier``), and :func:`head_weights` reads its four
  tensors from a Hugging Face model;
- token classification gives every token its own label: the course grammar tags every word with its
  part of speech (:data:`course_utils.data.TAGS`), and :func:`align_labels` moves those word labels
  onto WordPiece tokens, :func:`tagging_data` encodes a split, :func:`tag_accuracy` scores a tagger.

Axis names: ``B`` batch, ``T`` tokens, ``D`` model width, ``C`` classes.
"""

from __future__ import annotations

import numbers
from typing import Sequence

import numpy as np
import torch

from . import data, masking, training

__all__ = ["IGNORE_INDEX", "align_labels", "classification_head", "head_weights", "tag_accuracy", "tagging_data",
           "words_with_several_tags"]

IGNORE_INDEX = masking.IGNORE_INDEX  # -100: the label of a token that no loss and no accuracy counts


def classification_head(
    hidden_states: torch.Tensor,
    pre_classifier_weight: torch.Tensor,
    pre_classifier_bias: torch.Tensor,
    classifier_weight: torch.Tensor,
    classifier_bias: torch.Tensor,
) -> torch.Tensor:
    """DistilBERT's sequence-classification head, in eval mode: ``(B, T, D)`` hidden states -> ``(B, C)`` logits.

    ``h = hidden_states[:, 0]`` (the ``[CLS]`` position, ``(B, D)``), then
    ``logits = ReLU(h Wₚᵀ + bₚ) Wᵀ + b`` with ``Wₚ (D, D)``, ``bₚ (D,)``, ``W (C, D)``, ``b (C,)``
    (``nn.Linear``'s layout: one row per output). Dropout sits between the two layers in training
    and does nothing in eval mode. BERT's head differs: a pooler with tanh, then the classifier.
    """
    arguments = dict(hidden_states=hidden_states, pre_classifier_weight=pre_classifier_weight,
                     pre_classifier_bias=pre_classifier_bias, classifier_weight=classifier_weight,
                     classifier_bias=classifier_bias)
    for name, value in arguments.items():
        if not isinstance(value, torch.Tensor):
            raise TypeError(f"expected {name} to be a torch tensor, got {type(value).__name__}")
    if hidden_states.ndim != 3:
        raise ValueError(f"expected hidden_states of shape (B, T, D), got {_shape(hidden_states)}")
    width = hidden_states.shape[-1]
    expected = {
        "pre_classifier_weight": (pre_classifier_weight, (width, width)),
        "pre_classifier_bias": (pre_classifier_bias, (width,)),
        "classifier_bias": (classifier_bias, (classifier_weight.shape[0],) if classifier_weight.ndim == 2 else None),
    }
    if classifier_weight.ndim != 2 or classifier_weight.shape[1] != width:
        raise ValueError(f"expected classifier_weight of shape (C, {width}), got {_shape(classifier_weight)}")
    for name, (tensor, shape) in expected.items():
        if tuple(tensor.shape) != shape:
            raise ValueError(f"expected {name} of shape {shape}, got {_shape(tensor)}")
    first = hidden_states[:, 0]  # (B, D): the [CLS] vector
    pooled = torch.relu(first @ pre_classifier_weight.T + pre_classifier_bias)  # (B, D)
    return pooled @ classifier_weight.T + classifier_bias  # (B, C)


def head_weights(model) -> dict[str, torch.Tensor]:
    """The four tensors of a ``DistilBertForSequenceClassification``'s head, named as
    :func:`classification_head`'s arguments."""
    if not (hasattr(model, "pre_classifier") and hasattr(model, "classifier")):
        raise TypeError(f"expected a DistilBertForSequenceClassification, got {type(model).__name__}")
    return {
        "pre_classifier_weight": model.pre_classifier.weight.detach(),
        "pre_classifier_bias": model.pre_classifier.bias.detach(),
        "classifier_weight": model.classifier.weight.detach(),
        "classifier_bias": model.classifier.bias.detach(),
    }


def align_labels(word_ids: Sequence[int | None], word_labels: Sequence[int], *, every_piece: bool = False) -> list[int]:
    """Word labels moved onto tokens: ``(T,)`` word indices -> ``(T,)`` token labels.

    ``word_ids`` is a fast tokenizer's ``encoding.word_ids()``: the index of the word each token
    comes from, ``None`` for ``[CLS]``, ``[SEP]`` and padding. The first piece of each word gets the
    word's label; later ``##`` pieces and special tokens get :data:`IGNORE_INDEX` (-100), so the
    loss and the accuracy count each word once. ``every_piece=True`` labels every piece instead
    (the ``label_all_tokens`` option of Hugging Face's token-classification example).
    """
    labels, previous = [], None
    for word in word_ids:
        if word is None:  # a special token; the next piece starts a word (as in Hugging Face's examples)
            labels.append(IGNORE_INDEX)
            previous = None
            continue
        if isinstance(word, bool) or not isinstance(word, numbers.Integral) or not 0 <= word < len(word_labels):
            raise ValueError(
                f"expected word ids between 0 and {len(word_labels) - 1} (one label per word) or None, got {word!r}"
            )
        labels.append(word_labels[word] if word != previous or every_piece else IGNORE_INDEX)
        previous = word
    return labels


def tagging_data(sentences: Sequence[data.Sentence], tokenizer, *, every_piece: bool = False) -> training.Encoded:
    """Sentences as a token-classification set: ids, and a part-of-speech label per token (index into
    :data:`course_utils.data.TAGS`, -100 where none). The words are tokenized as given
    (``is_split_into_words``), so word ``i`` of the tokenizer is word ``i`` of the sentence. Each
    sentence is cut to the tokenizer's maximum length, as :func:`course_utils.training.encode` does."""
    if isinstance(sentences, (str, bytes)) or len(sentences) == 0:
        raise ValueError(f"expected a non-empty list of course_utils.data.Sentence, got {sentences!r:.60}")
    if not all(isinstance(s, data.Sentence) for s in sentences):
        kinds = sorted({type(s).__name__ for s in sentences if not isinstance(s, data.Sentence)})
        raise TypeError(f"expected course_utils.data.Sentence objects (from corpus(...)), got {', '.join(kinds)}")
    max_length = training.max_length_of(tokenizer)
    encodings = tokenizer([s.words for s in sentences], is_split_into_words=True,
                          truncation=max_length is not None, max_length=max_length)
    index = {tag: i for i, tag in enumerate(data.TAGS)}
    labels = [
        align_labels(encodings.word_ids(b), [index[t] for t in s.tags], every_piece=every_piece)
        for b, s in enumerate(sentences)
    ]
    return training.Encoded(ids=list(encodings["input_ids"]), labels=labels)


@torch.inference_mode()
def tag_accuracy(model, encoded: training.Encoded, pad_id: int, *, batch_size: int = 256) -> tuple[float, dict[str, float]]:
    """A tagger's accuracy over the labelled tokens, and per tag: ``(overall, {tag: accuracy})``."""
    training.check_data(encoded, model, labelled=True)
    model.eval()
    right = np.zeros(len(data.TAGS))
    total = np.zeros(len(data.TAGS))
    for start in range(0, len(encoded.ids), batch_size):
        input_ids, attention_mask = training.pad(encoded.ids[start : start + batch_size], pad_id)
        labels = training.label_tensor(encoded.labels[start : start + batch_size])
        predicted = model(input_ids=input_ids, attention_mask=attention_mask).logits.argmax(-1)  # (B, T)
        counted = labels != IGNORE_INDEX
        np.add.at(total, labels[counted].numpy(), 1)
        np.add.at(right, labels[counted].numpy(), (predicted[counted] == labels[counted]).numpy())
    if not total.sum():
        raise ValueError("expected at least one labelled token (a label other than -100), got none")
    per_tag = {tag: right[i] / total[i] for i, tag in enumerate(data.TAGS) if total[i]}
    return float(right.sum() / total.sum()), per_tag


def words_with_several_tags(sentences: Sequence[data.Sentence]) -> list[str]:
    """The words that ``sentences`` tag in more than one way (sorted): how much of part-of-speech
    tagging needs the context (in English, "book" is a noun or a verb by its neighbours)."""
    if isinstance(sentences, data.Sentence) or not all(isinstance(s, data.Sentence) for s in sentences):
        raise TypeError("expected a sequence of data.Sentence (data.corpus('train'), for instance)")
    tags: dict[str, set[str]] = {}
    for sentence in sentences:
        for word, tag in zip(sentence.words, sentence.tags):
            tags.setdefault(word, set()).add(tag)
    return sorted(word for word, seen in tags.items() if len(seen) > 1)


def _shape(value) -> str:
    return str(tuple(value.shape)) if hasattr(value, "shape") else type(value).__name__
