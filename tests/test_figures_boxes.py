"""The box diagrams' shared machinery (course_utils.figures.boxes): numbers written as the lessons
print them, rows that line up, layouts that fit the widths they are designed for, and a phone's
one-column layout beside the laptop's."""

from __future__ import annotations

import pytest

from course_utils.figures import boxes


def boxes_of(layout) -> list[dict]:
    return [a for a in layout["annotations"] if not a.get("showarrow")]


def arrows_of(layout) -> list[dict]:
    return [a for a in layout["annotations"] if a.get("showarrow")]


def assert_fits(layout, design_px):
    """Every box inside the x range, no two boxes overlapping (by the builder's size model, which
    tests/site measure in the browser), the y range holding the lowest box."""
    placed = []
    for a in boxes_of(layout):
        width, height = boxes.box_size(a["text"])
        left, right = a["x"] - width / 2, a["x"] + width / 2
        assert 0 <= left and right <= design_px, (left, right)
        placed.append((left, right, a["y"], a["y"] + height))
    for i, (l0, r0, t0, b0) in enumerate(placed):
        for l1, r1, t1, b1 in placed[i + 1:]:
            assert r0 <= l1 or r1 <= l0 or b0 <= t1 or b1 <= t0, "two boxes overlap"
    assert layout["yaxis"]["range"][0] >= max(b for *_, b in placed)


def test_numbers_carry_a_true_minus_and_no_negative_zero():
    assert boxes.number(-0.214) == "−0.21"
    assert boxes.number(-0.001) == "0.00"
    assert boxes.number(3.14159, 1) == "3.1"
    assert boxes.vector([0.5, -1.25]) == "[0.50, −1.25]"  # −1.25 rounds half to even in the format
    assert boxes.row([0.5, -1.0]) == "\u00a00.50\u00a0−1.00"  # columns of equal width


def test_bars_read_weights_without_colour():
    assert boxes.bar(0.0) == "·" and boxes.bar(1.0) == "█" * 10 and boxes.bar(0.5, 8) == "████"


def test_labelled_lines_line_up_and_escape_labels():
    text = boxes.labelled_lines(["a", "<b>"], ["1", "2"], bold=1)
    first, second = text.split("<br>")
    assert first == "a\u00a0\u00a0\u00a01"  # "a" padded to the 3 characters of "<b>", then a space
    assert second == "<b>&lt;b&gt;\u00a02</b>"


def test_a_diagram_has_a_laptop_layout_and_a_one_column_phone_layout():
    texts = [f"box {i}<br>" + "x" * 30 for i in range(4)]
    fig = boxes.box_diagram(texts, title="four boxes", wide_rows=[[0, 1], [3, 2]])
    wide = fig.to_plotly_json()["layout"]
    narrow = fig.layout.meta["narrow_layout"]
    assert [a["text"] for a in boxes_of(wide)] == texts == [a["text"] for a in boxes_of(narrow)]
    assert len(arrows_of(wide)) == len(arrows_of(narrow)) == 3
    assert len({a["x"] for a in boxes_of(narrow)}) == 1
    assert_fits(wide, boxes.WIDE_DESIGN_PX)
    assert_fits(narrow, boxes.NARROW_DESIGN_PX)
    assert boxes.NARROW_DESIGN_PX <= 340  # a 390 px phone leaves a figure about 340 px


def test_one_column_serves_every_width_and_arrows_may_point_up():
    fig = boxes.box_diagram(["a", "b", "c"], title="t", wide_rows=[[0], [1], [2]], edges=[(0, 1), (2, 1)])
    layout = fig.to_plotly_json()["layout"]
    assert "meta" not in layout
    up = arrows_of(layout)[1]
    assert up["ay"] > up["y"]  # from box 2, below, up to box 1 (the y axis points down)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: boxes.box_diagram(["x" * 60, "y"], title="t", wide_rows=[[0], [1]]), "fit 330 px"),
        (lambda: boxes.box_diagram(["a", "b"], title="t", wide_rows=[[0]], narrow_rows=[[0]]), "every box 0 .. 1 once"),
        (lambda: boxes.box_diagram(["a", "b"], title="t", wide_rows=[[0], [1]], edges=[(0, 2)]), "between boxes 0 .. 1"),
        (lambda: boxes.box_diagram(["a"], title=" ", wide_rows=[[0]]), "non-empty string for title"),
    ],
)
def test_bad_layouts_get_clear_errors(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_snakes_read_right_then_left_and_narrow_to_what_fits():
    assert boxes.snake_rows(5) == [[0, 1], [3, 2], [4]]
    assert boxes.snake_rows(3, 3) == [[0, 1, 2]]
    short, wide = ["a" * 20] * 3, ["a" * 60] * 3
    assert boxes.snake_that_fits(short) == [[0, 1], [2]]
    assert boxes.snake_that_fits(wide) == [[0], [1], [2]]  # two of them would not fit 640 px
