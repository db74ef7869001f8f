"""course_utils.plots.BOX_COLORS: the outline colours of figures.boxes."""

from __future__ import annotations

from course_utils import plots


def test_box_outlines_leave_out_the_pale_yellow():
    assert "#F0E442" in plots.PALETTE
    assert plots.BOX_COLORS == tuple(c for c in plots.PALETTE if c != "#F0E442")
