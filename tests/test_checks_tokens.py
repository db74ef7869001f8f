"""The lesson 02 checkers reject the wrong versions a learner writes and accept the right ones."""

import numpy as np
import pytest

from course_utils import checks


def pad_right(sequences, pad_id):
    length = max(len(s) for s in sequences)
    ids = [list(s) + [pad_id] * (length - len(s)) for s in sequences]
    mask = [[1] * len(s) + [0] * (length - len(s)) for s in sequences]
    return np.array(ids), np.array(mask)


def pad_numpy_bool(sequences, pad_id):
    length = max(map(len, sequences))
    ids = np.full((len(sequences), length), pad_id)
    for b, s in enumerate(sequences):
        ids[b, : len(s)] = s
    mask = np.arange(length)[None, :] < np.array([len(s) for s in sequences])[:, None]
    return ids, mask  # a boolean mask is right too


def pad_lists(sequences, pad_id):
    length = max(len(s) for s in sequences)
    return ([s + [pad_id] * (length - len(s)) for s in sequences],
            [[1] * len(s) + [0] * (length - len(s)) for s in sequences])


@pytest.mark.parametrize("fn", [pad_right, pad_numpy_bool])
def test_pad_batch_accepts_correct_versions(fn, capsys):
    checks.check_pad_batch(fn)
    assert "all 6 cases pass" in capsys.readouterr().out


def inverted(sequences, pad_id):
    ids, mask = pad_right(sequences, pad_id)
    return ids, 1 - mask


def left(sequences, pad_id):
    length = max(len(s) for s in sequences)
    return (np.array([[pad_id] * (length - len(s)) + list(s) for s in sequences]),
            np.array([[0] * (length - len(s)) + [1] * len(s) for s in sequences]))


def zero_pad(sequences, pad_id):
    return pad_right(sequences, 0)


def all_ones(sequences, pad_id):
    ids, mask = pad_right(sequences, pad_id)
    return ids, np.ones_like(mask)


def too_long(sequences, pad_id):
    return (np.array([list(s) + [pad_id] * (8 - len(s)) for s in sequences]),
            np.array([[1] * len(s) + [0] * (8 - len(s)) for s in sequences]))


def mask_from_values(sequences, pad_id):
    ids, _ = pad_right(sequences, pad_id)
    return ids, (ids != pad_id).astype(int)  # right until a real token has the padding id's value


def swapped(sequences, pad_id):
    ids, mask = pad_right(sequences, pad_id)
    return mask, ids


def mutating(sequences, pad_id):
    length = max(len(s) for s in sequences)
    mask = [[1] * len(s) + [0] * (length - len(s)) for s in sequences]
    for s in sequences:
        s += [pad_id] * (length - len(s))
    return np.array(sequences), np.array(mask)


@pytest.mark.parametrize(
    "fn, hint",
    [
        (inverted, "inverted"),
        (left, "on the left"),
        (zero_pad, "use the pad_id argument"),
        (all_ones, "1 everywhere"),
        (mask_from_values, r"from the ids' values \(ids != pad_id\)"),
        (too_long, "longest sequence"),
        (swapped, "input_ids first"),
        (mutating, "changed its input `sequences` in place"),
        (pad_lists, r"returned a list; return an array \(numpy or torch\)"),
    ],
)
def test_pad_batch_rejects_wrong_versions_naming_the_mistake(fn, hint):
    with pytest.raises(AssertionError, match=hint):
        checks.check_pad_batch(fn)


def test_pad_batch_stub_is_not_attempted(capsys):
    def stub(sequences, pad_id):
        raise NotImplementedError

    checks.check_pad_batch(stub)
    assert capsys.readouterr().out == checks.not_attempted_message("pad_batch") + "\n"


def lookup_index(ids, table):
    return table[ids]


def lookup_one_hot(ids, table):
    return np.eye(table.shape[0])[ids] @ table


def lookup_loops(ids, table):
    out = np.zeros(ids.shape + (table.shape[1],))
    for b in range(ids.shape[0]):
        for t in range(ids.shape[1]):
            out[b, t] = table[ids[b, t]]
    return out


def lookup_torch(ids, table):
    import torch

    return torch.nn.functional.embedding(torch.as_tensor(ids), torch.as_tensor(table))


@pytest.mark.parametrize("fn", [lookup_index, lookup_one_hot, lookup_loops, lookup_torch])
def test_embedding_lookup_accepts_correct_versions(fn, capsys):
    checks.check_embedding_lookup(fn)
    assert "all 5 cases pass" in capsys.readouterr().out


@pytest.mark.parametrize(
    "fn, hint",
    [
        (lambda ids, table: table[ids - 1], "off by one"),
        (lambda ids, table: np.swapaxes(table[ids], 0, 1), "axes are swapped"),
        (lambda ids, table: table.T[:, ids], "Rows are tokens|shape"),
    ],
)
def test_embedding_lookup_rejects_wrong_versions(fn, hint):
    with pytest.raises(AssertionError, match=hint):
        checks.check_embedding_lookup(fn)


