"""Tests of course_utils.task_heads: the classification head against Hugging Face's, word labels on WordPiece
tokens, the tagging data, the tagger's accuracy; and training.label_tensor / train_classifier for
token classification.

The head is compared with ``DistilBertForSequenceClassification`` in eval mode (random tiny models
with every weight moved away from its initial value, and the bundled student). Label alignment is
checked by properties (hypothesis) and against a reading of the tokens themselves (a ``##`` token
continues a word), which does not use ``word_ids()``.
"""

from __future__ import annotations

import copy
from types import SimpleNamespace

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn
from torch.nn import functional as F
from transformers import (
    BertConfig,
    BertForSequenceClassification,
    DistilBertConfig,
    DistilBertForSequenceClassification,
    DistilBertForTokenClassification,
)

from course_utils import data, models, task_heads, training
from tests.tiny_models import padded_batch, tiny_distilbert

IGNORE = task_heads.IGNORE_INDEX


pytestmark = pytest.mark.usefixtures("one_thread")


def _batch(vocab: int = 50, seed: int = 1):
    return padded_batch(vocab, seed, lengths=(9, 7, 4, 2))


def _head_and_logits(model, input_ids, attention_mask):
    with torch.no_grad():
        output = model(input_ids=input_ids, attention_mask=attention_mask, output_hidden_states=True)
        return task_heads.classification_head(output.hidden_states[-1], **task_heads.head_weights(model)), output.logits


# --------------------------------------------------------------------------------------------
# classification_head


@pytest.mark.parametrize("num_labels", [2, 3, 16, 20])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_classification_head_equals_hugging_face_logits(num_labels, dtype):
    model = tiny_distilbert(num_labels=num_labels).to(dtype)
    ours, theirs = _head_and_logits(model, *_batch())
    assert ours.shape == (4, num_labels) and ours.dtype == dtype
    assert theirs.std() > 0.3  # logits of order 1: the tolerance below is not met by small numbers alone
    torch.testing.assert_close(ours, theirs, rtol=0, atol=1e-6 if dtype == torch.float32 else 1e-12)


def test_classification_head_equals_the_bundled_students_logits(tokenizer):
    model = models.load_bundled("student-sentiment").eval()
    assert isinstance(model, DistilBertForSequenceClassification)
    encoded = training.encode(data.corpus("test")[:32], tokenizer)
    ours, theirs = _head_and_logits(model, *training.pad(encoded.ids, tokenizer.pad_token_id))
    assert ours.shape == (32, 2)
    torch.testing.assert_close(ours, theirs, rtol=0, atol=1e-6)


def test_only_the_first_position_counts():
    generator = torch.Generator().manual_seed(0)
    hidden = torch.randn(3, 5, 6, generator=generator, dtype=torch.float64)
    weights = task_heads.head_weights(tiny_distilbert(dim=6, n_heads=2, num_labels=4).double())
    changed = hidden.clone()
    changed[:, 1:] = torch.randn(3, 4, 6, generator=generator, dtype=torch.float64)
    assert torch.equal(task_heads.classification_head(hidden, **weights), task_heads.classification_head(changed, **weights))
    changed[:, 0] += 1.0
    assert not torch.allclose(
        task_heads.classification_head(hidden, **weights), task_heads.classification_head(changed, **weights)
    )


def test_the_relu_matters_so_the_parity_test_can_fail():
    """Without the ReLU (or with BERT's tanh) the logits differ by far more than the tolerance."""
    model = tiny_distilbert()
    input_ids, attention_mask = _batch()
    with torch.no_grad():
        output = model(input_ids=input_ids, attention_mask=attention_mask, output_hidden_states=True)
    w = task_heads.head_weights(model)
    pooled = output.hidden_states[-1][:, 0] @ w["pre_classifier_weight"].T + w["pre_classifier_bias"]
    for activation in (torch.tanh, lambda z: z):
        other = activation(pooled) @ w["classifier_weight"].T + w["classifier_bias"]
        assert (other - output.logits).abs().max() > 1e-2


def _good_args(b=2, t=3, d=4, c=5):
    return [torch.zeros(b, t, d), torch.zeros(d, d), torch.zeros(d), torch.zeros(c, d), torch.zeros(c)]


