"""Issue 59's figure check (``figure_geometry.js``) finds each kind of problem it claims, and no other.

A page of its own (no built site needed): figures made with one problem each, drawn by the site's
scripts (``course-figures.js``), and clean figures that draw what the check must let pass (a "+"
on a node over the line it sits on, a label on an opaque box over an arrow). The check on the built
site is ``test_phone.test_figures_keep_text_clear_of_lines_boxes_and_edges``.
"""

from __future__ import annotations

import json

import plotly.graph_objects as go
import pytest

from course_utils import rendering
from course_utils.book import plotly_bundle_source
from tests.site import phone
from tests.site.conftest import serve
from tests.site.test_slider_titles import FIGURES_JS, LAPTOP, LONG_TITLE, PHONE

HIDDEN = dict(visible=False, range=[0, 1])


def _canvas(title: str, **layout) -> go.Figure:
    fig = go.Figure()
    fig.update_layout(title=title, height=300, **{"xaxis": dict(range=[0, 1]), "yaxis": dict(range=[0, 1]), **layout})
    return fig


def _text_meets_text() -> go.Figure:
    fig = _canvas("Two labels at one place")
    fig.add_annotation(x=0.5, y=0.5, text="the first label", showarrow=False)
    fig.add_annotation(x=0.52, y=0.5, text="the second label", showarrow=False)
    return fig


def _label_on_a_line() -> go.Figure:
    fig = _canvas("A label on a line")
    fig.add_shape(type="line", x0=0, x1=1, y0=0.5, y1=0.5, line=dict(color="#333333", width=2))
    fig.add_annotation(x=0.5, y=0.5, text="on the line", showarrow=False)
    return fig


def _label_on_a_marker() -> go.Figure:
    fig = _canvas("A label on another point")
    fig.add_trace(go.Scatter(x=[0.3, 0.35], y=[0.5, 0.5], mode="markers+text", text=["a long label", ""],
                             textposition="middle right", marker=dict(size=14)))
    return fig


def _arrowhead_under_a_box() -> go.Figure:
    fig = _canvas("An arrow into a box", xaxis=HIDDEN, yaxis=HIDDEN)
    fig.add_annotation(x=0.6, y=0.5, ax=0.1, ay=0.5, axref="x", ayref="y", text="", showarrow=True, arrowhead=2)
    fig.add_annotation(x=0.6, y=0.5, text="a box with an outline", showarrow=False, bgcolor="white",
                       bordercolor="#333333", borderwidth=1, borderpad=6)
    return fig


def _text_past_the_edge() -> go.Figure:
    fig = _canvas("A label past the figure's edge")
    fig.add_annotation(xref="paper", x=1.0, y=0.5, xanchor="left", showarrow=False,
                       text="a label that runs past the right edge of its figure, whatever the width")
    return fig


def _diagram() -> go.Figure:
    """A diagram (hidden axes, boxes as shapes) with no narrow layout: drawn 720 px wide on a phone."""
    fig = _canvas("A diagram with no narrow layout", xaxis=HIDDEN, yaxis=HIDDEN)
    for k in range(3):
        fig.add_shape(type="rect", x0=0.05 + 0.32 * k, x1=0.3 + 0.32 * k, y0=0.4, y1=0.6, line=dict(color="#333333"))
    return fig


def _clean() -> go.Figure:
    """A "+" on a filled node over the line it sits on, and a label on an opaque box over an arrow."""
    fig = _canvas("Drawn clear", xaxis=HIDDEN, yaxis=HIDDEN)
    fig.add_shape(type="line", x0=0.2, x1=0.2, y0=0, y1=1, line=dict(color="#1f77b4", width=6))
    fig.add_shape(type="circle", x0=0.17, x1=0.23, y0=0.45, y1=0.55, fillcolor="white", line=dict(color="#1f77b4"))
    fig.add_annotation(x=0.2, y=0.5, text="+", showarrow=False)
    fig.add_annotation(x=0.9, y=0.5, ax=0.4, ay=0.5, axref="x", ayref="y", text="", showarrow=True, arrowhead=2)
    fig.add_annotation(x=0.65, y=0.5, text="a label on its box", showarrow=False, bgcolor="white")
    return fig


