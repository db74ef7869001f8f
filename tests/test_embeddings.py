"""course_utils.embeddings and tokenization.pad_batch: ids to a padded batch, ids to vectors."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from course_utils import embeddings
from course_utils.tokenization import load_bundled_tokenizer, pad_batch


@settings(max_examples=50, deadline=None)
@given(st.integers(1, 30), st.integers(1, 6), st.integers(1, 4), st.integers(0, 2**31 - 1))
def test_lookup_equals_one_hot_times_table_and_torch_embedding(vocab, d_model, batch, seed):
    rng = np.random.default_rng(seed)
    table = rng.standard_normal((vocab, d_model))
    ids = rng.integers(0, vocab, (batch, 5))
    looked_up = embeddings.embedding_lookup(ids, table)
    assert looked_up.shape == (batch, 5, d_model)
    np.testing.assert_allclose(embeddings.one_hot(ids, vocab) @ table, looked_up, rtol=0, atol=1e-12)
    reference = torch.nn.Embedding.from_pretrained(torch.from_numpy(table))(torch.from_numpy(ids))
    np.testing.assert_array_equal(reference.numpy(), looked_up)


@settings(max_examples=50, deadline=None)
@given(st.integers(1, 12), st.integers(1, 5), st.integers(1, 4), st.integers(0, 2**31 - 1))
def test_embedding_grad_is_torchs_autograd_and_one_hot_transposed(vocab, d_model, batch, seed):
    rng = np.random.default_rng(seed)
    ids = rng.integers(0, vocab, (batch, 6))  # repeats are likely: their gradients must add up
    grad_vectors = rng.standard_normal((batch, 6, d_model))
    grad = embeddings.embedding_grad(ids, grad_vectors, vocab)
    table = torch.zeros(vocab, d_model, dtype=torch.float64, requires_grad=True)
    torch.nn.functional.embedding(torch.from_numpy(ids), table).backward(torch.from_numpy(grad_vectors))
    np.testing.assert_allclose(grad, table.grad.numpy(), rtol=0, atol=1e-12)
    one_hot = embeddings.one_hot(ids, vocab).reshape(-1, vocab)
    np.testing.assert_allclose(one_hot.T @ grad_vectors.reshape(-1, d_model), grad, rtol=0, atol=1e-12)
    absent = np.setdiff1d(np.arange(vocab), ids)
    assert (grad[absent] == 0).all()


def test_one_hot_rows_have_a_single_one():
    rows = embeddings.one_hot(np.array([[0, 2], [1, 1]]), 3)
    assert rows.shape == (2, 2, 3)
    np.testing.assert_array_equal(rows.sum(-1), 1)
    assert rows[0, 1].tolist() == [0, 0, 1]


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda: embeddings.one_hot([0, 3], 3), ValueError, r"expected ids in \[0, vocab_size=3\), got 3 at ids\[1\]"),
        (lambda: embeddings.one_hot([0.5], 3), TypeError, "expected ids to hold integer token ids"),
        (lambda: embeddings.one_hot([0], 0), ValueError, "vocab_size to be a positive integer"),
        (lambda: embeddings.embedding_lookup([[0]], np.zeros(4)), ValueError, r"table of shape \(V, D\)"),
        (lambda: embeddings.embedding_lookup([-1], np.zeros((4, 2))), ValueError, r"got -1 at ids\[0\]"),
        (lambda: embeddings.embedding_parameters(0, 4), ValueError, "vocab_size"),
        (lambda: embeddings.embedding_grad([[0, 1]], np.zeros((1, 3, 2)), 4), ValueError,
         r"grad_vectors of shape ids.shape \+ \(D,\) = \(1, 2\) \+ \(D,\), got shape \(1, 3, 2\)"),
        (lambda: embeddings.embedding_grad([[0, 4]], np.zeros((1, 2, 2)), 4), ValueError, r"got 4 at ids\[0, 1\]"),
    ],
)
def test_bad_inputs_are_named(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_embedding_parameters_of_distilbert():
    assert embeddings.embedding_parameters(30_522, 768) == 23_440_896


def test_pad_batch_matches_the_tokenizer_padding():
    tokenizer = load_bundled_tokenizer()
    texts = ["I love NLP", "the cats that the dog chased were not unhappy .", "it is calm"]
    reference = tokenizer(texts, padding=True, return_tensors="np")
    ids, mask = pad_batch([tokenizer(t)["input_ids"] for t in texts], tokenizer.pad_token_id)
    np.testing.assert_array_equal(ids, reference["input_ids"])
    np.testing.assert_array_equal(mask, reference["attention_mask"])


def test_pad_batch_does_not_change_its_input_and_uses_pad_id():
    sequences = [[5, 6], [7]]
    ids, mask = pad_batch(sequences, pad_id=9)
    assert sequences == [[5, 6], [7]]
    assert ids.tolist() == [[5, 6], [7, 9]] and mask.tolist() == [[1, 1], [1, 0]]


@pytest.mark.parametrize("bad", [[], "abc", [[1.5, 2]], [[[1]]]])
def test_pad_batch_rejects_bad_input(bad):
    with pytest.raises(ValueError, match="expected"):
        pad_batch(bad)
