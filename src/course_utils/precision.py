"""What the course shows of a number, so that every processor shows the same.

torch and its BLAS pick their CPU kernels by instruction set (AVX-512, AVX2, portable), so a
float32 result moves in its last bits from one machine to another: the bundled teacher's logits
move by up to about 4e-6 between torch's portable kernels and its AVX2 ones. A lesson's committed
outputs must not: they are checked by nbval on whatever machine runs the tests.

Two rules keep them still, each written once, here:

- **Figures carry 4 significant digits** (:data:`FIGURE_DIGITS`): more than a figure can draw
  (one part in a thousand is a fraction of a pixel), and a thousand times more than kernel noise.
  Every figure the course renderer displays is rounded here (:func:`rounded_figure`), whoever
  built it.
- **A printed or drawn number may differ by one unit in its last digit** (:func:`same_number`):
  a value that sits on a rounding boundary can fall either side of it on another processor, and
  no choice of digits prevents that. The lessons' nbval check compares numbers that way
  (:mod:`course_utils.authoring.nbval_tolerance`); text, and integers, must match exactly.
"""

from __future__ import annotations

import base64
import math
import re

import numpy as np

FIGURE_DIGITS = 4

# A number as text: optional minus, digits with optional thousands commas, decimals, exponent.
NUMBER = re.compile(r"-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d*)?(?:[eE][-+]?\d+)?|-?\.\d+(?:[eE][-+]?\d+)?")


def significant(values, digits: int = FIGURE_DIGITS) -> np.ndarray:
    """``values`` as a float array of the same shape, each rounded to ``digits`` significant digits.

    Rounded through its decimal text, so the result is the float nearest to the short decimal
    (``1.235``, not ``1.2349999999999999``); inf and nan are kept.
    """
    if isinstance(digits, bool) or not isinstance(digits, int) or digits < 1:
        raise ValueError(f"expected digits to be a positive integer, got {digits!r}")
    array = np.asarray(values, dtype=float)
    rounded = [float(f"{value:.{digits - 1}e}") for value in array.ravel()]
    return np.array(rounded, dtype=float).reshape(array.shape)


def _decode_typed_array(value: dict) -> np.ndarray:
    """plotly's typed array (``{"dtype": "f8", "bdata": <base64>, "shape": "R, C"}``) as numpy."""
    array = np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]))
    shape = value.get("shape")
    return array.reshape([int(n) for n in str(shape).split(",")]) if shape else array


def _is_typed_array(value) -> bool:
    return isinstance(value, dict) and isinstance(value.get("bdata"), str) and isinstance(value.get("dtype"), str)


def rounded_figure(spec, digits: int = FIGURE_DIGITS):
    """A figure spec (plotly's JSON: dicts, lists, numbers, strings) with every float rounded to
    ``digits`` significant digits, typed arrays (``bdata``) included. Integers, strings and the
    structure are kept; the input is not changed."""
    if isinstance(spec, bool) or spec is None or isinstance(spec, (int, str)):
        return spec
    if isinstance(spec, float):
        return float(significant(spec, digits)) if math.isfinite(spec) else spec
    if _is_typed_array(spec):
        array = _decode_typed_array(spec)
        if array.dtype.kind != "f":
            return dict(spec)
        rounded = significant(array, digits).astype(array.dtype)
        return {**spec, "bdata": base64.b64encode(np.ascontiguousarray(rounded).tobytes()).decode("ascii")}
    if isinstance(spec, dict):
        return {key: rounded_figure(value, digits) for key, value in spec.items()}
    if isinstance(spec, (list, tuple)):
        return [rounded_figure(value, digits) for value in spec]
    raise TypeError(f"expected a figure spec of dicts, lists, numbers and strings, got a {type(spec).__name__}")


def last_digit_unit(text: str) -> float:
    """One unit in the last digit of a number written as ``text``: ``"0.25"`` -> 0.01,
    ``"1.5e-07"`` -> 1e-08, ``"1,250"`` -> 1."""
    match = re.fullmatch(r"-?([\d,]*)(?:\.(\d*))?(?:[eE]([-+]?\d+))?", text)
    if not match or not re.search(r"\d", text):
        raise ValueError(f"expected a number written in decimal, got {text!r}")
    decimals = len(match.group(2) or "")
    exponent = int(match.group(3) or 0)
    return 10.0 ** (exponent - decimals)


def is_integer_text(text: str) -> bool:
    """Whether ``text`` writes a whole number with no decimal point or exponent (a count)."""
    return re.fullmatch(r"-?[\d,]+", text) is not None


def same_number(a: str, b: str) -> bool:
    """Whether two numbers as printed are the same up to a rounding boundary: equal, or (both with a
    decimal point or an exponent) at most one unit apart in the last digit of the coarser one.
    Integers are counts and must be equal."""
    if a == b:
        return True
    if is_integer_text(a) or is_integer_text(b):
        return False
    x, y = float(a.replace(",", "")), float(b.replace(",", ""))
    return abs(x - y) <= max(last_digit_unit(a), last_digit_unit(b)) * (1 + 1e-9)


