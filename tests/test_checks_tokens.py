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
        (pad_lists, r"expected an array \(numpy or torch\), got a list"),
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
