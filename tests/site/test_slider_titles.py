"""A title a slider step sets stays inside its figure on a phone, as the site draws it.

plotly emits ``plotly_sliderchange`` a frame before it applies the step's command, so a script
that re-wraps the title on that event reads the old title, and the step then writes the new one
unwrapped: on a 390 px phone it ran off the figure's right edge (lessons 01 §1.5, 03 §3.6, 07 §7.3).
These tests need no built site: a page of their own loads the site's plotly.js bundle (``make
install`` fetches it) and ``course-figures.js``, and draws slider figures of the lessons' builders.
"""

from __future__ import annotations

import json

import plotly.graph_objects as go
import pytest

from course_utils import figures, rendering
from course_utils.authoring.lessons import ROOT
from course_utils.book import plotly_bundle_source
from tests.site.conftest import serve

FIGURES_JS = ROOT / "src" / "course_utils" / "static" / "course-figures.js"
PHONE = {"width": 390, "height": 844}
LAPTOP = {"width": 1366, "height": 900}
LONG_TITLE = "Step {k}: a title written for a laptop screen, far longer than one line of a phone can hold"


def _long_titles_figure() -> go.Figure:
    """Three steps, each setting a long title (one line at 1366 px, several at 390 px); the first
    step's title is short, so the figure opens on one line and a step must add lines."""
    steps = [
        dict(label=str(k), method="update", args=[{"visible": [True]}, {"title.text": LONG_TITLE.format(k=k) if k else "Short"}])
        for k in range(3)
    ]
    fig = go.Figure(go.Scatter(x=[0, 1, 2], y=[1, 0, 1]))
    fig.update_layout(title=dict(text="Short", x=0.02, xanchor="left"), height=400,
                      sliders=[dict(active=0, steps=steps, pad=dict(t=40))])  # fmt: skip
    return fig


BUILDERS = {
    "long titles": _long_titles_figure,
    "lesson 01's sequential steps": lambda: figures.sequential_steps_figure(["[CLS]", "i", "love", "nlp", "[SEP]"]),
}


@pytest.fixture(scope="module")
def page_url(tmp_path_factory):
    """A page of its own: every figure of BUILDERS, as the site writes it, drawn by the site's scripts."""
    folder = tmp_path_factory.mktemp("slider-titles")
    (folder / "plotly.min.js").write_bytes(plotly_bundle_source().read_bytes())
    (folder / "course-figures.js").write_bytes(FIGURES_JS.read_bytes())
    divs = []
    for k, build in enumerate(BUILDERS.values()):
        spec = rendering.figure_mimebundle(build())[rendering.PLOTLY_MIME]
        divs.append(f'<div class="box">{rendering.site_figure_html(spec, f"figure-{k}")}</div>')
    (folder / "index.html").write_text(
        '<!doctype html><html><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1"></head>'
        '<body style="margin: 8px">' + "\n".join(divs)
        + '<script src="plotly.min.js"></script><script src="course-figures.js"></script></body></html>',
        encoding="utf-8",
    )
    with serve(folder) as url:
        yield f"{url}/index.html"


# A few frames, and a little time, for a slider step's command and the relayouts after it.
SETTLED = """() => new Promise(resolve => {
  let frames = 0;
  const next = () => (++frames < 4 ? requestAnimationFrame(next) : setTimeout(resolve, 100));
  requestAnimationFrame(next);
})"""

# Where the title stands in its figure, and where the figure's plot area begins.
TITLE_BOX = """(id) => {
  const div = document.getElementById(id);
  const frame = div.getBoundingClientRect();
  const title = div.querySelector('.gtitle').getBoundingClientRect();
  return {text: div.layout.title.text, left: title.left - frame.left, right: title.right - frame.left,
          top: title.top - frame.top, bottom: title.bottom - frame.top, width: frame.width,
          plot_top: div._fullLayout._size.t, active: div._fullLayout.sliders[0].active};
}"""


