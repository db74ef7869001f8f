"""The drawn diagrams' machinery (course_utils.figures.canvas): labels sized by the monospaced
font, collisions a reader would see found, labels placed clear of arrows, one scale on both axes."""

from __future__ import annotations

import pytest

from course_utils.figures import canvas


def test_clashes_finds_labels_on_labels_lines_and_edges():
    c = canvas.Canvas(200)
    c.text(10, 10, "abcdef")
    assert c.clashes() == []
    c.text(20, 12, "xyz")  # on the first label
    c.line(0, 40, 200, 40)
    c.text(10, 40, "on the line")
    c.rect(100, 60, 150, 80, fill="#0072B2", name="a bar")
    c.text(90, 70, "edge")  # across the bar's left edge
    c.text(124, 70, "in", size=10)  # inside the bar: fine
    c.text(195, 100, "outside")
    found = " | ".join(c.clashes())
    assert "'abcdef' and 'xyz' overlap" in found
    assert "'on the line' meets a line" in found
    assert "'edge' crosses the edge of a bar" in found and "'in' crosses" not in found
    assert "'outside' leaves the canvas" in found


def test_a_label_near_a_tip_avoids_the_arrows_and_other_labels():
    c = canvas.Canvas(200)
    c.arrow(0, 100, 100, 100)  # a horizontal arrow, its tip at (100, 100)
    c.arrow(100, 100, 100, 40)  # and one up from the same point
    c.label_near(100, 100, "tip", avoid=c.segments())
    assert c.clashes() == []
    with pytest.raises(ValueError, match="no room for the label"):
        canvas.Canvas(10).label_near(5, 5, "far too long a label", avoid=[])


def test_a_figure_keeps_one_scale_and_carries_its_phone_layout():
    wide, narrow = canvas.Canvas(600), canvas.Canvas(300)
    for c in (wide, narrow):
        c.rect(0, 0, c.width, 50, fill="white", line="black")
    fig = canvas.canvas_figure(wide, narrow, title="two layouts")
    layout = fig.to_plotly_json()["layout"]
    assert layout["yaxis"]["scaleanchor"] == "x" and layout["xaxis"]["range"] == [0, 600]
    assert fig.layout.meta["narrow_layout"]["xaxis"]["range"] == [0, 300]
    assert canvas.clashes_of(layout) == []
    assert canvas.text_width("abc", 10) == pytest.approx(3 * 0.61 * 10)
