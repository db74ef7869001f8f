"""What the course shows of a number: figures rounded once, numbers compared up to their last digit."""

from __future__ import annotations

import base64
import json

import numpy as np
import plotly.graph_objects as go
import pytest
from hypothesis import given
from hypothesis import strategies as st

from course_utils import plots, precision, rendering


def typed(values, dtype="f8"):
    array = np.asarray(values, dtype=dtype)
    return {"dtype": np.dtype(dtype).str.lstrip("<|="), "bdata": base64.b64encode(array.tobytes()).decode()}


@pytest.mark.parametrize(("text", "unit"), [("0.25", 0.01), ("1.5e-07", 1e-08), ("1,250", 1.0), ("-3.", 1.0),
                                           ("2.50E+03", 10.0), (".5", 0.1)])
def test_last_digit_unit(text, unit):
    assert precision.last_digit_unit(text) == pytest.approx(unit)


@pytest.mark.parametrize("text", ["", "abc", "1.2.3", "--1"])
def test_last_digit_unit_rejects_what_is_not_a_number(text):
    with pytest.raises(ValueError, match="expected a number"):
        precision.last_digit_unit(text)


@pytest.mark.parametrize(("a", "b", "same"), [
    ("0.1234", "0.1235", True),     # a rounding boundary crossed: one unit
    ("0.1234", "0.1236", False),    # two units: a real difference
    ("95.3", "95.4", True),
    ("-0.000", "0.000", True),      # the sign of a rounded zero
    ("1.2e-07", "1.3e-07", True),
    ("1.2e-07", "3.4e-07", False),  # kernel noise printed to its digits is not a stable output
    ("0.1", "0.099", True),         # :.2g at a boundary prints fewer digits
    ("603", "604", False),          # counts are exact
    ("1,250", "1,250", True),
])
def test_same_number(a, b, same):
    assert precision.same_number(a, b) is same
    assert precision.same_number(b, a) is same


def test_same_text_allows_last_digits_and_column_shifts_only():
    table = "token   p\ncat  0.1234\ndog  9.999"
    shifted = "token   p\ncat  0.1235\ndog 10.000"  # a wider number moves the column
    assert precision.same_text(table, shifted)
    assert not precision.same_text(table, table.replace("cat", "cow"))
    assert not precision.same_text(table, table.replace("0.1234", "0.1244"))
    assert not precision.same_text("5 of 5 seeds", "4 of 5 seeds")
    assert not precision.same_text("a 1.0 b", "a 1.0 b 2.0")


@given(st.floats(min_value=-1e6, max_value=1e6, allow_nan=False).filter(lambda x: abs(x) > 1e-6),
       st.floats(min_value=-4e-6, max_value=4e-6))
def test_kernel_noise_never_moves_a_figure_beyond_the_tolerance(value, relative_noise):
    """A value moved by float32 kernel noise (a few parts in a million) rounds to the same
    4 significant digits, or to the neighbouring one."""
    a, b = precision.significant([value, value * (1 + relative_noise)])
    assert precision.same_float(float(a), float(b))


def test_same_float_is_one_unit_in_the_fourth_digit():
    assert precision.same_float(1.234, 1.235)
    assert not precision.same_float(1.234, 1.236)
    assert precision.same_float(float("nan"), float("nan"))
    assert not precision.same_float(1.0, float("inf"))


def test_rounded_figure_rounds_every_float_and_typed_array_and_keeps_the_rest():
    spec = {"data": [{"y": typed([1.23456789, 2.0]), "x": [0.123456, 3], "name": "a 1.23456",
                      "i": typed([1, 2], "i4"), "visible": True}],
            "layout": {"height": 440, "range": [0, 1.0000001]}}
    out = precision.rounded_figure(spec)
    assert precision._decode_typed_array(out["data"][0]["y"]).tolist() == [1.235, 2.0]
    assert out["data"][0]["x"] == [0.1235, 3] and isinstance(out["data"][0]["x"][1], int)
    assert out["data"][0]["name"] == "a 1.23456"  # text is the lesson's to format
    assert out["data"][0]["i"] == spec["data"][0]["i"] and out["data"][0]["visible"] is True
    assert out["layout"] == {"height": 440, "range": [0, 1.0]}
    assert spec["data"][0]["x"] == [0.123456, 3]  # the input is not changed
    with pytest.raises(TypeError, match="expected a figure spec"):
        precision.rounded_figure({"data": [object()]})