def _layout_text(text: str) -> str:
    """``text`` with its numbers taken out and runs of spaces made one (a wider number moves the
    columns of a table)."""
    return re.sub(r"[ \t]+", " ", NUMBER.sub("#", text))


def same_text(a: str, b: str) -> bool:
    """Whether two outputs printed as text say the same: the same words and layout, and the same
    numbers by :func:`same_number`."""
    if a == b:
        return True
    numbers_a, numbers_b = NUMBER.findall(a), NUMBER.findall(b)
    return (
        len(numbers_a) == len(numbers_b)
        and _layout_text(a) == _layout_text(b)
        and all(same_number(x, y) for x, y in zip(numbers_a, numbers_b))
    )


def _figure_unit(value: float, digits: int) -> float:
    return 10.0 ** (math.floor(math.log10(abs(value))) - digits + 1) if value else 0.0


# Below this fraction of the largest value of its array, a difference is not drawn (a screen has a
# few thousand pixels): a value that is zero on one processor and 6e-17 on another (a grid point at
# x = 0) is the same point, and so is a projection's 0.0002151 against 0.0002154 on an axis that
# reaches 15 (lesson 08's [CLS] picture under the portable kernels).
NEGLIGIBLE = 1e-6


def same_float(a: float, b: float, digits: int = FIGURE_DIGITS, scale: float = 0.0) -> bool:
    """Whether two drawn values are the same up to a rounding boundary at ``digits`` significant
    digits: at most one unit apart in that digit, or apart by less than :data:`NEGLIGIBLE` times
    ``scale`` (the largest magnitude of the array they belong to). nan equals nan."""
    if a == b or (math.isnan(a) and math.isnan(b)):
        return True
    if not (math.isfinite(a) and math.isfinite(b)):
        return False
    difference = abs(a - b)
    return difference <= _figure_unit(max(abs(a), abs(b)), digits) * (1 + 1e-9) or difference <= NEGLIGIBLE * scale


def same_written(a: float, b: float) -> bool:
    """Whether two floats of a figure's JSON, as written there, are one unit apart in their last
    written digit (:func:`same_number`): a value the course rounded for drawing (an attention weight
    to 3 decimals) that sat on a rounding boundary, as a printed number may. Both must be written
    with the same number of decimals, from 2 to 6: an unrounded float is written with all its
    digits, and 0.001 against 0.0 is a drawn difference, not a rounding boundary."""
    written = [repr(float(a)), repr(float(b))]
    decimals = [len(w.split(".")[1]) if "." in w and "e" not in w else None for w in written]
    if decimals[0] is None or decimals[0] != decimals[1] or not 2 <= decimals[0] <= 6:
        return False  # only values written with the same few decimals: rounded, not computed
    return same_number(*written)


def _scale(*arrays) -> float:
    """The largest finite magnitude among ``arrays`` (0.0 if none)."""
    finite = [abs(float(v)) for array in arrays for v in array if math.isfinite(float(v))]
    return max(finite, default=0.0)


def _numbers(values) -> bool:
    return bool(values) and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)


def same_figure(a, b, digits: int = FIGURE_DIGITS) -> bool:
    """Whether two figure specs draw the same: the same structure and strings (numbers in strings
    by :func:`same_text`), integers equal, floats and typed arrays by :func:`same_float` (an
    array's values at the scale of the array)."""
    if _is_typed_array(a) and _is_typed_array(b):
        x, y = _decode_typed_array(a), _decode_typed_array(b)
        if x.shape != y.shape or (x.dtype.kind == "f") != (y.dtype.kind == "f"):
            return False
        if x.dtype.kind != "f":
            return bool(np.array_equal(x, y))
        scale = _scale(x.ravel(), y.ravel())
        return all(same_float(float(p), float(q), digits, scale) for p, q in zip(x.ravel(), y.ravel()))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_figure(a[k], b[k], digits) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return False
        if _numbers(a) and _numbers(b):  # a list of values: compared at the scale of the list
            scale = _scale(a, b)
            return all(x == y if isinstance(x, int) and isinstance(y, int)
                       else same_float(float(x), float(y), digits, scale) or same_written(x, y)
                       for x, y in zip(a, b))
        return all(same_figure(x, y, digits) for x, y in zip(a, b))
    if isinstance(a, str) and isinstance(b, str):
        return same_text(a, b)
    if isinstance(a, bool) or isinstance(b, bool) or a is None or b is None:
        return a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        if isinstance(a, int) and isinstance(b, int):
            return a == b
        return same_float(float(a), float(b), digits) or same_written(a, b)
    return a == b
