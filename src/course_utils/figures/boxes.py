"""Box diagrams drawn from the numbers: the house style of the lessons' mechanism pictures.

A mechanism is drawn as boxes of monospaced text holding the cell's own numbers, joined by arrows
in reading order (where a step is better drawn than written, :mod:`.canvas` draws it). The boxes are plotly annotations in a
monospaced font (plotly sizes each box to its text, and columns of numbers line up); both axes
count pixels, so that boxes, the gaps between them and the arrows in the gaps are placed exactly.
A layout is designed for a width, wider figures only spread it: laptops get
:data:`WIDE_DESIGN_PX`, phones :data:`NARROW_DESIGN_PX`, one column (``layout.meta["narrow_layout"]``,
which the site's ``course-figures.js`` reads below 640 px). Every box is white with a palette
outline (the site darkens both in dark mode); sizes and kinds read without colour, from the text.

:func:`box_diagram` builds a figure from box texts and their rows; :func:`number`, :func:`vector`,
:func:`row`, :func:`bar` and :func:`labelled_lines` write the texts.
"""

from __future__ import annotations

import html
import re
from typing import Sequence

import numpy as np
import plotly.graph_objects as go

from .. import plots

__all__ = [
    "BOX_FONT",
    "NARROW_DESIGN_PX",
    "WIDE_DESIGN_PX",
    "bar",
    "box_diagram",
    "box_size",
    "labelled_lines",
    "number",
    "row",
    "rows_layout",
    "snake_rows",
    "snake_that_fits",
    "vector",
]

BOX_FONT = dict(size=11, family="DejaVu Sans Mono, Menlo, Consolas, 'Courier New', monospace")
CHAR_PX = 0.61 * 11  # a monospaced character's width at 11 px (DejaVu Sans Mono: 0.602 em)
LINE_PX = 1.3 * 11  # plotly's line spacing in annotations
BOX_PAD_PX = 6
GAP_PX = 40  # between two boxes: room for an arrow
ARROW_COLOR = "#777777"  # mid grey: visible on the light page and on the dark one
NARROW_DESIGN_PX = 330  # a phone (390 px) gives a figure about 340 px
WIDE_DESIGN_PX = 640  # the site switches to the narrow layout below 640 px
NARROW_KEYS = ("annotations", "height", "xaxis", "yaxis")  # what the narrow layout replaces
TOP_PX = 64  # the title's room


def number(value: float, decimals: int = 2) -> str:
    """``-0.214`` -> ``"−0.21"``: ``decimals`` decimals, a true minus sign, no ``−0.00``."""
    text = f"{float(value):.{decimals}f}"
    if float(text) == 0:
        text = text.lstrip("-")
    return text.replace("-", "−")


def vector(values, decimals: int = 2) -> str:
    """A vector as ``[0.53, −0.21, 1.10]``."""
    return "[" + ", ".join(number(v, decimals) for v in np.ravel(values)) + "]"


def row(values, decimals: int = 2) -> str:
    """A vector as a row of numbers in columns, without brackets: ``" 0.53 −0.21"`` (each number
    padded to the width of a negative one, so that rows of a matrix line up)."""
    width = decimals + 3
    return "\u00a0".join(number(v, decimals).rjust(width, "\u00a0") for v in np.ravel(values))


def bar(weight: float, longest: int = 10) -> str:
    """A weight in [0, 1] as a bar of up to ``longest`` blocks, so that sizes read without colour
    (a weight that rounds to no block: a dot)."""
    blocks = int(round(longest * weight))
    return "█" * blocks if blocks else "·"


def labelled_lines(labels: Sequence[str], texts: Sequence[str], bold: int | None = None) -> str:
    """One line per label, the labels padded to one width (so the texts line up); line ``bold``
    in bold. Labels are escaped; texts are plotly rich text as they are."""
    width = max(len(str(t)) for t in labels)
    out = []
    for j, (label, text) in enumerate(zip(labels, texts)):
        row = html.escape(str(label).ljust(width)).replace(" ", "\u00a0") + "\u00a0" + text
        out.append(f"<b>{row}</b>" if j == bold else row)
    return "<br>".join(out)