def test_every_displayed_figure_is_rounded_whoever_built_it():
    """A figure a lesson builds by hand (go.Figure) reaches the page rounded too."""
    fig = go.Figure(go.Bar(x=["a", "b"], y=np.array([0.123456789, 2 / 3])))
    bundle = rendering.figure_mimebundle(fig)
    y = bundle[rendering.PLOTLY_MIME]["data"][0]["y"]
    values = precision._decode_typed_array(y) if isinstance(y, dict) else np.array(y)
    assert values.tolist() == [0.1235, 0.6667]
    nudged = rendering.figure_mimebundle(go.Figure(go.Bar(x=["a", "b"], y=np.array([0.123456789, 2 / 3]) * (1 + 1e-7))))
    assert json.dumps(nudged[rendering.PLOTLY_MIME]) == json.dumps(bundle[rendering.PLOTLY_MIME])


def test_a_grid_point_at_zero_is_the_same_point_on_every_processor():
    """torch.linspace's point x = 0 is -6.2e-17 with AVX-512 kernels and 0.0 with the portable
    ones (measured): negligible at the scale of its axis, -6 to 6; not so at the scale of 1e-16."""
    native, portable = [-6.0, -6.245004513516504e-17, 6.0], [-6.0, 0.0, 6.0]
    assert precision.same_figure({"x": typed(native)}, {"x": typed(portable)})
    assert precision.same_figure({"x": native}, {"x": portable})
    assert not precision.same_figure({"x": [1e-16, -6.245004513516504e-17]}, {"x": [1e-16, 0.0]})
    assert not precision.same_figure({"x": [-6.0, 0.001, 6.0]}, {"x": [-6.0, 0.0, 6.0]})  # a pixel's worth is drawn
    # a millionth of the axis is not drawn: a value near 0 that moves in its 4th digit, on an axis to 15
    assert precision.same_figure({"y": [15.33, 0.0002151, -0.00249]}, {"y": [15.33, 0.0002154, -0.002488]})
    # a value rounded for drawing (attention weights to 3 decimals) on a rounding boundary: one unit
    # in its last written digit, as lesson 06's explorer showed under the portable kernels
    assert precision.same_figure({"z": [[0.117, 0.5]]}, {"z": [[0.118, 0.5]]})
    assert precision.same_figure({"z": 0.117}, {"z": 0.118})
    assert not precision.same_figure({"z": [[0.117, 0.5]]}, {"z": [[0.119, 0.5]]})
    assert not precision.same_figure({"z": [0.1, 0.5]}, {"z": [0.2, 0.5]})  # one decimal: a real change


def test_same_figure_compares_structure_exactly_and_numbers_by_the_tolerance():
    a = {"data": [{"y": typed([1.234, 5.0]), "name": "loss 0.1234", "n": 3}]}
    b = {"data": [{"y": typed([1.235, 5.0]), "name": "loss 0.1235", "n": 3}]}
    assert precision.same_figure(a, b)
    assert not precision.same_figure(a, {"data": [{"y": typed([1.237, 5.0]), "name": "loss 0.1234", "n": 3}]})
    assert not precision.same_figure(a, {"data": [{"y": typed([1.234, 5.0]), "name": "loss 0.1234", "n": 4}]})
    assert not precision.same_figure(a, {"data": [{"y": typed([1.234]), "name": "loss 0.1234", "n": 3}]})
    assert not precision.same_figure(a, {"data": [{"y": typed([1.234, 5.0]), "name": "gain 0.1234", "n": 3}]})


def test_plots_round_with_the_course_precision():
    assert plots.SIGNIFICANT_DIGITS == precision.FIGURE_DIGITS
    assert plots.significant is precision.significant
    with pytest.raises(ValueError, match="positive integer"):
        precision.significant([1.0], digits=0)
