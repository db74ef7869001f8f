"""course_utils.validation: each check accepts what it names, in any numeric type, and refuses the
rest with a message naming the argument and the value given."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from course_utils import validation


@pytest.mark.parametrize(
    "check, good, expected",
    [
        (validation.positive_int, [1, np.int64(7), 10**12], [1, 7, 10**12]),
        (validation.non_negative_int, [0, np.int64(7)], [0, 7]),
        (validation.positive_number, [0.5, 2, np.float32(1.5), np.int8(3)], [0.5, 2.0, 1.5, 3.0]),
        (validation.non_negative_number, [0, 0.0, np.float64(2.5)], [0.0, 0.0, 2.5]),
        (validation.probability, [0, 1, 0.15, np.float32(0.5)], [0.0, 1.0, 0.15, 0.5]),
    ],
)
def test_good_values_come_back_in_python_types(check, good, expected):
    results = [check("x", value) for value in good]
    assert results == expected
    assert all(type(r) is type(e) for r, e in zip(results, expected))


@pytest.mark.parametrize(
    "check, bad",
    [
        (validation.positive_int, [0, -3, 2.0, 1.5, True, "3", None, np.float64(2.0)]),
        (validation.non_negative_int, [-1, 0.0, False, "0", None]),
        (validation.positive_number, [0, -1e-9, math.inf, math.nan, True, "1", None, [1.0]]),
        (validation.non_negative_number, [-0.5, math.inf, math.nan, False, "0", None]),
        (validation.probability, [-0.01, 1.01, math.nan, True, "0.5", None, math.inf]),
    ],
)
def test_bad_values_are_named_in_the_error(check, bad):
    for value in bad:
        with pytest.raises(ValueError, match=rf"^expected mask_prob to be .*, got {re.escape(repr(value))}$"):
            check("mask_prob", value)





def test_array_with_axes_learns_sizes_then_enforces_them():
    sizes: dict[str, int] = {}
    W = validation.array_with_axes("W_xh", np.ones((3, 4)), ("D_in", "D_h"), sizes)
    assert W.dtype == np.float64 and sizes == {"D_in": 3, "D_h": 4}
    validation.array_with_axes("b_h", np.ones(16), ("4*D_h",), sizes)  # 4 gates of D_h
    with pytest.raises(ValueError, match=r"^expected W_hh of shape \(D_h, D_h\)=\(4, 4\), got \(4, 5\)$"):
        validation.array_with_axes("W_hh", np.ones((4, 5)), ("D_h", "D_h"), sizes)
    with pytest.raises(ValueError, match=r"a 1-D array, got shape \(2, 2\)"):
        validation.array_with_axes("b", np.ones((2, 2)), ("D_h",), sizes)
    with pytest.raises(ValueError, match="6 is not a multiple of 4"):
        validation.array_with_axes("b", np.ones(6), ("4*H",), {})
    with pytest.raises(TypeError, match="expected x to be a numeric array, got dict"):
        validation.array_with_axes("x", {}, ("T",), {})


# Arrays of a model's inputs: numpy and torch alike, returned as given

ARRAY_KINDS = {"numpy": np.asarray, "torch": lambda a: __import__("torch").as_tensor(np.asarray(a))}


@pytest.mark.parametrize("kind", ARRAY_KINDS)
def test_token_ids_come_back_as_given_and_name_the_first_id_outside(kind):
    ids = ARRAY_KINDS[kind]([[1, 2], [3, 0]])
    assert validation.token_ids("input_ids", ids, 4) is ids
    with pytest.raises(ValueError, match=r"expected input_ids in \[0, vocab_size=4\), got 4 at input_ids\[1, 0\]"):
        validation.token_ids("input_ids", ARRAY_KINDS[kind]([[1, 2], [4, 0]]), 4)
    with pytest.raises(ValueError, match=r"got -1 at input_ids\[0, 1\]"):
        validation.token_ids("input_ids", ARRAY_KINDS[kind]([[1, -1]]), 4)
    for bad in ([[1.0, 2.0]], [[True, False]]):
        with pytest.raises(TypeError, match="expected input_ids to hold integer token ids, got dtype"):
            validation.token_ids("input_ids", ARRAY_KINDS[kind](bad), 4)


def test_token_ids_turn_lists_into_arrays_and_refuse_ragged_ones():
    assert isinstance(validation.token_ids("ids", [0, 1], 2), np.ndarray)
    with pytest.raises(TypeError, match="expected ids to be an array, got list"):
        validation.token_ids("ids", [[0, 1], [0]], 2)


@pytest.mark.parametrize("kind", ARRAY_KINDS)
def test_zeros_and_ones_accept_any_numeric_type_of_0_and_1_only(kind):
    for good in ([[1, 0]], [[True, False]], [[1.0, 0.0]]):
        mask = ARRAY_KINDS[kind](good)
        assert validation.zeros_and_ones("attention_mask", mask, "0 and 1") is mask
    with pytest.raises(ValueError, match=r"expected attention_mask to hold only 0 \(padding\)"):
        validation.zeros_and_ones("attention_mask", ARRAY_KINDS[kind]([[1, 2]]), "0 (padding) and 1 (real token)")
    with pytest.raises(TypeError, match="expected attention_mask to be an array of 0/1, got dtype <U1"):
        validation.zeros_and_ones("attention_mask", np.array([["1"]]), "0 and 1")


@pytest.mark.parametrize("kind", ARRAY_KINDS)
def test_booleans_shapes_and_axes(kind):
    flags = ARRAY_KINDS[kind]([[True, False]])
    assert validation.boolean_array("maskable", flags, "True where chosen") is flags
    with pytest.raises(TypeError, match=r"expected maskable to be boolean \(True where chosen\), got dtype"):
        validation.boolean_array("maskable", ARRAY_KINDS[kind]([[1, 0]]), "True where chosen")
    ids = ARRAY_KINDS[kind]([[1, 2, 3]])
    assert validation.same_shape("labels", ids, "input_ids", ids) is ids
    with pytest.raises(ValueError, match=r"expected maskable of the shape of input_ids \(1, 3\), got \(1, 2\)"):
        validation.same_shape("maskable", flags, "input_ids", ids)
    assert validation.with_axes("ids", ids, ("B", "T")) is ids
    with pytest.raises(ValueError, match=r"expected ids of shape \(B, T\), got \(3,\)"):
        validation.with_axes("ids", ids[0], ("B", "T"))
    with pytest.raises(ValueError, match=r"expected x of shape \(T,\), got \(1, 3\)"):
        validation.with_axes("x", ids, ("T",))


def test_index_in_names_the_size():
    assert validation.index_in("mask_token_id", np.int64(3), 10, "vocab_size") == 3
    for bad in (10, -1, True, 2.0, "3", None):
        with pytest.raises(ValueError, match=rf"expected mask_token_id to be an integer in \[0, vocab_size=10\), got {re.escape(repr(bad))}"):
            validation.index_in("mask_token_id", bad, 10, "vocab_size")
