"""course_utils.plots.flow_diagram: boxes and arrows (lesson 07's training flow)."""

from __future__ import annotations

import pytest

from course_utils import plots

BOXES = [("batch", 0.0, 0.5), ("teacher", 0.5, 0.9), ("student", 0.5, 0.1), ("loss", 1.0, 0.5)]
ARROWS = [("batch", "teacher"), ("batch", "student"), ("teacher", "loss"), ("student", "loss")]


def test_each_box_is_a_labelled_annotation_in_its_own_colour_and_each_arrow_joins_two_boxes():
    fig = plots.flow_diagram(BOXES, ARROWS, title="T")
    arrows = [a for a in fig.layout.annotations if a.showarrow]
    boxes = [a for a in fig.layout.annotations if not a.showarrow]
    assert [b.text for b in boxes] == [label for label, _, _ in BOXES]
    assert [b.bordercolor for b in boxes] == list(plots.BOX_COLORS[: len(BOXES)])
    assert "#F0E442" not in plots.BOX_COLORS  # the pale yellow
    centre = {label: (x, y) for label, x, y in BOXES}
    assert [((a.ax, a.ay), (a.x, a.y)) for a in arrows] == [(centre[s], centre[e]) for s, e in ARROWS]
    assert fig.data[0].hovertext == tuple(label for label, _, _ in BOXES)


@pytest.mark.parametrize("boxes, arrows, words", [
    (BOXES, [("batch", "nowhere")], "unknown box 'nowhere'"),
    (BOXES + [("batch", 0.2, 0.2)], ARROWS, "'batch' twice"),
    ([("batch", 1.5, 0.5)], [], "coordinates in \\[0, 1\\]"),
    ([("", 0.5, 0.5)], [], "non-empty string for a box's label"),
])  # fmt: skip
def test_flow_diagram_says_what_is_wrong(boxes, arrows, words):
    with pytest.raises(ValueError, match=words):
        plots.flow_diagram(boxes, arrows, title="T")
