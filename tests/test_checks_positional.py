"""Tests of the checkers of lesson 03: check_sinusoidal_encoding and check_dots_by_distance.

The wrong versions below are written the way a learner writes them (loops, vectorised code, torch),
independently of the checker's own list of mistakes; each must be rejected with the hint that names
its mistake. The correct versions, however written, must pass with the one success line.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch

from course_utils import checks, positional
from course_utils.checks.positional import _DOTS_BY_DISTANCE, _SINUSOIDAL_ENCODING
from tests.checker_cases import stub as _stub

SINUSOIDAL_PASS = "✓ sinusoidal_encoding: all 6 cases pass.\n"


# --------------------------------------------------------------------------------------------
# Correct sinusoidal encodings


def loop_over_pairs(seq_len, d_model):
    pe = np.zeros((seq_len, d_model))
    for pos in range(seq_len):
        for i in range(d_model // 2):
            angle = pos / 10000 ** (2 * i / d_model)
            pe[pos, 2 * i] = math.sin(angle)
            pe[pos, 2 * i + 1] = math.cos(angle)
    return pe


def loop_over_even_dimensions(seq_len, d_model):
    pe = np.zeros((seq_len, d_model))
    for pos in range(seq_len):
        for i in range(0, d_model, 2):  # i is the even dimension 2k
            pe[pos, i] = np.sin(pos / 10000 ** (i / d_model))
            pe[pos, i + 1] = np.cos(pos / 10000 ** (i / d_model))
    return pe


def vectorised_slices(seq_len, d_model):
    positions = np.arange(seq_len)[:, None]
    div = 10000 ** (np.arange(0, d_model, 2) / d_model)
    pe = np.zeros((seq_len, d_model))
    pe[:, 0::2] = np.sin(positions / div)
    pe[:, 1::2] = np.cos(positions / div)
    return pe


def log_trick_torch_float32(seq_len, d_model):  # the "Annotated Transformer" way
    position = torch.arange(seq_len, dtype=torch.float32).unsqueeze(1)
    div_term = torch.exp(torch.arange(0, d_model, 2, dtype=torch.float32) * (-math.log(10000.0) / d_model))
    pe = torch.zeros(seq_len, d_model)
    pe[:, 0::2] = torch.sin(position * div_term)
    pe[:, 1::2] = torch.cos(position * div_term)
    return pe


def hugging_face_style(seq_len, d_model):  # transformers' _create_sinusoidal_embeddings
    position_enc = np.array(
        [[pos / np.power(10000, 2 * (j // 2) / d_model) for j in range(d_model)] for pos in range(seq_len)]
    )
    out = torch.empty(seq_len, d_model)
    out[:, 0::2] = torch.FloatTensor(np.sin(position_enc[:, 0::2]))
    out[:, 1::2] = torch.FloatTensor(np.cos(position_enc[:, 1::2]))
    return out


def stacked_and_reshaped(seq_len, d_model):
    angles = np.arange(seq_len)[:, None] / 10000 ** (np.arange(d_model // 2) * 2 / d_model)
    return np.stack([np.sin(angles), np.cos(angles)], axis=-1).reshape(seq_len, d_model)


def float32_numpy(seq_len, d_model):
    positions = np.arange(seq_len, dtype=np.float32)[:, None]
    rates = np.float32(10000) ** (-np.arange(0, d_model, 2, dtype=np.float32) / np.float32(d_model))
    pe = np.zeros((seq_len, d_model), dtype=np.float32)
    pe[:, 0::2], pe[:, 1::2] = np.sin(positions * rates), np.cos(positions * rates)
    return pe


def list_of_lists(seq_len, d_model):
    return [
        [
            math.sin(p / 10000 ** (j / d_model)) if j % 2 == 0 else math.cos(p / 10000 ** ((j - 1) / d_model))
            for j in range(d_model)
        ]
        for p in range(seq_len)
    ]


CORRECT_ENCODINGS = {
    "loop over pairs": loop_over_pairs,
    "loop over even dimensions": loop_over_even_dimensions,
    "vectorised with slices": vectorised_slices,
    "torch float32 with exp/log": log_trick_torch_float32,
    "Hugging Face's code": hugging_face_style,
    "stack then reshape": stacked_and_reshaped,
    "numpy float32": float32_numpy,
    "the package's reference": positional.sinusoidal_encoding,
}


@pytest.mark.parametrize("implementation", CORRECT_ENCODINGS.values(), ids=CORRECT_ENCODINGS.keys())
def test_check_sinusoidal_encoding_accepts_correct_implementations(implementation, capsys):
    assert checks.check_sinusoidal_encoding(implementation) is None
    assert capsys.readouterr().out == SINUSOIDAL_PASS


# --------------------------------------------------------------------------------------------
# Wrong sinusoidal encodings, written as learners write them


def _vectorised(seq_len, d_model, *, even=np.sin, odd=np.cos, exponent=None, base=10000.0, start=0, convert=None):
    positions = np.arange(start, start + seq_len)[:, None]
    i = np.arange(0, d_model, 2)
    exponent = i / d_model if exponent is None else exponent(i, d_model)
    angles = positions / base**exponent
    if convert is not None:
        angles = convert(angles)
    pe = np.zeros((seq_len, d_model))
    pe[:, 0::2], pe[:, 1::2] = even(angles), odd(angles)
    return pe


def dimension_index_exponent(seq_len, d_model):
    pe = np.zeros((seq_len, d_model))
    for pos in range(seq_len):
        for j in range(d_model):
            angle = pos / 10000 ** (j / d_model)  # j, the dimension, instead of 2 * (j // 2)
            pe[pos, j] = math.sin(angle) if j % 2 == 0 else math.cos(angle)
    return pe


def twice_the_dimension_index(seq_len, d_model):
    pe = np.zeros((seq_len, d_model))
    for pos in range(seq_len):
        for j in range(d_model):
            angle = pos / 10000 ** (2 * j / d_model)
            pe[pos, j] = math.sin(angle) if j % 2 == 0 else math.cos(angle)
    return pe


def doubled_even_loop(seq_len, d_model):
    pe = np.zeros((seq_len, d_model))
    for pos in range(seq_len):
        for i in range(0, d_model, 2):
            pe[pos, i] = math.sin(pos / 10000 ** (2 * i / d_model))  # i is already 2k
            pe[pos, i + 1] = math.cos(pos / 10000 ** (2 * i / d_model))
    return pe


def integer_division(seq_len, d_model):
    pe = np.zeros((seq_len, d_model))
    for pos in range(seq_len):
        for i in range(d_model // 2):
            angle = pos / 10000 ** (2 * i // d_model)
            pe[pos, 2 * i], pe[pos, 2 * i + 1] = math.sin(angle), math.cos(angle)
    return pe


def concatenated_halves(seq_len, d_model):
    angles = np.arange(seq_len)[:, None] / 10000 ** (np.arange(0, d_model, 2) / d_model)
    return np.concatenate([np.sin(angles), np.cos(angles)], axis=-1)


def torch_concatenated(seq_len, d_model):
    position = torch.arange(seq_len).unsqueeze(1).float()
    div_term = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
    return torch.cat([torch.sin(position * div_term), torch.cos(position * div_term)], dim=1)


WRONG_ENCODINGS = {
    "sin and cos swapped": (lambda t, d: _vectorised(t, d, even=np.cos, odd=np.sin), r"sin and cos are swapped"),
    "halves concatenated": (concatenated_halves, r"that is a concatenation\. Interleave them"),
    "halves concatenated, torch": (torch_concatenated, r"that is a concatenation"),
    "transposed": (lambda t, d: vectorised_slices(t, d).T, r"expected the result of shape .*Hint: the result is transposed"),
    "positions from 1": (lambda t, d: _vectorised(t, d, start=1), r"positions count from 0"),
    "dimension index j in the exponent": (
        dimension_index_exponent,
        r"you used the dimension index j, 10000\^\(j/d_model\)",
    ),
    "2j with j the dimension index": (twice_the_dimension_index, r"2i is the even dimension of the pair"),
    "2i with i the even dimension (loop)": (doubled_even_loop, r"i is already 2 x the pair index"),
    "forgot the factor 2": (lambda t, d: _vectorised(t, d, exponent=lambda i, d: i / 2 / d), r"forget the factor 2"),
    "integer division": (integer_division, r"integer division \(2 \* i // d_model\)"),
    "multiplied instead of divided": (
        lambda t, d: _vectorised(t, d, exponent=lambda i, d: -i / d),
        r"multiplied by 10000\^\(2i/d_model\): they should be divided",
    ),
    "base 1000": (lambda t, d: _vectorised(t, d, base=1000.0), r"the base of the power is 10000, not 1000"),
    "base e": (lambda t, d: _vectorised(t, d, base=math.e), r"the base of the power is 10000, not e"),
    "degrees converted to radians": (lambda t, d: _vectorised(t, d, convert=np.radians), r"already in radians"),
    "radians converted to degrees": (
        lambda t, d: _vectorised(t, d, convert=np.degrees),
        r"do not convert them \(np\.degrees",
    ),
    "sines only": (lambda t, d: _vectorised(t, d, odd=np.sin), r"every dimension holds a sine"),
    "cosines only": (lambda t, d: _vectorised(t, d, even=np.cos), r"every dimension holds a cosine"),
    "the angles, no sin or cos": (
        lambda t, d: np.repeat(np.arange(t)[:, None] / 10000 ** (np.arange(0, d, 2) / d), 2, axis=1),
        r"the angles pos / 10000\^\(2i/d_model\) themselves",
    ),
    "a batch of one": (lambda t, d: vectorised_slices(t, d)[None], r"without a batch axis"),
    "sines only, half the columns": (
        lambda t, d: np.sin(np.arange(t)[:, None] / 10000 ** (np.arange(0, d, 2) / d)),
        r"d_model / 2 columns: each frequency gives two columns",
    ),
    "one row too many": (lambda t, d: positional.sinusoidal_encoding(t + 1, d), r"the table should have seq_len rows"),
    "something else entirely": (
        lambda t, d: 0.5 * vectorised_slices(t, d),
        r"compare your table with PE\[pos, 2i\] = sin",
    ),
}


@pytest.mark.parametrize("implementation, hint", WRONG_ENCODINGS.values(), ids=WRONG_ENCODINGS.keys())
def test_check_sinusoidal_encoding_rejects_common_mistakes_with_a_hint(implementation, hint, capsys):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a learner's mistake must not make the checker warn
        with pytest.raises(AssertionError, match=f"(?s){hint}") as error:
            checks.check_sinusoidal_encoding(implementation)
    assert "sinusoidal_encoding is not right yet on the case" in str(error.value)
    assert capsys.readouterr().out == ""


def test_every_sinusoidal_mistake_differs_from_the_reference_and_the_others_on_the_first_case():
    """Otherwise a mistake could pass, or be diagnosed as another one."""
    args = (10, 8)
    outputs = [positional.sinusoidal_encoding(*args)] + [m.wrong(*args) for m in _SINUSOIDAL_ENCODING.mistakes]
    for a in range(len(outputs)):
        for b in range(a + 1, len(outputs)):
            same_shape = np.shape(outputs[a]) == np.shape(outputs[b])
            assert not (same_shape and np.allclose(outputs[a], outputs[b], atol=1e-3)), (a, b)


def test_check_sinusoidal_encoding_explains_a_crash():
    def odd_loop(seq_len, d_model):
        pe = np.zeros((seq_len, d_model))
        for pos in range(seq_len):
            for i in range(0, d_model, 2):
                pe[pos, i + 2] = math.sin(pos / 10000 ** (i / d_model))  # off by two: IndexError
        return pe

    with pytest.raises(
        AssertionError, match=r"(?s)raised IndexError.*The checker calls sinusoidal_encoding\(seq_len, d_model\)"
    ):
        checks.check_sinusoidal_encoding(odd_loop)


def test_check_sinusoidal_encoding_with_the_stub_prints_one_line(capsys):
    assert checks.check_sinusoidal_encoding(_stub) is None
    assert capsys.readouterr().out == checks.not_attempted_message("sinusoidal_encoding") + "\n"


# --------------------------------------------------------------------------------------------
# check_dots_by_distance


def loop_with_np_dot(table, start, max_distance):
    return np.array([np.dot(table[start], table[start + k]) for k in range(max_distance + 1)])


def loop_by_hand(table, start, max_distance):
    dots = np.zeros(max_distance + 1)
    for k in range(max_distance + 1):
        for j in range(table.shape[1]):
            dots[k] += table[start, j] * table[start + k, j]
    return dots


CORRECT_DOTS = {
    "a loop with np.dot": loop_with_np_dot,
    "a double loop": loop_by_hand,
    "rows @ vector": lambda table, start, k: table[start : start + k + 1] @ table[start],
    "multiply then sum": lambda table, start, k: (table[start : start + k + 1] * table[start]).sum(axis=1),
    "einsum": lambda table, start, k: np.einsum("kd,d->k", table[start : start + k + 1], table[start]),
    "a row of the Gram matrix": lambda table, start, k: (table @ table.T)[start, start : start + k + 1],
    "fancy indexing": lambda table, start, k: table[start + np.arange(k + 1)] @ table[start],
    "torch": lambda table, start, k: torch.as_tensor(table)[start : start + k + 1] @ torch.as_tensor(table)[start],
    "float32": lambda table, start, k: table[start : start + k + 1].astype(np.float32) @ table[start].astype(np.float32),
    "the package's reference": positional.dots_by_distance,
}
DOTS_PASS = "✓ dots_by_distance: all 6 cases pass.\n"


@pytest.mark.parametrize("implementation", CORRECT_DOTS.values(), ids=CORRECT_DOTS.keys())
def test_check_dots_by_distance_accepts_correct_implementations(implementation, capsys):
    assert checks.check_dots_by_distance(implementation) is None
    assert capsys.readouterr().out == DOTS_PASS


def from_position_zero(table, start, max_distance):
    """The learner who tried it on the sinusoidal table, where the start does not matter."""
    return np.array([table[0] @ table[k] for k in range(max_distance + 1)])


def cosine_loop(table, start, max_distance):
    here = table[start]
    return np.array(
        [here @ table[start + k] / (np.linalg.norm(here) * np.linalg.norm(table[start + k])) for k in range(max_distance + 1)]
    )


WRONG_DOTS = {
    "the first rows of the table": (
        lambda table, start, k: table[: k + 1] @ table[start],
        r"compares position `start` with the first rows of the table",
    ),
    "always from position 0": (from_position_zero, r"measured from position 0, whatever `start` is"),
    "k positions back": (
        lambda table, start, k: np.array([table[start] @ table[start - d] for d in range(k + 1)]),
        r"with position start - k, k positions back",
    ),
    "cosine similarity": (cosine_loop, r"that is the cosine similarity"),
    "cosine similarity with torch": (
        lambda table, start, k: torch.nn.functional.cosine_similarity(
            torch.as_tensor(table)[start : start + k + 1], torch.as_tensor(table)[start][None], dim=1
        ),
        r"that is the cosine similarity",
    ),
    "the mean of the products": (
        lambda table, start, k: (table[start : start + k + 1] * table[start]).mean(axis=1),
        r"divided by D: a dot product sums",
    ),
    "squared distances": (
        lambda table, start, k: np.array([np.sum((table[start] - table[start + d]) ** 2) for d in range(k + 1)]),
        r"these are squared distances",
    ),
    "range(max_distance)": (
        lambda table, start, k: np.array([table[start] @ table[start + d] for d in range(k)]),
        r"the distances stop one short",
    ),
    "range(1, max_distance + 1)": (
        lambda table, start, k: np.array([table[start] @ table[start + d] for d in range(1, k + 1)]),
        r"the first entry is distance 1",
    ),
    "products not summed": (
        lambda table, start, k: table[start : start + k + 1] * table[start],
        r"must be summed over the D dimensions",
    ),
    "summed over the positions": (
        lambda table, start, k: (table[start : start + k + 1] * table[start]).sum(axis=0),
        r"sum over the dimensions .* not over the positions",
    ),
    "the whole Gram matrix": (lambda table, start, k: table @ table.T, r"a matrix of dot products between many positions"),
    "something else": (
        lambda table, start, k: table[start : start + k + 1] @ table[start] + 1.0,
        r"entry k should be the dot product table\[start\] \. table\[start \+ k\]",
    ),
}


@pytest.mark.parametrize("implementation, hint", WRONG_DOTS.values(), ids=WRONG_DOTS.keys())
def test_check_dots_by_distance_rejects_common_mistakes_with_a_hint(implementation, hint, capsys):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a learner's mistake must not make the checker warn
        with pytest.raises(AssertionError, match=f"(?s){hint}") as error:
            checks.check_dots_by_distance(implementation)
    assert "dots_by_distance" in str(error.value)
    assert capsys.readouterr().out == ""


def test_every_dots_mistake_differs_from_the_reference_and_the_others_on_the_first_case():
    """Otherwise a mistake could pass, or be diagnosed as another one."""
    table = np.random.default_rng(11).normal(0.0, 1.0, (40, 6))
    args = (table, 12, 8)
    outputs = [positional.dots_by_distance(*args)] + [m.wrong(*args) for m in _DOTS_BY_DISTANCE.mistakes]
    for a in range(len(outputs)):
        for b in range(a + 1, len(outputs)):
            same_shape = np.shape(outputs[a]) == np.shape(outputs[b])
            assert not (same_shape and np.allclose(outputs[a], outputs[b], atol=1e-3)), (a, b)


def test_ignoring_the_start_passes_on_a_sinusoidal_table_so_the_checker_needs_a_learned_one():
    """Why the first case is a random table: for the sinusoidal table the start does not matter."""
    table = positional.sinusoidal_encoding(120, 16)
    np.testing.assert_allclose(from_position_zero(table, 30, 50), positional.dots_by_distance(table, 30, 50), atol=1e-9)


def test_check_dots_by_distance_cannot_be_spoiled_by_writing_into_the_table(capsys):
    def vandal(table, start, max_distance):
        result = table[start : start + max_distance + 1] @ table[start]
        table[...] = 0.0
        return result

    with pytest.raises(AssertionError, match="changed its input `table` in place"):
        checks.check_dots_by_distance(vandal)
    checks.check_dots_by_distance(positional.dots_by_distance)
    assert capsys.readouterr().out == DOTS_PASS


def test_check_dots_by_distance_with_the_stub_prints_one_line(capsys):
    assert checks.check_dots_by_distance(_stub) is None
    assert capsys.readouterr().out == checks.not_attempted_message("dots_by_distance") + "\n"


@pytest.mark.parametrize("checker", [checks.check_sinusoidal_encoding, checks.check_dots_by_distance])
def test_positional_checkers_reject_non_callables(checker):
    with pytest.raises(TypeError, match=r"Pass the function without calling it"):
        checker(np.zeros((4, 4)))