def _title_after_each_step(browser, url: str, viewport: dict, *, phone: bool) -> dict[str, list[dict]]:
    context = browser.new_context(viewport=viewport, is_mobile=phone, has_touch=phone, device_scale_factor=1)
    tab = context.new_page()
    try:
        tab.goto(url, wait_until="networkidle")
        tab.wait_for_function("() => document.documentElement.dataset.figuresDrawn !== undefined", timeout=30_000)
        seen = {}
        for k, name in enumerate(BUILDERS):
            div_id = f"figure-{k}"
            n_steps = tab.evaluate(f"() => document.getElementById('{div_id}').layout.sliders[0].steps.length")
            seen[name] = [tab.evaluate(TITLE_BOX, div_id)]
            rail = tab.locator(f"#{div_id} rect.slider-rail-touch-rect").first
            rail.scroll_into_view_if_needed()
            for step in [*range(n_steps), 0]:  # every step, then back to the first
                box = rail.bounding_box()
                tab.mouse.click(box["x"] + box["width"] * (0.01 + 0.98 * step / (n_steps - 1)), box["y"] + box["height"] / 2)
                tab.wait_for_function(f"() => document.getElementById('{div_id}')._fullLayout.sliders[0].active === {step}")
                tab.evaluate(SETTLED)  # the step's command runs a frame later; then any relayout it sets off
                seen[name].append(tab.evaluate(TITLE_BOX, div_id))
        return seen
    finally:
        context.close()


@pytest.mark.parametrize("viewport", [PHONE, LAPTOP], ids=["phone", "laptop"])
def test_a_title_set_by_a_slider_step_stays_inside_its_figure(browser, page_url, viewport):
    seen = _title_after_each_step(browser, page_url, viewport, phone=viewport is PHONE)
    for name, boxes in seen.items():
        n_steps = len(boxes) - 2
        assert [b["active"] for b in boxes[1:]] == [*range(n_steps), 0], f"{name}: the slider did not take each step"
        for box in boxes:
            where = f"{name}, step {box['active']} at {viewport['width']} px ({box['text']!r})"
            assert box["left"] >= 0 and box["right"] <= box["width"], (
                f"{where}: the title spans {box['left']:.0f} to {box['right']:.0f} px of a {box['width']:.0f} px figure"
            )
            assert box["top"] >= 0 and box["bottom"] <= box["plot_top"], (
                f"{where}: the title spans {box['top']:.0f} to {box['bottom']:.0f} px from the top; "
                f"the plot starts at {box['plot_top']:.0f} px"
            )
    long_titles = seen["long titles"]
    if viewport is PHONE:  # the long titles wrapped, into the room made for them at the start
        assert all("<br>" in b["text"] for b in long_titles if b["text"] != "Short")
        assert len({b["plot_top"] for b in long_titles}) == 1, "the plot moved when a step set a longer title"


# A long title set by a script (a command the figure's spec does not hold): how many relayouts it
# causes, and where the title then stands.
RELAYOUT_A_LONG_TITLE = """async (id) => {
  const div = document.getElementById(id);
  let relayouts = 0;
  div.on('plotly_relayout', () => { relayouts += 1; });
  await Plotly.relayout(div, {'title.text': %s});
  await new Promise(resolve => setTimeout(resolve, 300));
  const frame = div.getBoundingClientRect();
  const title = div.querySelector('.gtitle').getBoundingClientRect();
  return {relayouts, text: div.layout.title.text, right: title.right - frame.left, width: frame.width};
}"""


def test_a_title_set_by_a_script_is_wrapped_once(browser, page_url):
    """The title is wrapped after any relayout that sets it, and wrapping it does not set off
    another wrap: a handful of relayouts, not an endless loop."""
    context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True, device_scale_factor=1)
    tab = context.new_page()
    try:
        tab.goto(page_url, wait_until="networkidle")
        tab.wait_for_function("() => document.documentElement.dataset.figuresDrawn !== undefined", timeout=30_000)
        seen = tab.evaluate(RELAYOUT_A_LONG_TITLE % json.dumps(LONG_TITLE.format(k=9)), "figure-0")
    finally:
        context.close()
    assert "<br>" in seen["text"] and seen["right"] <= seen["width"], seen
    assert 1 <= seen["relayouts"] <= 3, f"{seen['relayouts']} relayouts after one title change: a loop?"