def _plain(text: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", text))


def box_size(text: str) -> tuple[float, float]:
    """A box's width and height in pixels: its longest line, its number of lines, the padding."""
    lines = text.split("<br>")
    width = max(len(_plain(line)) for line in lines) * CHAR_PX + 2 * BOX_PAD_PX + 4
    return width, len(lines) * LINE_PX + 2 * BOX_PAD_PX + 4


def _box(x: float, y_top: float, text: str, color: str) -> dict:
    return dict(
        x=x, y=y_top, xref="x", yref="y", text=text, showarrow=False, align="left", xanchor="center",
        yanchor="top", bgcolor="white", bordercolor=color, borderwidth=2, borderpad=BOX_PAD_PX, font=BOX_FONT,
    )  # fmt: skip


def _arrow(x0: float, y0: float, x1: float, y1: float) -> dict:
    return dict(
        x=x1, y=y1, ax=x0, ay=y0, xref="x", yref="y", axref="x", ayref="y", text="", showarrow=True,
        arrowhead=2, arrowsize=1.1, arrowwidth=2, arrowcolor=ARROW_COLOR,
    )  # fmt: skip


def rows_layout(texts: Sequence[str], rows: Sequence[Sequence[int]], design_px: float, *, top_px: int = TOP_PX,
                edges: Sequence[tuple[int, int]] | None = None) -> dict:
    """A layout (annotations, height, axes) of boxes in rows, each row centred in ``design_px``.

    ``texts``: the boxes' rich texts (``<br>`` between lines); ``rows`` lists the boxes' indices
    row by row, left to right (every box once); arrows join the boxes of ``edges`` (pairs of
    indices; default: each box to the next, in index order): across the gap when both are in one
    row, down (or up) the gap between the rows else. Box ``i`` is outlined in the ``i``-th colour
    of :data:`course_utils.plots.BOX_COLORS`.
    Raises ``ValueError`` when a row is wider than ``design_px`` or the rows do not hold every box once.
    """
    placed = [i for row in rows for i in row]
    if sorted(placed) != list(range(len(texts))):
        raise ValueError(f"expected the rows to hold every box 0 .. {len(texts) - 1} once, got {list(rows)}")
    sizes = [box_size(t) for t in texts]
    where: dict[int, tuple[float, float, int]] = {}  # index -> (left, centre x, row)
    tops, y = [], 0.0
    for r, row in enumerate(rows):
        total = sum(sizes[i][0] for i in row) + GAP_PX * (len(row) - 1)
        if total > design_px:
            raise ValueError(f"expected each row of boxes to fit {design_px:.0f} px, row {r} needs {total:.0f} px")
        left = (design_px - total) / 2
        for i in row:
            where[i] = (left, left + sizes[i][0] / 2, r)
            left += sizes[i][0] + GAP_PX
        tops.append(y)
        y += max(sizes[i][1] for i in row) + GAP_PX
    notes = [_box(where[i][1], tops[where[i][2]], t, plots.BOX_COLORS[i % len(plots.BOX_COLORS)])
             for i, t in enumerate(texts)]  # fmt: skip
    for i, j in edges if edges is not None else zip(range(len(texts) - 1), range(1, len(texts))):
        if not (0 <= i < len(texts) and 0 <= j < len(texts)):
            raise ValueError(f"expected arrows between boxes 0 .. {len(texts) - 1}, got ({i}, {j})")
        (left0, x0, r0), (left1, x1, r1) = where[i], where[j]
        if r0 == r1:  # across the gap, level with the boxes' second line
            y_arrow = tops[r0] + 1.5 * LINE_PX + BOX_PAD_PX
            if x1 > x0:
                notes.append(_arrow(left0 + sizes[i][0] + 6, y_arrow, left1 - 6, y_arrow))
            else:
                notes.append(_arrow(left0 - 6, y_arrow, left1 + sizes[j][0] + 6, y_arrow))
        elif r1 > r0:  # down from the bottom of one box to the top of the other
            notes.append(_arrow(x0, tops[r0] + sizes[i][1] + 4, x1, tops[r1] - 4))
        else:  # up from the top of one box to the bottom of the other
            notes.append(_arrow(x0, tops[r0] - 4, x1, tops[r1] + sizes[j][1] + 4))
    plot_height = y - GAP_PX + 4
    return dict(
        annotations=notes,
        height=int(round(plot_height + top_px + 12)),
        xaxis=dict(visible=False, range=[0, design_px], fixedrange=True),
        yaxis=dict(visible=False, range=[plot_height, -2], fixedrange=True),
    )


def snake_rows(n: int, per_row: int = 2) -> list[list[int]]:
    """Boxes ``0 .. n-1`` in rows of ``per_row``, read as a snake: left to right, then right to
    left under it, and so on, so that each box's arrow to the next is short (``[[0, 1], [3, 2], [4]]``)."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1 or not isinstance(per_row, int) or per_row < 1:
        raise ValueError(f"expected positive integers n and per_row, got {n!r} and {per_row!r}")
    rows = [list(range(start, min(start + per_row, n))) for start in range(0, n, per_row)]
    return [row if r % 2 == 0 else row[::-1] for r, row in enumerate(rows)]


def snake_that_fits(texts: Sequence[str], per_row: int = 2, design_px: float = WIDE_DESIGN_PX) -> list[list[int]]:
    """:func:`snake_rows` of ``texts``' boxes, ``per_row`` a row, or fewer when a row would not fit
    ``design_px`` (down to one box a row: one column)."""
    for n in range(per_row, 0, -1):
        rows = snake_rows(len(texts), n)
        widths = [sum(box_size(texts[i])[0] for i in row) + GAP_PX * (len(row) - 1) for row in rows]
        if n == 1 or max(widths) <= design_px:
            return rows
    raise AssertionError("unreachable")  # pragma: no cover


def box_diagram(texts: Sequence[str], *, title: str, wide_rows: Sequence[Sequence[int]],
                narrow_rows: Sequence[Sequence[int]] | None = None,
                edges: Sequence[tuple[int, int]] | None = None,
                narrow_edges: Sequence[tuple[int, int]] | None = None) -> go.Figure:
    """A figure of boxes joined by arrows: ``wide_rows`` laid out in :data:`WIDE_DESIGN_PX`, and
    ``narrow_rows`` (default: one box a row, in index order) in :data:`NARROW_DESIGN_PX` for
    phones. ``edges`` as in :func:`rows_layout`, ``narrow_edges`` (default: ``edges``) for the
    phone's layout. With ``wide_rows`` of one box each, or equal to ``narrow_rows``, the one
    layout designed for a phone serves every width. ``title`` (the figure's alt text on the site)
    must be non-empty.
    """
    plots.require_text("title", title)
    narrow_rows = [[i] for i in range(len(texts))] if narrow_rows is None else narrow_rows
    narrow_edges = edges if narrow_edges is None else narrow_edges
    narrow = rows_layout(texts, narrow_rows, NARROW_DESIGN_PX, edges=narrow_edges)
    one_layout = [list(r) for r in wide_rows] == [list(r) for r in narrow_rows]
    wide = narrow if one_layout else rows_layout(texts, wide_rows, WIDE_DESIGN_PX, edges=edges)
    fig = go.Figure()
    fig.update_layout(
        title=dict(text=title, x=0.02, xanchor="left"),
        template=plots.TEMPLATE,
        margin=dict(l=4, r=4, t=TOP_PX, b=8),
        showlegend=False,
        font=dict(size=13),
        **wide,
    )
    if not one_layout:
        fig.update_layout(meta=dict(narrow_layout={key: narrow[key] for key in NARROW_KEYS}))
    return fig
