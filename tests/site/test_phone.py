"""The site for every reader: a phone (390 × 844), a laptop (1366 × 900), a screen reader, dark mode.

Each page is checked once (:func:`tests.site.phone.measure`) and the checks are asserted one by
one below. The tests marked ``measure`` are the reader measures that ``make measure`` runs (CI runs
it after ``make test``, whose checks it does not repeat): the first contentful paint of each lesson
with the CPU slowed 4× (a timing, so a measure that is reported and flagged against its budget, not
asserted; what is asserted of those visits is that the course's heavy scripts wait for the paint), the table
``_build/screenshots/measures.md``, and phone, laptop and dark-mode screenshots, whole pages and
each figure on its own, saved under ``_build/screenshots/{phone,laptop,dark}/``, and whole pages in
greyscale under ``greyscale/``, for a person to look at.
"""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path

import pytest

from course_utils.authoring.lessons import ROOT
from tests.site import phone
from tests.site.conftest import SCREENSHOTS
from tests.site.test_site import LESSON_PAGES, PAGES

PAGE_WEIGHT_LIMIT = 3 * 2**20  # bytes transferred on a first visit, gzip-compressed as web hosts serve text
# The files of the course's own that a lesson loads after its first paint (course-after-paint.js):
# MathJax, plotly.js and the script that draws the figures, and the theme's 1.5 MB icon script.
AFTER_PAINT = {"plotly.min.js", "course-figures.js", "tex-svg.js", "fontawesome.js"}

# Violations of the theme (sphinx-book-theme / pydata-sphinx-theme), not of the course's content,
# that no one-line template override fixes. Each is matched by its rule and the nodes it names.
KNOWN_THEME_VIOLATIONS = {
    # none yet: the list is checked against what axe reports, so an entry that no longer applies fails
}


@pytest.fixture(scope="session")
def reader_measured(browser, base_url):
    """:func:`phone.reader_measures`, the screenshots of ``make measure``, timed on the lesson pages."""
    cache: dict[str, dict] = {}

    def get(page: str) -> dict:
        if page not in cache:
            cache[page] = phone.reader_measures(browser, base_url, page, SCREENSHOTS, timed=page in LESSON_PAGES)
        return cache[page]

    return get


@pytest.mark.parametrize("page", PAGES)
def test_no_page_scrolls_sideways_on_a_phone(measured, page):
    overflow = measured(page)["overflow_px"]
    assert overflow <= 0, f"{page} is {overflow} px wider than a 390 px phone screen: it scrolls sideways"


@pytest.mark.parametrize("page", PAGES)
def test_figure_parts_do_not_overlap_on_a_phone_or_a_laptop(measured, page):
    overlaps = measured(page)["overlaps"]
    assert not overlaps, f"{page}: figure parts that meet or leave their figure:\n" + "\n".join(overlaps)


@pytest.mark.parametrize("page", PAGES)
def test_figures_keep_text_clear_of_lines_boxes_and_edges(measured, page):
    """Issue 59's figure check (phone.figure_geometry), on both visits, as drawn and after every slider
    and menu step: no text on another text, an arrow, an arc, a line, a box's edge or a marker; no
    arrowhead inside a box; no text past its figure's edges; no figure wider than its box; every title
    inside its figure after every step."""
    problems = measured(page)["geometry"]
    assert not problems, f"{page}: figures drawn with problems:\n" + "\n".join(
        f"f{p['index']:02d} {p['width']} [{p['kind']}] ({p['state']}) {p['what']}" for p in problems)


@pytest.mark.parametrize("page", PAGES)
def test_figure_texts_are_readable_on_a_phone(measured, page):
    small = measured(page)["small_text"]
    assert not small, f"{page}: figure texts under {phone.MIN_TEXT_PX} px on a phone:\n" + "\n".join(small[:10])


@pytest.mark.parametrize("page", LESSON_PAGES)
def test_lesson_pages_are_light_and_block_no_rendering(measured, page):
    result = measured(page)
    assert result["weight_bytes"] <= PAGE_WEIGHT_LIMIT, (
        f"{page} transfers {result['weight_bytes'] / 2**20:.2f} MB on a first visit, over {PAGE_WEIGHT_LIMIT / 2**20:.0f} MB"
    )
    assert not result["blocking_course_scripts"], f"{page} has render-blocking scripts: {result['blocking_course_scripts']}"


@pytest.mark.measure
@pytest.mark.parametrize("page", LESSON_PAGES)
def test_a_lesson_paints_before_it_fetches_its_heavy_scripts_on_a_slow_cpu(reader_measured, page):
    """In the timed visits (the CPU slowed 4×), nothing of ``AFTER_PAINT`` is fetched before the first
    paint. The paint's time itself is a measure (``measures.md`` flags one over phone.FCP_BUDGET_MS and
    the run warns): it is the theme's and the machine's more than the lesson's
    (:func:`phone.first_contentful_paint`)."""
    result = reader_measured(page)
    early = sorted(AFTER_PAINT & set(result["before_paint"]))
    assert not early, f"{page}: fetched before its first paint ({result['fcp_ms']:.0f} ms, CPU 4×): {early}"
    if result["fcp_ms"] > phone.FCP_BUDGET_MS:
        warnings.warn(f"{page}: first contentful paint {result['fcp_ms']:.0f} ms with the CPU slowed 4×, over the "
                      f"{phone.FCP_BUDGET_MS} ms budget (a measure: see _build/screenshots/measures.md)", stacklevel=1)


