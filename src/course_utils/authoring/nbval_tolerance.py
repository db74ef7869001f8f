"""nbval, strict, but the same on every processor: numbers may differ by one unit in their last digit.

nbval compares a lesson's fresh outputs with its committed ones as text. On another processor a
float32 result moves in its last bits (:mod:`course_utils.precision`), and a printed value that
sits on a rounding boundary falls on the other side of it: ``0.1235`` where the notebook says
``0.1234``. No choice of digits prevents that, so this plugin lets nbval accept it, and nothing
more: when nbval finds two outputs different, each pair of them is compared again with
:func:`course_utils.precision.same_text` (printed text: the same words and layout, integers equal,
other numbers at most one unit apart in their last printed digit) or
:func:`course_utils.precision.same_figure` (a figure's JSON, and the one inside its HTML: floats
at most one unit apart in their 4th significant digit). A pair that passes is taken as equal;
any other difference fails as before, with nbval's own report.

Load it with ``pytest -p course_utils.authoring.nbval_tolerance --nbval ...`` (``make test`` does).
"""

from __future__ import annotations

import copy
import json
import re

from .. import precision

FIGURE_SCRIPT = re.compile(r"(  var fig = )(\{.*\})(;\n)")


def same_html(a: str, b: str) -> bool:
    """Whether two ``text/html`` outputs are the same: a course figure's HTML by its embedded
    figure JSON (:func:`course_utils.precision.same_figure`) and the text around it; any other
    HTML as text (:func:`course_utils.precision.same_text`)."""
    match_a, match_b = FIGURE_SCRIPT.search(a), FIGURE_SCRIPT.search(b)
    if not (match_a and match_b):
        return precision.same_text(a, b)
    try:
        figure_a, figure_b = json.loads(match_a.group(2)), json.loads(match_b.group(2))
    except json.JSONDecodeError:
        return precision.same_text(a, b)
    around_a = a[: match_a.start(2)] + a[match_a.end(2):]
    around_b = b[: match_b.start(2)] + b[match_b.end(2):]
    return around_a == around_b and precision.same_figure(figure_a, figure_b)


def same_value(key: str, reference, fresh) -> bool:
    """Whether a committed output value and a fresh one say the same, for the mime type or
    stream name ``key``."""
    if isinstance(reference, list) and all(isinstance(line, str) for line in reference):
        reference = "".join(reference)
    if isinstance(fresh, list) and all(isinstance(line, str) for line in fresh):
        fresh = "".join(fresh)
    if isinstance(reference, str) and isinstance(fresh, str):
        return same_html(reference, fresh) if key == "text/html" else precision.same_text(reference, fresh)
    if isinstance(reference, (dict, list)) and isinstance(fresh, (dict, list)):
        return precision.same_figure(reference, fresh)
    return reference == fresh


def _slots(outputs) -> dict[str, list[tuple[dict, str]]]:
    """Each compared value of ``outputs`` by key (a stream's name or a mime type), in order, as
    (the dict that holds it, its key there): nbval pairs outputs the same way."""
    slots: dict[str, list[tuple[dict, str]]] = {}
    for output in outputs:
        if output.get("output_type") == "stream":
            slots.setdefault(output["name"], []).append((output, "text"))
        for mime in output.get("data", {}) or {}:
            slots.setdefault(mime, []).append((output["data"], mime))
    return slots


def aligned(cell, fresh, reference, skip_compare) -> list:
    """A copy of the ``fresh`` outputs in which each value that matches its committed counterpart
    within the tolerance is replaced by that counterpart (sanitized as nbval sanitizes)."""
    fresh = copy.deepcopy(fresh)
    fresh_slots, reference_slots = _slots(fresh), _slots(reference)
    for key, pairs in fresh_slots.items():
        if key in skip_compare or key not in reference_slots:
            continue
        for (holder, name), (ref_holder, ref_name) in zip(pairs, reference_slots[key]):
            mine, theirs = cell.sanitize(holder[name]), cell.sanitize(ref_holder[ref_name])
            if mine != theirs and same_value(key, theirs, mine):
                holder[name] = ref_holder[ref_name]
    return fresh


def pytest_configure(config):
    """Wrap nbval's comparison of a cell's outputs with the tolerance above."""
    from nbval.plugin import IPyNbCell

    if getattr(IPyNbCell.compare_outputs, "course_tolerance", False):
        return
    strict = IPyNbCell.compare_outputs

    def compare_outputs(self, test, ref, skip_compare=None):
        if strict(self, test, ref, skip_compare):
            return True
        skip = skip_compare or self.parent.skip_compare
        return strict(self, aligned(self, test, ref, skip), ref, skip_compare)

    compare_outputs.course_tolerance = True
    IPyNbCell.compare_outputs = compare_outputs
