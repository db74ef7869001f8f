"""course_utils.tables: labelled text tables."""

import numpy as np
import pytest

from course_utils.tables import format_table, print_table


def test_table_of_an_array_aligns_labels_and_columns():
    text = format_table(np.array([[0.5, -1.25], [10.0, 2.0]]), ["[CLS]", "I"], ["h[0]", "h[1]"])
    assert text.splitlines() == [
        "          h[0]     h[1]",
        "[CLS]   0.5000  -1.2500",
        "I      10.0000   2.0000",
    ]


def test_table_mixes_integers_strings_and_floats():
    text = format_table([[36, 40, "T"], [244, 244, "1"]], ["RNN", "encoder"], ["ours", "torch", "steps"])
    assert text.splitlines()[1:] == ["RNN        36     40      T", "encoder   244    244      1"]


def test_decimals():
    assert format_table([[1 / 3]], ["a"], ["x"], decimals=2).splitlines()[1] == "a  0.33"


def test_print_table_prints_the_formatted_table(capsys):
    print_table([[1.0]], ["a"], ["x"])
    assert capsys.readouterr().out == format_table([[1.0]], ["a"], ["x"]) + "\n"


def test_rejects_mismatched_labels():
    with pytest.raises(ValueError, match="expected one label per row: 2 rows, 1 row labels"):
        format_table(np.zeros((2, 2)), ["a"], ["x", "y"])
    with pytest.raises(ValueError, match=r"expected every row to have 3 values .* row 0 \('a'\) has 2"):
        format_table(np.zeros((1, 2)), ["a"], ["x", "y", "z"])


@pytest.mark.parametrize("bad", [-1, 1.5, True])
def test_rejects_bad_decimals(bad):
    with pytest.raises(ValueError, match="expected decimals to be a non-negative integer"):
        format_table([[1.0]], ["a"], ["x"], decimals=bad)