@pytest.mark.parametrize(
    "position, bad, message",
    [
        (0, torch.zeros(2, 4), r"hidden_states of shape \(B, T, D\), got \(2, 4\)"),
        (1, torch.zeros(4, 5), r"pre_classifier_weight of shape \(4, 4\), got \(4, 5\)"),
        (2, torch.zeros(5), r"pre_classifier_bias of shape \(4,\), got \(5,\)"),
        (3, torch.zeros(5, 3), r"classifier_weight of shape \(C, 4\), got \(5, 3\)"),
        (3, torch.zeros(4), r"classifier_weight of shape \(C, 4\), got \(4,\)"),
        (4, torch.zeros(4), r"classifier_bias of shape \(5,\), got \(4,\)"),
    ],
)
def test_classification_head_refuses_bad_shapes_saying_what_it_expected(position, bad, message):
    args = _good_args()
    args[position] = bad
    with pytest.raises(ValueError, match=message):
        task_heads.classification_head(*args)


@pytest.mark.parametrize("position", range(5))
def test_classification_head_refuses_what_is_not_a_tensor(position):
    args = _good_args()
    args[position] = args[position].numpy()
    name = ["hidden_states", "pre_classifier_weight", "pre_classifier_bias", "classifier_weight", "classifier_bias"]
    with pytest.raises(TypeError, match=f"expected {name[position]} to be a torch tensor, got ndarray"):
        task_heads.classification_head(*args)


def test_head_weights_reads_the_four_tensors_of_the_head():
    model = tiny_distilbert()
    weights = task_heads.head_weights(model)
    assert list(weights) == ["pre_classifier_weight", "pre_classifier_bias", "classifier_weight", "classifier_bias"]
    assert weights["pre_classifier_weight"].shape == (16, 16) and weights["classifier_weight"].shape == (3, 16)
    assert torch.equal(weights["classifier_bias"], model.classifier.bias)
    assert not any(w.requires_grad for w in weights.values())


@pytest.mark.parametrize("not_distilbert", ["bert", "linear", "text"])
def test_head_weights_of_another_model_raises_type_error(not_distilbert):
    model = {
        "bert": lambda: BertForSequenceClassification(BertConfig(vocab_size=20, hidden_size=8, num_hidden_layers=1,
                                                                 num_attention_heads=2, intermediate_size=16)),
        "linear": lambda: nn.Linear(3, 2),
        "text": lambda: "distilbert",
    }[not_distilbert]()  # fmt: skip
    with pytest.raises(TypeError, match="expected a DistilBertForSequenceClassification, got"):
        task_heads.head_weights(model)


# --------------------------------------------------------------------------------------------
# align_labels


@st.composite
def tokenized_sentences(draw):
    """``(word_ids, word_labels, pieces)``: [CLS], words in 1-4 pieces, [SEP], padding (or no specials)."""
    pieces = draw(st.lists(st.integers(1, 4), min_size=1, max_size=10))
    word_labels = draw(st.lists(st.integers(0, 11), min_size=len(pieces), max_size=len(pieces)))
    word_ids = [w for w, n in enumerate(pieces) for _ in range(n)]
    if draw(st.booleans()):
        word_ids = [None, *word_ids, None] + [None] * draw(st.integers(0, 3))
    return word_ids, word_labels, pieces


@settings(max_examples=60, deadline=None)
@given(tokenized_sentences())
def test_align_labels_labels_the_first_piece_of_each_word_once(sentence):
    word_ids, word_labels, pieces = sentence
    labels = task_heads.align_labels(word_ids, word_labels)
    assert len(labels) == len(word_ids)
    assert all(label == IGNORE for label, w in zip(labels, word_ids) if w is None)
    for word, label in enumerate(word_labels):
        positions = [i for i, w in enumerate(word_ids) if w == word]
        assert len(positions) == pieces[word]
        assert labels[positions[0]] == label and all(labels[i] == IGNORE for i in positions[1:])
    assert sum(label != IGNORE for label in labels) == len(word_labels)


@settings(max_examples=60, deadline=None)
@given(tokenized_sentences())
def test_align_labels_every_piece_labels_all_the_pieces(sentence):
    word_ids, word_labels, _ = sentence
    labels = task_heads.align_labels(word_ids, word_labels, every_piece=True)
    assert labels == [IGNORE if w is None else word_labels[w] for w in word_ids]


def _first_pieces(tokens: list[str]) -> list[int]:
    """Positions of the tokens that start a word, read from the tokens: not special, no ``##``."""
    return [i for i, t in enumerate(tokens) if t not in ("[CLS]", "[SEP]", "[PAD]") and not t.startswith("##")]


def test_align_labels_matches_a_reading_of_the_tokens(tokenizer):
    sentences = data.corpus("test")[:50]
    encodings = tokenizer([list(s.words) for s in sentences], is_split_into_words=True, padding=True)
    split = 0
    for b, sentence in enumerate(sentences):
        tokens = encodings.tokens(b)
        word_labels = [data.TAGS.index(t) for t in sentence.tags]
        expected = [IGNORE] * len(tokens)
        for position, label in zip(_first_pieces(tokens), word_labels, strict=True):
            expected[position] = label
        assert task_heads.align_labels(encodings.word_ids(b), word_labels) == expected
        split += len(tokens) - tokens.count("[PAD]") - 2 > len(sentence.words)
    assert split >= 10  # the test means something: many sentences have a word in pieces


