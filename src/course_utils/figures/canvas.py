"""Drawn diagrams: bars, strips, grids of cells, arrows and labels placed in pixels.

Where a box of numbers (:mod:`course_utils.figures.boxes`) only writes a mechanism, a canvas draws
it: a weight is a bar as long as the weight, a matrix a grid of cells with its shape beside it, a
weighted value a strip scaled by its weight. Both axes count pixels (``x`` to the right, ``y``
down), drawn to one scale, so that a layout designed for a width keeps its proportions at every
width (a wider box only centres it). A figure gets two layouts, like the box diagrams: one designed
for :data:`WIDE_DESIGN_PX` (laptops) and one for :data:`NARROW_DESIGN_PX` (phones, in
``layout.meta["narrow_layout"]``, which the site's ``course-figures.js`` uses below 640 px).

Labels are written in the boxes' monospaced font, so their sizes are known here
(:meth:`Canvas.text_boxes`) and the tests can check that no label meets another label, a bar or a
line. Every shape and label can carry a ``name`` (plotly keeps it), which the tests read to check
what was drawn against the numbers it was drawn from.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field

import plotly.graph_objects as go

from .. import plots
from .boxes import NARROW_DESIGN_PX, TOP_PX

__all__ = ["Canvas", "LABEL_FONT", "clashes_of", "grid", "ink_on", "NARROW_DESIGN_PX", "WIDE_DESIGN_PX", "canvas_figure", "text_width"]

WIDE_DESIGN_PX = 700  # a laptop's figure box is about 760 px; the site switches layouts at 640 px
FAMILY = "DejaVu Sans Mono, Menlo, Consolas, 'Courier New', monospace"
LABEL_FONT = dict(size=12, family=FAMILY)
TITLE_FAMILY = '"Open Sans", verdana, arial, sans-serif'  # plotly's, as every other figure's title
CHAR_EM = 0.61  # a monospaced character's width, in ems (DejaVu Sans Mono: 0.602)
LINE_EM = 1.3  # plotly's line spacing in annotations
NARROW_KEYS = ("annotations", "shapes", "height", "xaxis", "yaxis")  # what the narrow layout replaces


def _plain(text: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", text))


def text_width(text: str, size: float = LABEL_FONT["size"]) -> float:
    """The width in pixels of a (one-line) label in the monospaced font at ``size`` px."""
    return max(len(_plain(line)) for line in text.split("<br>")) * CHAR_EM * size


def _overlap(a, b, pad: float = 1.0) -> bool:
    """Whether two boxes ``(left, top, right, bottom)`` come closer than ``pad`` pixels."""
    return not (a[2] + pad <= b[0] or b[2] + pad <= a[0] or a[3] + pad <= b[1] or b[3] + pad <= a[1])


def _meets(box, segment, pad: float = 2.0) -> bool:
    """Whether the segment ``(x0, y0, x1, y1)`` passes within ``pad`` pixels of the box."""
    x0, y0, x1, y1 = segment
    steps = max(2, int(max(abs(x1 - x0), abs(y1 - y0)) / 2))
    return any(box[0] - pad <= x0 + (x1 - x0) * i / steps <= box[2] + pad
               and box[1] - pad <= y0 + (y1 - y0) * i / steps <= box[3] + pad for i in range(steps + 1))  # fmt: skip


@dataclass
class Canvas:
    """Shapes and labels in pixels, ``width`` wide; :attr:`height` grows with what is drawn."""

    width: float
    shapes: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    bottom: float = 0.0

    def _grow(self, *ys: float) -> None:
        self.bottom = max(self.bottom, *ys)

    def rect(self, x0: float, y0: float, x1: float, y1: float, *, fill: str = "white", line: str | None = None,
             line_width: float = 1.0, name: str = "", opacity: float = 1.0) -> None:
        """A rectangle from ``(x0, y0)`` (top left) to ``(x1, y1)``, filled, outlined in ``line``."""
        self.shapes.append(dict(
            type="rect", xref="x", yref="y", x0=x0, y0=y0, x1=x1, y1=y1, fillcolor=fill,
            line=dict(color=line or fill, width=line_width if line else 0), name=name,
        ))  # fmt: skip
        self._grow(y0, y1)

    def line(self, x0: float, y0: float, x1: float, y1: float, *, color: str = "#777777", width: float = 1.0,
             dash: str = "solid", name: str = "") -> None:
        """A straight line (an axis, a grid line, a bracket)."""
        self.shapes.append(dict(type="line", xref="x", yref="y", x0=x0, y0=y0, x1=x1, y1=y1,
                                line=dict(color=color, width=width, dash=dash), name=name))  # fmt: skip
        self._grow(y0, y1)

    def arrow(self, x0: float, y0: float, x1: float, y1: float, *, color: str = "#777777", width: float = 2.0,
              name: str = "") -> None:
        """An arrow from ``(x0, y0)`` to its head at ``(x1, y1)``."""
        self.notes.append(dict(
            x=x1, y=y1, ax=x0, ay=y0, xref="x", yref="y", axref="x", ayref="y", text="", showarrow=True,
            arrowhead=2, arrowsize=1.1 if width <= 2.5 else 2.6 / width, arrowwidth=width, arrowcolor=color, name=name,
        ))  # fmt: skip
        self._grow(y0, y1)

    def text(self, x: float, y: float, text: str, *, anchor: tuple[str, str] = ("left", "middle"),
             size: float = LABEL_FONT["size"], color: str | None = None, name: str = "", angle: float = 0) -> None:
        """A label at ``(x, y)``, on the ``anchor`` (xanchor, yanchor) side of it; plotly rich text."""
        font = dict(size=size)  # the family: the figure's font
        if color:
            font["color"] = color
        self.notes.append(dict(x=x, y=y, xref="x", yref="y", text=text, showarrow=False, xanchor=anchor[0],
                               yanchor=anchor[1], align=anchor[0] if anchor[0] != "center" else "center",
                               font=font, name=name, borderpad=0, textangle=angle))  # fmt: skip
        box = self.text_box(self.notes[-1])
        self._grow(box[3])

    @staticmethod
    def text_box(note: dict) -> tuple[float, float, float, float]:
        """A label's ``(left, top, right, bottom)`` in pixels, by the monospaced font's sizes."""
        size = note["font"]["size"]
        width = text_width(note["text"], size)
        height = len(note["text"].split("<br>")) * LINE_EM * size
        if note.get("textangle") in (-90, 90):
            width, height = height, width
        left = note["x"] - {"left": 0, "center": width / 2, "right": width}[note["xanchor"]]
        top = note["y"] - {"top": 0, "middle": height / 2, "bottom": height}[note["yanchor"]]
        return left, top, left + width, top + height

    def label_near(self, x: float, y: float, text: str, *, avoid: list, gap: float = 5.0, **style) -> None:
        """A label beside the point ``(x, y)`` (an arrow's tip): the first side, of right, above,
        below, left and the four corners, where it meets no segment of ``avoid`` (``(x0, y0, x1, y1)``
        lines, such as the arrows), no label already drawn, and stays inside the canvas."""
        sides = [("left", "middle", gap, 0), ("center", "bottom", 0, -gap), ("center", "top", 0, gap),
                 ("right", "middle", -gap, 0), ("left", "bottom", gap, -gap), ("left", "top", gap, gap),
                 ("right", "bottom", -gap, -gap), ("right", "top", -gap, gap)]  # fmt: skip
        taken = self.text_boxes()
        for xanchor, yanchor, dx, dy in sides:
            probe = dict(x=x + dx, y=y + dy, text=text, xanchor=xanchor, yanchor=yanchor,
                         font=dict(size=style.get("size", LABEL_FONT["size"])))  # fmt: skip
            box = self.text_box(probe)
            inside = box[0] >= 0 and box[2] <= self.width and box[1] >= 0
            if inside and not any(_meets(box, s) for s in avoid) and not any(_overlap(box, t) for t in taken):
                self.text(x + dx, y + dy, text, anchor=(xanchor, yanchor), **style)
                return
        raise ValueError(f"no room for the label {_plain(text)!r} near ({x:.0f}, {y:.0f})")

    def text_boxes(self) -> list[tuple[float, float, float, float]]:
        """Every label's box (:meth:`text_box`)."""
        return [self.text_box(n) for n in self.notes if not n.get("showarrow")]

    def segments(self) -> list[tuple[float, float, float, float]]:
        """Every line and arrow as ``(x0, y0, x1, y1)``."""
        lines = [(s["x0"], s["y0"], s["x1"], s["y1"]) for s in self.shapes if s["type"] == "line"]
        return lines + [(n["ax"], n["ay"], n["x"], n["y"]) for n in self.notes if n.get("showarrow")]

    def clashes(self) -> list[str]:
        """What a reader would see collide: two labels that overlap, a label on a line or an arrow,
        a label across a rectangle's edge (one inside a cell is fine), a label outside the canvas.
        Empty for a clean drawing."""
        found = []
        labels = [(n, self.text_box(n)) for n in self.notes if not n.get("showarrow")]
        for i, (note, box) in enumerate(labels):
            name = _plain(note["text"])[:30]
            if box[0] < -1 or box[2] > self.width + 1 or box[1] < -3:
                found.append(f"label {name!r} leaves the canvas")
            for other, other_box in labels[i + 1:]:
                if _overlap(box, other_box, pad=0):
                    found.append(f"labels {name!r} and {_plain(other['text'])[:30]!r} overlap")
            for segment in self.segments():
                if _meets(box, segment, pad=0):
                    found.append(f"label {name!r} meets a line or an arrow")
            for s in self.shapes:
                if s["type"] != "rect":
                    continue
                rect = (min(s["x0"], s["x1"]), min(s["y0"], s["y1"]), max(s["x0"], s["x1"]), max(s["y0"], s["y1"]))
                inside = rect[0] <= box[0] and box[2] <= rect[2] and rect[1] <= box[1] and box[3] <= rect[3]
                if _overlap(box, rect, pad=0) and not inside:
                    found.append(f"label {name!r} crosses the edge of {s.get('name') or 'a rectangle'}")
        return found

    def shift(self, dx: float, dy: float) -> "Canvas":
        """A copy moved by ``(dx, dy)`` pixels (a part drawn once, placed in two layouts)."""
        moved = Canvas(self.width)
        for s in self.shapes:
            moved.shapes.append(dict(s, x0=s["x0"] + dx, x1=s["x1"] + dx, y0=s["y0"] + dy, y1=s["y1"] + dy))
        for n in self.notes:
            extra = dict(ax=n["ax"] + dx, ay=n["ay"] + dy) if n.get("showarrow") else {}
            moved.notes.append(dict(n, x=n["x"] + dx, y=n["y"] + dy, **extra))
        moved.bottom = self.bottom + dy
        return moved

    def add(self, part: "Canvas", dx: float = 0.0, dy: float = 0.0) -> None:
        """Draw ``part`` on this canvas, moved by ``(dx, dy)``."""
        moved = part.shift(dx, dy)
        self.shapes += moved.shapes
        self.notes += moved.notes
        self._grow(moved.bottom)

    @staticmethod
    def _compact(item: dict) -> dict:
        """Pixels to 0.1 px, no empty name, no default angle: smaller pages."""
        out = {}
        for key, value in item.items():
            if (key == "name" and not value) or (key == "textangle" and value == 0):
                continue
            out[key] = round(value, 1) if key in ("x", "y", "ax", "ay", "x0", "x1", "y0", "y1") else value
        return out

    def layout(self, *, top_px: int = TOP_PX) -> dict:
        """The figure's layout keys for this canvas: labels and arrows, shapes, height, the pixel axes
        (one scale: a wider plot centres the drawing instead of stretching it)."""
        height = self.bottom + 6
        return dict(
            annotations=[self._compact(n) for n in self.notes],
            shapes=[self._compact(s) for s in self.shapes],
            height=int(round(height + top_px + 12)),
            xaxis=dict(visible=False, range=[0, self.width], fixedrange=True, constrain="domain"),
            yaxis=dict(visible=False, range=[height, -2], fixedrange=True, scaleanchor="x", scaleratio=1,
                       constrain="domain"),
        )


def clashes_of(layout: dict) -> list[str]:
    """:meth:`Canvas.clashes` of a figure's layout (``fig.to_plotly_json()["layout"]``, or its
    ``meta["narrow_layout"]``) drawn by :func:`canvas_figure`."""
    c = Canvas(float(layout["xaxis"]["range"][1]))
    c.shapes = [dict(s) for s in layout.get("shapes", [])]
    c.notes = [dict(n, font=dict(LABEL_FONT, **(n.get("font") or {}))) for n in layout.get("annotations", [])]
    return c.clashes()


def canvas_figure(wide: Canvas, narrow: Canvas | None, *, title: str) -> go.Figure:
    """A figure of ``wide`` (laptops) with ``narrow`` as its phone layout (``None``: ``wide`` is
    designed for a phone and serves every width). ``title`` (the figure's alt text) must be non-empty."""
    plots.require_text("title", title)
    fig = go.Figure()
    fig.update_layout(
        title=dict(text=title, x=0.02, xanchor="left", font=dict(family=TITLE_FAMILY, size=17)),
        template=plots.TEMPLATE,
        margin=dict(l=4, r=4, t=TOP_PX, b=8),
        showlegend=False,
        font=dict(size=13, family=FAMILY),  # the labels'; the title keeps the course's sans serif
        **wide.layout(),
    )
    if narrow is not None:
        small = narrow.layout()
        fig.update_layout(meta=dict(narrow_layout={key: small[key] for key in NARROW_KEYS}))
    return fig


def _rgb(colour: str) -> tuple[float, ...]:
    """``"#rrggbb"`` or ``"rgb(r, g, b)"`` as ``(r, g, b)``."""
    if colour.startswith("#"):
        return tuple(float(int(colour[i:i + 2], 16)) for i in (1, 3, 5))
    return tuple(float(v) for v in re.findall(r"[\d.]+", colour)[:3])


def _luminance(rgb) -> float:
    v = [(c / 255) / 12.92 if c / 255 <= 0.03928 else ((c / 255 + 0.055) / 1.055) ** 2.4 for c in rgb]
    return 0.2126 * v[0] + 0.7152 * v[1] + 0.0722 * v[2]


def ink_on(colour: str) -> str:
    """Black or white, whichever reads better on the ``rgb(...)`` colour ``colour`` (WCAG contrast)."""
    lum = _luminance(_rgb(colour))
    return "#000000" if (lum + 0.05) / 0.05 >= 1.05 / (lum + 0.05) else "#ffffff"


def grid(c: Canvas, x: float, y: float, values, *, cell: tuple[float, float], colours, texts, name: str,
         size: float = 10, outline_row: int | None = None) -> tuple[float, float]:
    """A matrix ``values (R, C)`` as a grid of cells, ``cell`` (width, height) pixels each, its top
    left at ``(x, y)``: cell ``(i, j)`` filled with ``colours[i][j]`` (``rgb(...)``), holding
    ``texts[i][j]`` in black or white (whichever reads), both named ``f"{name} {i} {j}"``; row
    ``outline_row`` outlined. Returns the grid's width and height."""
    rows, cols = len(values), len(values[0])
    w, h = cell
    for i in range(rows):
        for j in range(cols):
            fill = colours[i][j]
            c.rect(x + j * w, y + i * h, x + (j + 1) * w, y + (i + 1) * h, fill=fill, line="#ffffff",
                   line_width=0.5, name=f"{name} {i} {j}")  # fmt: skip
            c.text(x + (j + 0.5) * w, y + (i + 0.5) * h, texts[i][j], anchor=("center", "middle"), size=size,
                   color=ink_on(fill), name=f"{name} {i} {j}")  # fmt: skip
            c.notes[-1]["bgcolor"] = fill  # the site's dark mode keeps the text legible on its own cell
    if outline_row is not None:
        c.rect(x - 1, y + outline_row * h - 1, x + cols * w + 1, y + (outline_row + 1) * h + 1, fill="rgba(0,0,0,0)",
               line="#000000", line_width=2.5, name=f"{name} row {outline_row}")  # fmt: skip
    return cols * w, rows * h