def test_the_heavy_scripts_load_after_the_first_paint_and_still_do_their_work(browser, base_url):
    """MathJax, plotly.js with the figures' script, and the theme's fontawesome.js are fetched only
    once the page has painted (course-after-paint.js), and then typeset, draw and replace the icons."""
    page = "lessons/04_self_attention.html"  # formulas and figures
    context, tab = phone.open_page(browser, f"{base_url}/{page}", phone.LAPTOP)
    tab.wait_for_function("() => document.querySelector('mjx-container') && document.querySelector('svg.svg-inline--fa')")
    seen = tab.evaluate("""() => ({
      fcp: performance.getEntriesByName('first-contentful-paint')[0].startTime,
      fetched: performance.getEntriesByType('resource').map(e => [e.name.split('/').pop().split('?')[0], e.startTime]),
      scripts: [...document.querySelectorAll('script[src]')].map(s => s.src.split('/').pop().split('?')[0]),
    })""")
    context.close()
    fetched = [(name, start) for name, start in seen["fetched"] if name in AFTER_PAINT]
    assert {name for name, _ in fetched} == AFTER_PAINT, seen["fetched"]
    early = [f"{name} at {start:.0f} ms" for name, start in fetched if start < seen["fcp"]]
    assert not early, f"fetched before the first paint ({seen['fcp']:.0f} ms): {early}"
    # in the order the page gives: the formulas, the figures (plotly.js before the script that draws)
    order = [name for name in seen["scripts"] if name in AFTER_PAINT]
    assert order.index("tex-svg.js") < order.index("plotly.min.js") < order.index("course-figures.js"), order


def _is_known(violation: dict) -> bool:
    return any(violation["id"] == rule and all(re.search(p, t) for t in violation["targets"])
               for rule, p in KNOWN_THEME_VIOLATIONS.items())


@pytest.mark.parametrize("page", PAGES)
def test_axe_finds_no_serious_or_critical_violation(measured, page):
    """axe-core, with its experimental label-in-name rule, at phone width and at 1366 px, light and dark."""
    result = measured(page)
    assert set(result["axe"]) == {"phone", "phone, dark", "laptop", "laptop, dark"}
    found = [v for v in phone.all_violations(result) if v["impact"] in ("serious", "critical") and not _is_known(v)]
    assert not found, f"{page}: axe-core violations:\n" + json.dumps(found, indent=1)[:3000]


@pytest.mark.parametrize("page", PAGES)
def test_figures_follow_dark_mode(measured, page):
    problems = measured(page)["dark"]
    assert not problems, f"{page} in dark mode:\n" + "\n".join(problems[:10])


def test_the_plotly_bundle_has_every_trace_type_the_lessons_draw(browser, base_url):
    """The site's partial plotly.js registers each trace type found in the committed lesson outputs."""
    import nbformat

    from course_utils.rendering import PLOTLY_MIME

    used = {
        trace.get("type", "scatter")
        for notebook in sorted((ROOT / "lessons").glob("[0-9][0-9]_*.ipynb"))
        for cell in nbformat.read(notebook, as_version=4).cells
        for output in cell.get("outputs", [])
        for trace in output.get("data", {}).get(PLOTLY_MIME, {}).get("data", [])
    }
    assert used, "found no plotly figure in the lessons' outputs"
    tab = browser.new_page()
    tab.goto(f"{base_url}/{LESSON_PAGES[0]}", wait_until="load")
    tab.wait_for_function("() => window.Plotly")
    registered = set(tab.evaluate("() => Object.keys(Plotly.PlotSchema.get().traces)"))
    tab.close()
    assert used <= registered, f"trace types the lessons draw but the site's plotly.js lacks: {sorted(used - registered)}"


@pytest.mark.measure
def test_screenshots_were_saved_for_every_lesson(reader_measured, browser, base_url):
    """... and the table of the measures, ``_build/screenshots/measures.md``, for the record, with the
    first paint of the theme alone beside the lessons'."""
    results = [reader_measured(page) for page in PAGES]
    theme = phone.first_contentful_paint(browser, f"{base_url}/{phone.THEME_PAGE}")["fcp_ms"]
    (SCREENSHOTS / "measures.md").write_text(phone.reader_table(results, theme) + "\n", encoding="utf-8")
    for folder in ("phone", "laptop", "dark", "greyscale"):
        missing = [p for p in LESSON_PAGES if not (SCREENSHOTS / folder / f"{Path(p).stem}.png").is_file()]
        assert not missing, f"no {folder} screenshot of {missing}"