def test_align_labels_accepts_tuples_and_numpy_integers():
    word_ids = (None, np.int64(0), np.int64(1), np.int64(1), None)
    assert task_heads.align_labels(word_ids, np.array([3, 7])) == [IGNORE, 3, 7, IGNORE, IGNORE]
    assert task_heads.align_labels([None, None], []) == [IGNORE, IGNORE]


@pytest.mark.parametrize("bad", [3, -1, 1.0, "0", True])
def test_align_labels_refuses_word_ids_that_are_not_words(bad):
    with pytest.raises(ValueError, match=r"expected word ids between 0 and 2 \(one label per word\) or None, got"):
        task_heads.align_labels([None, 0, bad, None], [5, 6, 7])


# --------------------------------------------------------------------------------------------
# tagging_data


def test_tagging_data_labels_the_first_piece_of_every_word_with_its_tag(tokenizer):
    sentences = data.corpus("test")[:20]
    encoded = task_heads.tagging_data(sentences, tokenizer)
    assert len(encoded.ids) == len(encoded.labels) == 20
    for ids, labels, sentence in zip(encoded.ids, encoded.labels, sentences):
        assert ids == tokenizer(list(sentence.words), is_split_into_words=True)["input_ids"]
        assert len(labels) == len(ids)
        tokens = tokenizer.convert_ids_to_tokens(ids)
        first = _first_pieces(tokens)
        assert sum(label != IGNORE for label in labels) == len(first) == len(sentence.words)
        assert [data.TAGS[labels[i]] for i in first] == list(sentence.tags)
    every = task_heads.tagging_data(sentences, tokenizer, every_piece=True)
    assert [sum(label != IGNORE for label in labels) for labels in every.labels] == [len(i) - 2 for i in every.ids]


# --------------------------------------------------------------------------------------------
# training.label_tensor and train_classifier with a label per token


def test_label_tensor_of_sentence_labels_and_of_token_labels():
    sentence_labels = training.label_tensor([1, 0, 1])
    assert sentence_labels.dtype == torch.long and sentence_labels.tolist() == [1, 0, 1]
    token_labels = training.label_tensor([[IGNORE, 1, 2, IGNORE], [IGNORE, 3, IGNORE], (IGNORE, 0, 0, 4, IGNORE)])
    assert token_labels.dtype == torch.long
    assert token_labels.tolist() == [
        [IGNORE, 1, 2, IGNORE, IGNORE],
        [IGNORE, 3, IGNORE, IGNORE, IGNORE],
        [IGNORE, 0, 0, 4, IGNORE],
    ]


@pytest.fixture(scope="module")
def tagging(tokenizer):
    return task_heads.tagging_data(data.corpus("train")[:48], tokenizer)


def _tagger(tokenizer, seed=0):
    torch.manual_seed(seed)
    config = DistilBertConfig(vocab_size=len(tokenizer), dim=16, n_layers=1, n_heads=2, hidden_dim=32,
                              max_position_embeddings=64, pad_token_id=tokenizer.pad_token_id,
                              num_labels=len(data.TAGS), dropout=0.0, attention_dropout=0.0)  # fmt: skip
    model = DistilBertForTokenClassification(config)
    with torch.no_grad():  # logits away from uniform, so that the loss depends on the labels
        model.classifier.weight.add_(torch.randn_like(model.classifier.weight))
    return model


def test_train_classifier_trains_a_token_classifier(tokenizer, tagging):
    model = _tagger(tokenizer)
    before = copy.deepcopy(model)
    history = training.train_classifier(model, tagging, tokenizer.pad_token_id, epochs=1, batch_size=16, lr=1e-3,
                                        warmup=1, progress=False)  # fmt: skip
    losses = history.losses["loss"]
    assert len(losses) == 3 and all(np.isfinite(losses))
    # The first loss is the cross-entropy of the first batch over its labelled tokens only (-100 ignored)
    first = next(training.step_batches(48, 16, seed=0, steps=3))
    input_ids, attention_mask = training.pad([tagging.ids[i] for i in first], tokenizer.pad_token_id)
    labels = training.label_tensor([tagging.labels[i] for i in first])
    with torch.no_grad():
        logits = before(input_ids=input_ids, attention_mask=attention_mask).logits
    expected = F.cross_entropy(logits.flatten(0, 1), labels.flatten(), ignore_index=IGNORE)
    assert losses[0] == pytest.approx(expected.item(), rel=1e-5)
    with_pad_labels = F.cross_entropy(logits.flatten(0, 1), labels.flatten().clamp(min=0))
    assert abs(with_pad_labels.item() - expected.item()) > 1e-3  # so the comparison above can fail
    assert any(not torch.equal(p, q) for p, q in zip(model.parameters(), before.parameters()))
    again = training.train_classifier(_tagger(tokenizer), tagging, tokenizer.pad_token_id, epochs=1, batch_size=16,
                                      lr=1e-3, warmup=1, progress=False)  # fmt: skip
    assert again.losses["loss"] == losses


