"""Tests of the checkers of lesson 03: check_sinusoidal_encoding and check_add_positions.

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
from course_utils.checks.positional import _ADD_POSITIONS, _SINUSOIDAL_ENCODING
from tests.checker_cases import stub as _stub

SINUSOIDAL_PASS = "✓ sinusoidal_encoding: all 6 cases pass.\n"
ADD_PASS = "✓ add_positions: all 6 cases pass.\n"


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
# check_add_positions


CORRECT_ADDS = {
    "slice then add": lambda embeddings, table: embeddings + table[: len(embeddings)],
    "slice by shape": lambda embeddings, table: embeddings + table[: embeddings.shape[0]],
    "np.add": lambda embeddings, table: np.add(embeddings, table[: embeddings.shape[-2]]),
    "a loop over tokens": lambda embeddings, table: np.array([row + table[t] for t, row in enumerate(embeddings)]),
    "torch": lambda embeddings, table: torch.as_tensor(embeddings) + torch.as_tensor(table)[: len(embeddings)],
    "float32": lambda embeddings, table: embeddings.astype(np.float32) + table[: len(embeddings)].astype(np.float32),
    "the package's reference": positional.add_positions,
}


@pytest.mark.parametrize("implementation", CORRECT_ADDS.values(), ids=CORRECT_ADDS.keys())
def test_check_add_positions_accepts_correct_implementations(implementation, capsys):
    assert checks.check_add_positions(implementation) is None
    assert capsys.readouterr().out == ADD_PASS


def no_slice(embeddings, table):
    return embeddings + table  # (T, D) + (L, D): fails to broadcast


WRONG_ADDS = {
    "the whole table, no slice": (no_slice, r"(?s)raised ValueError.*add only its first T rows, positions_table\[:T\]"),
    "the whole table, padded embeddings": (
        lambda e, t: np.pad(e, ((0, len(t) - len(e)), (0, 0))) + t,
        r"one row per row of the table: it should have one row per token",
    ),
    "concatenated side by side": (
        lambda e, t: np.concatenate([e, t[: len(e)]], axis=-1),
        r"concatenated to the embeddings, side by side \(T, 2D\)",
    ),
    "concatenated with torch.cat": (
        lambda e, t: torch.cat([torch.as_tensor(e), torch.as_tensor(t)[: len(e)]], dim=1),
        r"concatenated to the embeddings",
    ),
    "stacked under": (lambda e, t: np.vstack([e, t[: len(e)]]), r"stacked under the embeddings \(2T, D\)"),
    "multiplied": (lambda e, t: e * t[: len(e)], r"multiplied by the positions: add them"),
    "subtracted": (lambda e, t: e - t[: len(e)], r"the positions are subtracted"),
    "rows 1..T": (lambda e, t: e + t[1 : len(e) + 1], r"positions count from 0"),
    "the last rows": (lambda e, t: e + t[-len(e) :], r"the last T rows"),
    "one row for all (t[T])": (lambda e, t: e + t[len(e)], r"every token got the same row"),
    "row 0 for all": (lambda e, t: e + t[0], r"every token got row 0"),
    "positions only": (lambda e, t: t[: len(e)], r"the positions only"),
    "embeddings only": (lambda e, t: e.copy(), r"the embeddings unchanged"),
    "something else": (
        lambda e, t: e + 2 * t[: len(e)],
        r"each token t should get embeddings\[t\] \+ positions_table\[t\]",
    ),
}


@pytest.mark.parametrize("implementation, hint", WRONG_ADDS.values(), ids=WRONG_ADDS.keys())
def test_check_add_positions_rejects_common_mistakes_with_a_hint(implementation, hint, capsys):
    with pytest.raises(AssertionError, match=hint) as error:
        checks.check_add_positions(implementation)
    assert "add_positions" in str(error.value)
    assert capsys.readouterr().out == ""


def test_every_add_mistake_differs_from_the_reference_on_the_first_case():
    rng = np.random.default_rng(0)
    embeddings, table = rng.standard_normal((5, 4)), rng.standard_normal((12, 4))
    expected = positional.add_positions(embeddings, table)
    for mistake in _ADD_POSITIONS.mistakes:
        wrong = mistake.wrong(embeddings, table)
        assert np.shape(wrong) != expected.shape or not np.allclose(wrong, expected), mistake.hint


def test_check_add_positions_cannot_be_spoiled_by_writing_into_the_table(capsys):
    def vandal(embeddings, table):
        result = embeddings + table[: len(embeddings)]
        table[...] = 0.0
        embeddings[...] = 0.0
        return result

    with pytest.raises(AssertionError, match="changed its input `embeddings` in place"):
        checks.check_add_positions(vandal)
    checks.check_add_positions(positional.add_positions)
    assert capsys.readouterr().out == ADD_PASS


def test_check_add_positions_with_the_stub_prints_one_line(capsys):
    assert checks.check_add_positions(_stub) is None
    assert capsys.readouterr().out == checks.not_attempted_message("add_positions") + "\n"


@pytest.mark.parametrize("checker", [checks.check_sinusoidal_encoding, checks.check_add_positions])
def test_positional_checkers_reject_non_callables(checker):
    with pytest.raises(TypeError, match=r"Pass the function without calling it"):
        checker(np.zeros((4, 4)))