def grad_add_at(ids, grad_vectors, vocab_size):
    grad = np.zeros((vocab_size, grad_vectors.shape[-1]), dtype=grad_vectors.dtype)
    np.add.at(grad, ids, grad_vectors)
    return grad


def grad_one_hot(ids, grad_vectors, vocab_size):
    one_hot = np.eye(vocab_size)[ids.reshape(-1)]  # (B*T, V)
    return (one_hot.T @ grad_vectors.reshape(-1, grad_vectors.shape[-1])).astype(grad_vectors.dtype)


def grad_einsum(ids, grad_vectors, vocab_size):
    return np.einsum("btv,btd->vd", np.eye(vocab_size, dtype=grad_vectors.dtype)[ids], grad_vectors)


def grad_loops(ids, grad_vectors, vocab_size):
    grad = np.zeros((vocab_size, grad_vectors.shape[-1]), dtype=grad_vectors.dtype)
    for b in range(ids.shape[0]):
        for t in range(ids.shape[1]):
            grad[ids[b, t]] += grad_vectors[b, t]  # one position at a time: repeats add up
    return grad


def grad_autograd(ids, grad_vectors, vocab_size):
    import torch

    table = torch.zeros(vocab_size, grad_vectors.shape[-1], dtype=torch.float64, requires_grad=True)
    torch.nn.functional.embedding(torch.as_tensor(ids), table).backward(torch.as_tensor(grad_vectors).double())
    return table.grad.to(torch.float32 if grad_vectors.dtype == np.float32 else torch.float64)


def grad_torch_float32(ids, grad_vectors, vocab_size):
    """As the lesson's next cell computes it: torch's float32 gradient of the table."""
    import torch

    table = torch.zeros(vocab_size, grad_vectors.shape[-1], requires_grad=True)  # float32
    torch.nn.functional.embedding(torch.as_tensor(ids), table).backward(torch.as_tensor(grad_vectors).float())
    return table.grad.numpy()


@pytest.mark.parametrize("fn", [grad_add_at, grad_one_hot, grad_einsum, grad_loops, grad_autograd, grad_torch_float32])
def test_embedding_grad_accepts_correct_versions(fn, capsys):
    checks.check_embedding_grad(fn)
    assert "all 7 cases pass" in capsys.readouterr().out


def grad_assigned(ids, grad_vectors, vocab_size):
    grad = np.zeros((vocab_size, grad_vectors.shape[-1]), dtype=grad_vectors.dtype)
    grad[ids] = grad_vectors  # a repeated id: the last write wins
    return grad


def grad_plus_equals(ids, grad_vectors, vocab_size):
    grad = np.zeros((vocab_size, grad_vectors.shape[-1]), dtype=grad_vectors.dtype)
    grad[ids] += grad_vectors  # buffered: a repeated id is added once
    return grad


def grad_mean(ids, grad_vectors, vocab_size):
    counts = np.bincount(ids.reshape(-1), minlength=vocab_size)
    return grad_add_at(ids, grad_vectors, vocab_size) / np.maximum(counts, 1)[:, None]


def grad_every_row(ids, grad_vectors, vocab_size):
    total = grad_vectors.reshape(-1, grad_vectors.shape[-1]).sum(0)
    return np.tile(total, (vocab_size, 1))


def grad_of_vectors(ids, grad_vectors, vocab_size):
    return grad_vectors  # (B, T, D): the gradient of the vectors, not of the table


def grad_ones(ids, grad_vectors, vocab_size):
    grad = np.zeros((vocab_size, grad_vectors.shape[-1]), dtype=grad_vectors.dtype)
    grad[np.unique(ids)] = 1  # "the rows that learn": right rows, wrong values
    return grad


@pytest.mark.parametrize(
    "fn, hint",
    [
        (grad_assigned, "occurs twice"),
        (grad_plus_equals, "occurs twice"),
        (grad_mean, "mean of its positions"),
        (lambda ids, g, v: np.roll(grad_add_at(ids, g, v), -1, axis=0), "off by one"),
        (grad_every_row, "every row got the gradient"),
        (grad_of_vectors, r"one row per token of the vocabulary"),
        (grad_ones, "sum of grad_vectors"),
    ],
)
def test_embedding_grad_rejects_wrong_versions_naming_the_mistake(fn, hint):
    with pytest.raises(AssertionError, match=hint):
        checks.check_embedding_grad(fn)


def test_embedding_grad_stub_is_not_attempted(capsys):
    def stub(ids, grad_vectors, vocab_size):
        raise NotImplementedError

    checks.check_embedding_grad(stub)
    assert capsys.readouterr().out == checks.not_attempted_message("embedding_grad") + "\n"