# --------------------------------------------------------------------------------------------
# tag_accuracy


class _TagsFromIds(nn.Module):
    """A fake tagger: the tag of a token is its id modulo the number of tags."""

    def forward(self, input_ids, attention_mask):
        return SimpleNamespace(logits=F.one_hot(input_ids % len(data.TAGS), len(data.TAGS)).float())


@pytest.mark.parametrize("batch_size", [1, 2, 256])
def test_tag_accuracy_counts_the_labelled_tokens_by_hand(batch_size):
    noun, verb, adj = (data.TAGS.index(t) for t in ("NOUN", "VERB", "ADJ"))
    encoded = training.Encoded(
        ids=[[2, 12 + noun, 5, 3], [2, 24 + noun, 3], [2, adj, verb, 7, 3]],
        labels=[[IGNORE, noun, verb, IGNORE], [IGNORE, adj, IGNORE], [IGNORE, adj, verb, verb, IGNORE]],
    )
    # predicted: noun ✓, 5 ✗ (verb); noun ✗ (adj); adj ✓, verb ✓, 7 ✗ (verb); padding and specials not counted
    overall, per_tag = task_heads.tag_accuracy(_TagsFromIds(), encoded, pad_id=0, batch_size=batch_size)
    assert overall == pytest.approx(3 / 6)
    assert per_tag == pytest.approx({"NOUN": 1.0, "VERB": 1 / 3, "ADJ": 1 / 2})


def test_tag_accuracy_of_a_tagger_is_a_share_per_tag(tokenizer, tagging):
    model = _tagger(tokenizer)
    overall, per_tag = task_heads.tag_accuracy(model, tagging, tokenizer.pad_token_id, batch_size=20)
    assert set(per_tag) <= set(data.TAGS) and all(0.0 <= a <= 1.0 for a in per_tag.values())
    right = total = 0
    with torch.no_grad():
        for ids, labels in zip(tagging.ids, tagging.labels):
            predicted = model(input_ids=torch.tensor([ids])).logits[0].argmax(-1)
            counted = torch.tensor(labels) != IGNORE
            right += int((predicted[counted] == torch.tensor(labels)[counted]).sum())
            total += int(counted.sum())
    assert total == sum(len(s.words) for s in data.corpus("train")[:48])
    assert overall == pytest.approx(right / total, abs=1e-12)


def test_a_word_after_a_special_token_starts_again_as_in_hugging_faces_examples():
    """Sentence pairs repeat word ids after [SEP]: each sentence's first piece is labelled."""
    assert task_heads.align_labels([None, 0, 1, 1, None, 0, 1, None], [7, 8]) == [-100, 7, 8, -100, -100, 7, 8, -100]


def test_tag_accuracy_refuses_a_set_without_labels():
    model = DistilBertForTokenClassification(
        DistilBertConfig(vocab_size=20, dim=8, n_layers=1, n_heads=2, hidden_dim=16, num_labels=len(data.TAGS))
    )
    empty = training.Encoded(ids=[[2, 5, 3]], labels=[[-100, -100, -100]])
    with pytest.raises(ValueError, match="at least one labelled token"):
        task_heads.tag_accuracy(model, empty, 0)


def test_label_tensor_takes_arrays_and_empty_batches():
    assert training.label_tensor(np.array([1, 0])).tolist() == [1, 0]
    assert training.label_tensor([np.array([1, -100]), np.array([2])]).tolist() == [[1, -100], [2, -100]]
    assert training.label_tensor([]).dtype == torch.int64


def test_words_with_several_tags_finds_the_words_tagged_two_ways():
    from course_utils import data, task_heads

    one = data.Sentence(("the", "did", "did", "not", "run", "."), ("DET", "NOUN", "AUX", "PART", "VERB", "PUNCT"),
                        1, (), ())
    assert task_heads.words_with_several_tags([one]) == ["did"]
    with pytest.raises(TypeError, match="data.Sentence"):
        task_heads.words_with_several_tags(["the did"])