def _slider_title_unwrapped() -> dict:
    """A slider whose steps set a title longer than a phone's line, drawn by plotly.js alone (no
    course-figures.js to wrap it): the step's title runs off the figure on a phone."""
    steps = [dict(label=str(k), method="update", args=[{"visible": [True]}, {"title.text": LONG_TITLE.format(k=k) if k else "Short"}])
             for k in range(2)]  # fmt: skip
    fig = go.Figure(go.Scatter(x=[0, 1], y=[0, 1]))
    fig.update_layout(title="Short", height=300, sliders=[dict(active=0, steps=steps)])
    return json.loads(fig.to_json())


# figure id -> the kinds it must be found with, on a phone and on a laptop
SITE_FIGURES = {
    "text-meets-text": (_text_meets_text, {"text meets text"}, {"text meets text"}),
    "label-on-a-line": (_label_on_a_line, {"text on a line"}, {"text on a line"}),
    "label-on-a-marker": (_label_on_a_marker, {"text on a line"}, {"text on a line"}),
    "arrowhead-under-a-box": (_arrowhead_under_a_box, {"arrowhead in a box"}, {"arrowhead in a box"}),
    "text-past-the-edge": (_text_past_the_edge, {"text cut"}, {"text cut"}),
    "diagram": (_diagram, {"wider than its box"}, set()),
    "clean": (_clean, set(), set()),
    "fitted-elsewhere": (_label_on_a_line, {"text on a line", "fitted to another width"}, {"text on a line", "fitted to another width"}),
}
# a figure the site fitted for one width and plotly drew at another (as when a theme's padding, not
# counted, narrowed its box): its record of the fitted width is made false once it is drawn
FITTED_ELSEWHERE = """() => { document.getElementById('fitted-elsewhere').dataset.fittedWidth = '1000'; }"""
PLAIN_FIGURES = {"slider-title": (_slider_title_unwrapped, {"title leaves the figure"}, set())}


@pytest.fixture(scope="module")
def page_url(tmp_path_factory):
    folder = tmp_path_factory.mktemp("figure-geometry")
    (folder / "plotly.min.js").write_bytes(plotly_bundle_source().read_bytes())
    (folder / "course-figures.js").write_bytes(FIGURES_JS.read_bytes())
    divs = [f'<div class="box">{rendering.site_figure_html(rendering.figure_mimebundle(build())[rendering.PLOTLY_MIME], name)}</div>'
            for name, (build, _, _) in SITE_FIGURES.items()]  # fmt: skip
    plain = [f'<div class="box"><div id="{name}" class="plotly-graph-div" style="height: 300px"></div></div>'
             f"<script>Plotly.newPlot('{name}', {json.dumps(build())}.data, {json.dumps(build())}.layout)</script>"
             for name, (build, _, _) in PLAIN_FIGURES.items()]  # fmt: skip
    (folder / "index.html").write_text(
        '<!doctype html><html><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1"></head>'
        '<body style="margin: 8px"><script src="plotly.min.js"></script>' + "\n".join(divs + plain)
        + '<script src="course-figures.js"></script></body></html>',
        encoding="utf-8",
    )
    with serve(folder) as url:
        yield f"{url}/index.html"


@pytest.mark.parametrize("viewport", [PHONE, LAPTOP], ids=["phone", "laptop"])
def test_the_figure_check_finds_each_kind_of_problem_and_passes_clean_figures(browser, page_url, viewport):
    is_phone = viewport is PHONE
    context = browser.new_context(viewport=viewport, is_mobile=is_phone, has_touch=is_phone, device_scale_factor=1)
    tab = context.new_page()
    try:
        tab.goto(page_url, wait_until="networkidle")
        tab.wait_for_function("() => document.documentElement.dataset.figuresDrawn !== undefined", timeout=30_000)
        tab.evaluate(FITTED_ELSEWHERE)
        problems = phone.figure_geometry(tab)
        opened_on = tab.evaluate("() => document.getElementById('slider-title')._fullLayout.sliders[0].active")
    finally:
        context.close()
    found: dict[str, set] = {}
    for problem in problems:
        found.setdefault(problem["figure"], set()).add(problem["kind"])
    expected = {name: kinds[1 if is_phone else 2] for name, kinds in {**SITE_FIGURES, **PLAIN_FIGURES}.items()}
    for name, kinds in expected.items():
        assert found.get(name, set()) == kinds, (
            f"{name} at {viewport['width']} px: expected {sorted(kinds)}, the check found "
            + "; ".join(f"[{p['kind']}] ({p['state']}) {p['what']}" for p in problems if p["figure"] == name))
    assert set(found) <= set(expected), f"problems found on no figure of this page: {set(found) - set(expected)}"
    assert opened_on == 0, "the check left a slider on another step than the one it opened on"
