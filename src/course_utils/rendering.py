"""How a figure reaches the reader: the course's plotly renderer, in a notebook and on the site.

Why a renderer of our own? Inside a kernel, plotly ≥ 6.1 emits only its JSON mime type
(``application/vnd.plotly.v1+json``). JupyterLab and VS Code draw that, but Jupyter Book, Colab
and GitHub do not: the book shows a blank gap. The ``"course"`` renderer emits both:

- the JSON mime type, drawn natively by JupyterLab and VS Code;
- ``text/html``: a ``<div>`` and a short script that draws the figure with the page's own
  ``Plotly`` object. On the book's site plotly.js is served by the site itself, once per page
  (see :mod:`course_utils.book`). Where a page has no ``Plotly`` (Colab's output frames), the
  script loads the matching plotly.js before drawing.

Div ids are derived from the figure and a per-kernel counter, so re-running a notebook gives
byte-identical outputs (needed by nbval's strict comparison).
"""

from __future__ import annotations

import hashlib
import html
import itertools
import json
import re

import plotly.graph_objects as go
import plotly.io as pio
from plotly.io._base_renderers import MimetypeRenderer
from plotly.offline import get_plotlyjs_version

from . import precision

RENDERER_NAME = "course"
PLOTLY_MIME = "application/vnd.plotly.v1+json"
_figure_counter = itertools.count(1)


def _figure_payload(spec: dict, div_id: str) -> str:
    """``spec`` (``data``, ``layout``) as JSON that can sit inside a ``<script>`` element."""
    if not isinstance(spec, dict) or "data" not in spec:
        raise ValueError("expected a figure spec: a dict with 'data' (and usually 'layout')")
    if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_-]*", div_id):
        raise ValueError(f"expected an HTML id (letters, digits, '-' and '_'), got {div_id!r}")
    return json.dumps(
        {"data": spec.get("data", []), "layout": spec.get("layout", {}), "config": {"responsive": True}},
        sort_keys=True,
        separators=(",", ":"),
    ).replace("</", "<\\/")  # a figure title cannot close the script tag


def _figure_label(spec: dict) -> str:
    return html.escape(figure_title(spec) or "interactive figure", quote=True)


def figure_html(spec: dict, div_id: str, *, fetch_plotly_js: bool = True) -> str:
    """The HTML of a figure in a notebook: a ``<div>`` and a script that draws it with the page's ``Plotly``.

    ``spec`` is the figure as a JSON-ready dict (``data``, ``layout``). With ``fetch_plotly_js``
    the script loads the matching plotly.js itself when the page has none (Colab's output frames).
    The book's site draws its figures with :func:`site_figure_html` instead.
    """
    payload = _figure_payload(spec, div_id)
    height = spec.get("layout", {}).get("height") or 450
    draw = f'Plotly.newPlot("{div_id}", fig.data, fig.layout, fig.config);'
    if fetch_plotly_js:
        plotly_js = f"https://cdn.plot.ly/plotly-{get_plotlyjs_version()}.min.js"
        draw = (
            f"var draw = function () {{ {draw} }};\n"
            "  if (window.Plotly) { draw(); return; }\n"
            "  // No plotly.js on this page (e.g. a Colab output frame): fetch it, then draw.\n"
            '  var script = document.createElement("script");\n'
            f'  script.src = "{plotly_js}";\n'
            "  script.onload = draw;\n"
            "  document.head.appendChild(script);"
        )
    return (
        f'<div id="{div_id}" class="plotly-graph-div course-figure" role="img" aria-label="{_figure_label(spec)}" '
        f'style="height:{height}px; width:100%;"></div>\n'
        '<script type="text/javascript">\n'
        "(function () {\n"
        f"  var fig = {payload};\n"
        f"  {draw}\n"
        "})();\n"
        "</script>"
    )


def site_figure_html(spec: dict, div_id: str) -> str:
    """The HTML of a figure on the book's site: a ``<div>`` and the figure's spec as JSON.

    The site's deferred ``course-figures.js`` (:mod:`course_utils.book`) draws every figure once
    plotly.js has loaded, fitted to the width the figure gets. The ``<div>`` is a labelled
    ``role="figure"``: a figure may hold sliders and menus, which a screen reader must reach
    (``role="img"`` would hide them). Its height is reserved, so the page does not jump.
    """
    payload = _figure_payload(spec, div_id)
    height = spec.get("layout", {}).get("height") or 450
    return (
        f'<div id="{div_id}" class="plotly-graph-div course-figure" role="figure" '
        f'aria-label="{_figure_label(spec)}" style="height:{height}px; width:100%;"></div>\n'
        f'<script type="application/json" class="course-figure-spec" data-figure="{div_id}">{payload}</script>'
    )


def figure_title(spec: dict) -> str:
    """The title of a figure spec as plain text (tags such as ``<br>`` become spaces)."""
    title = spec.get("layout", {}).get("title", "")
    text = title.get("text", "") if isinstance(title, dict) else str(title or "")
    return " ".join(re.sub(r"<[^>]+>", " ", text).split())


def figure_mimebundle(fig: go.Figure) -> dict[str, object]:
    """The mime bundle the course renderer displays for ``fig``.

    Keys: ``application/vnd.plotly.v1+json`` (JupyterLab, VS Code) and ``text/html`` (the book,
    Colab). Every float is rounded to :data:`course_utils.precision.FIGURE_DIGITS` significant
    digits. The div id is ``fig-<n>-<digest>``: the n-th figure of this kernel and a digest of the
    figure, so a notebook run from a fresh kernel always produces the same bytes.
    """
    if not isinstance(fig, go.Figure):
        raise TypeError(f"expected a plotly.graph_objects.Figure, got {type(fig).__name__}")
    # every float rounded to what a figure shows, so that every processor draws the same bytes
    spec = precision.rounded_figure(json.loads(pio.to_json(fig, validate=False, engine="json")))
    digest = hashlib.sha1(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:10]
    div_id = f"fig-{next(_figure_counter)}-{digest}"
    return {
        PLOTLY_MIME: {"data": spec.get("data", []), "layout": spec.get("layout", {}), "config": {}},
        "text/html": figure_html(spec, div_id),
    }


class CourseRenderer(MimetypeRenderer):
    """Plotly renderer emitting :func:`figure_mimebundle`; registered as ``"course"``."""

    def to_mimebundle(self, fig_dict: dict) -> dict[str, object]:
        return figure_mimebundle(go.Figure(fig_dict))


def use_course_renderer() -> None:
    """Register the ``"course"`` renderer and make it plotly's default (idempotent)."""
    pio.renderers[RENDERER_NAME] = CourseRenderer()
    pio.renderers.default = RENDERER_NAME
