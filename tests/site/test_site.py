"""The built site, as a reader sees it: pages, figures, formulas, links and Colab buttons.

Every HTML page is opened in headless Chromium from a server on 127.0.0.1. Requests to any other
host are blocked and counted: the site must work with no network at all.
"""

from __future__ import annotations

import functools
import html.parser
import posixpath
import re
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from course_utils.authoring.lessons import ROOT, repository
from tests.site.conftest import SITE
from tests.site.phone import settle

# Pages of the book: every HTML file but the theme's template fragments under _static/.
PAGES = sorted(
    p.relative_to(SITE).as_posix() for p in SITE.rglob("*.html") if not p.relative_to(SITE).parts[0].startswith("_")
) if SITE.is_dir() else []
LESSON_PAGES = [p for p in PAGES if re.fullmatch(r"lessons/\d\d_[a-z0-9_]+\.html", p)]
COLAB_PREFIX = "https://colab.research.google.com/github/"


class _Anchors(html.parser.HTMLParser):
    """Collects the ``href`` of every link and the ``id`` of every element of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if attrs.get("id"):
            self.ids.add(attrs["id"])
        if tag == "a" and attrs.get("name"):
            self.ids.add(attrs["name"])
        if tag == "a" and attrs.get("href"):
            self.hrefs.append(attrs["href"])


@functools.lru_cache(maxsize=None)  # a page is the target of many links
def _anchors(page: str) -> _Anchors:
    parser = _Anchors()
    parser.feed((SITE / page).read_text(encoding="utf-8"))
    return parser


def test_the_site_has_every_lesson_of_the_toc(site):
    lessons = sorted(p.stem for p in (ROOT / "lessons").glob("[0-9][0-9]_*.md"))
    assert [Path(p).stem for p in LESSON_PAGES] == lessons


@pytest.mark.parametrize("page", PAGES)
def test_internal_links_resolve(site, page):
    broken = []
    for href in _anchors(page).hrefs:
        parts = urlsplit(href)
        if parts.scheme or parts.netloc or href.startswith(("mailto:", "javascript:")):
            continue
        target = posixpath.normpath(posixpath.join(posixpath.dirname(page), unquote(parts.path))) if parts.path else page
        path = SITE / target
        if path.is_dir():
            path = path / "index.html"
        if not path.is_file():
            broken.append(f"{href} (no file {target})")
        elif parts.fragment and path.suffix == ".html" and parts.fragment not in _anchors(path.relative_to(SITE).as_posix()).ids:
            broken.append(f"{href} (no id {parts.fragment!r} in {target})")
    assert not broken, f"{page} has broken internal links:\n" + "\n".join(broken)


@pytest.mark.parametrize("page", PAGES)
def test_colab_links_open_a_committed_notebook_of_the_configured_repository(site, page):
    """Every link to Colab on every page (badges, launch buttons): hrefs, not text that mentions a URL."""
    repo = repository()
    links = sorted({h for h in _anchors(page).hrefs if h.startswith(COLAB_PREFIX)})
    prefix = f"{COLAB_PREFIX}{repo.github_path}/blob/{repo.branch}/"
    for link in links:
        assert link.startswith(prefix), f"{page}: a Colab link points outside {prefix}: {link}"
        notebook = link.removeprefix(prefix)
        assert notebook.endswith(".ipynb"), f"{page}: a Colab link opens {notebook}, which Colab cannot open"
        assert (ROOT / notebook).is_file(), f"{page}: the Colab link names {notebook}, which is not in the repository"
    if page in LESSON_PAGES:  # one badge in the text, one launch button in the header: this lesson's notebook
        assert links == [repo.colab_url(f"lessons/{Path(page).stem}.ipynb")], f"{page}: {links}"
    elif not (ROOT / page).with_suffix(".ipynb").is_file():
        assert links == [], f"{page} has no notebook, yet links to Colab: {links}"


@pytest.mark.parametrize("page", PAGES)
def test_page_loads_without_errors_or_network(measured, page):
    """Both first visits of :func:`tests.site.phone.measure` (a phone in dark mode, a laptop in light)."""
    seen = measured(page)
    assert not seen["external"], f"{page} asked for resources from the network: {seen['external']}"
    assert not seen["errors"], f"{page}:\n" + "\n".join(seen["errors"])
    assert seen["typeset"] >= seen["formulas"], f"{page}: {seen['typeset']} formulas typeset for {seen['formulas']}"
    assert not seen["merror"], f"{page}: a formula failed to render"


@pytest.mark.parametrize("page", LESSON_PAGES)
def test_lesson_outputs_show_no_traceback_warning_or_stderr(site, page):
    source = (SITE / page).read_text(encoding="utf-8")
    assert "Traceback (most recent call last)" not in source, f"{page} shows a traceback"
    assert not re.search(r"\b\w*Warning: ", source), f"{page} shows a warning"
    assert "output stderr" not in source, f"{page} shows output written to stderr"


# Draws a character in the font of the lesson's printed outputs and returns its pixels, so that a
# character with no glyph in any of the reader's fonts (drawn as the same empty box, or nothing) is
# told apart from one that is drawn.
_DRAW_IN_OUTPUT_FONT = """(text) => {
  const pre = document.querySelector('div.cell_output pre');
  const style = getComputedStyle(pre);
  const canvas = document.createElement('canvas');
  canvas.width = canvas.height = 48;
  const context = canvas.getContext('2d');
  context.font = `32px ${style.fontFamily}`;
  context.fillText(text, 4, 38);
  return Array.from(context.getImageData(0, 0, 48, 48).data).join(',');
}"""


def test_the_checkers_symbols_draw_without_an_emoji_font(browser, base_url):
    """Every symbol that opens a checker's message has a glyph in the fonts a system has without any
    emoji font (this machine's Chromium has none): it draws differently from a character that no font
    holds, as a private-use character does (the control that shows the check can fail)."""
    from course_utils.checks import engine

    page = next(p for p in LESSON_PAGES if engine.NOT_ATTEMPTED + " " in (SITE / p).read_text(encoding="utf-8"))
    tab = browser.new_page()
    tab.goto(f"{base_url}/{page}", wait_until="load")
    missing = tab.evaluate(_DRAW_IN_OUTPUT_FONT, "\U0010fffd")
    assert tab.evaluate(_DRAW_IN_OUTPUT_FONT, "\ue000") == missing, "the control: two glyph-less characters differ"
    boxes = [symbol for symbol in engine.SYMBOLS if tab.evaluate(_DRAW_IN_OUTPUT_FONT, symbol) == missing]
    tab.close()
    assert not boxes, f"{page}: the checkers' symbols {boxes} have no glyph in the page's output font"


@pytest.mark.parametrize("page", LESSON_PAGES)
def test_lesson_has_a_colab_badge_and_a_colab_launch_button(site, page):
    source = (SITE / page).read_text(encoding="utf-8")
    assert 'src="../_static/colab-badge.svg"' in source, f"{page}: the Colab badge is not served by the site"
    assert source.count(COLAB_PREFIX) >= 2, f"{page}: expected a Colab badge and a Colab launch button"


@pytest.mark.parametrize("page", LESSON_PAGES)
def test_lesson_figures_draw_and_load_plotly_once(measured, page):
    source = (SITE / page).read_text(encoding="utf-8")
    plotly_tags = re.findall(r'<script[^>]*src="[^"]*plotly[^"]*"', source)
    n_figures = source.count('class="plotly-graph-div')
    if n_figures:
        assert len(plotly_tags) == 1, f"{page}: expected plotly.js loaded once, found {plotly_tags}"
        assert "cdn.plot.ly" not in source, f"{page}: a figure would fetch plotly.js from a CDN"
    else:
        assert not plotly_tags, f"{page} loads plotly.js but has no figure"
    drawn = measured(page)["figures_drawn"]
    assert drawn == n_figures, f"{page}: {drawn} of {n_figures} figures drew"


@pytest.mark.parametrize("page", LESSON_PAGES)
def test_sliders_work_without_a_kernel(browser, base_url, page):
    """Dragging a figure's slider to its end updates the figure, with plotly.js alone."""
    tab = browser.new_page(viewport={"width": 1280, "height": 900})
    tab.goto(f"{base_url}/{page}", wait_until="networkidle")
    settle(tab)  # formulas typeset after the figures are drawn would move the slider under the click
    ids = tab.evaluate(
        "() => [...document.querySelectorAll('div.plotly-graph-div')]"
        ".filter(div => div.layout && (div.layout.sliders || []).length).map(div => div.id)"
    )
    for div_id in ids:
        figure = tab.locator(f"#{div_id}")
        figure.scroll_into_view_if_needed()
        state = f"() => {{ const d = document.getElementById('{div_id}'); return [d._fullLayout.sliders[0].active, JSON.stringify(d.data.map(t => t.visible)), d.layout.title && d.layout.title.text]; }}"
        before = tab.evaluate(state)
        rail_element = figure.locator("rect.slider-rail-touch-rect").first
        rail_element.scroll_into_view_if_needed()  # a tall figure's slider can sit below the viewport
        rail = rail_element.bounding_box()
        tab.mouse.click(rail["x"] + rail["width"] * 0.99, rail["y"] + rail["height"] / 2)
        tab.wait_for_timeout(300)
        after = tab.evaluate(state)
        n_steps = tab.evaluate(f"() => document.getElementById('{div_id}').layout.sliders[0].steps.length")
        assert after[0] == n_steps - 1, f"{page} #{div_id}: the slider did not move to its last step"
        assert after[1:] != before[1:], f"{page} #{div_id}: moving the slider changed nothing in the figure"
    tab.close()


def test_a_notebook_figure_draws_on_a_page_without_plotly(browser):
    """Colab shows a committed output's text/html in a bare frame: the figure's script must fetch
    plotly.js itself. The CDN request is answered here with the plotly.js of the installed package."""
    import nbformat

    from course_utils.book import plotly_js_source

    notebook = nbformat.read(ROOT / "lessons" / "00_welcome.ipynb", as_version=4)
    figure_html = next(
        output.data["text/html"]
        for cell in notebook.cells
        for output in cell.get("outputs", [])
        if "text/html" in output.get("data", {}) and "plotly-graph-div" in output.data["text/html"]
    )
    fetched = []

    def cdn(route):
        fetched.append(route.request.url)
        route.fulfill(path=str(plotly_js_source()), content_type="application/javascript")

    tab = browser.new_page()
    tab.route("https://cdn.plot.ly/**", cdn)
    tab.set_content(f"<html><body>{figure_html}</body></html>")
    tab.wait_for_selector("div.plotly-graph-div svg.main-svg", timeout=20_000)
    tab.close()
    assert len(fetched) == 1 and fetched[0].endswith(".min.js")


@pytest.mark.parametrize("page", LESSON_PAGES)
def test_the_page_shows_the_outputs_of_the_committed_notebook(site, page):
    """The site and the committed .ipynb come from the same code: a stale build cache (e.g. after
    a change to course_utils) would show other printed outputs than a fresh run."""
    import html as html_module

    import nbformat

    from course_utils.authoring.lessons import has_unstable_output

    notebook = nbformat.read(ROOT / "lessons" / f"{Path(page).stem}.ipynb", as_version=4)
    source = html_module.unescape((SITE / page).read_text(encoding="utf-8"))
    missing = [
        line
        for cell in notebook.cells
        if cell.cell_type == "code" and not has_unstable_output(cell)
        for output in cell.outputs
        if output.output_type == "stream"
        for line in output.text.splitlines()
        if line.strip() and line not in source
    ]
    assert not missing, f"{page} does not show these printed lines of the committed notebook: {missing[:5]}"


class _Figures(html.parser.HTMLParser):
    """Collects the attributes of every plotly figure ``<div>`` of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.figures: list[dict] = []

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if tag == "div" and "plotly-graph-div" in (attributes.get("class") or "").split():
            self.figures.append(attributes)


@pytest.mark.parametrize("page", PAGES)
def test_every_figure_says_what_it_shows(site, page):
    """Screen readers get each figure's title: role=figure (its sliders and menus stay reachable,
    which role=img would hide) and a non-empty aria-label."""
    parser = _Figures()
    parser.feed((SITE / page).read_text(encoding="utf-8"))
    unlabelled = [f.get("id") for f in parser.figures if f.get("role") != "figure" or not (f.get("aria-label") or "").strip()]
    assert not unlabelled, f"{page}: figures without alt text: {unlabelled}"


PAGE_WEIGHT_LIMIT = 1.5 * 2**20  # bytes of a page's own HTML, figures' data included; plotly.js is shared


def test_pages_stay_light(site):
    weights = {page: (SITE / page).stat().st_size for page in PAGES}
    heaviest = max(weights, key=weights.get)
    print(f"heaviest page: {heaviest}, {weights[heaviest] / 2**10:.0f} KiB")
    too_heavy = {p: w for p, w in weights.items() if w > PAGE_WEIGHT_LIMIT}
    assert not too_heavy, f"pages over 1.5 MiB: {too_heavy}"


@pytest.mark.parametrize(
    "term, lesson",
    [("WordPiece", "02_tokens_embeddings"), ("LayerNorm", "06_encoder"), ("quantisation", "08_using_distilbert")],
)
def test_site_search_finds_a_lesson_by_a_glossary_term(browser, base_url, term, lesson):
    tab = browser.new_page()
    tab.goto(f"{base_url}/search.html?q={term}", wait_until="networkidle")
    tab.wait_for_selector("#search-results ul.search li", timeout=15_000)
    found = tab.evaluate("() => [...document.querySelectorAll('#search-results ul.search li a')].map(a => a.href)")
    tab.close()
    assert any(f"lessons/{lesson}.html" in href for href in found), f"searching {term!r} found {found[:8]}"


TEACHING_LESSONS = [
    ("softmax", "04_self_attention"),
    ("positional encoding", "03_positional_encoding"),
    ("padding mask", "05_masking"),
    ("temperature", "07_distillation"),
    ("LayerNorm", "06_encoder"),
]


@pytest.mark.parametrize("term, lesson", TEACHING_LESSONS)
def test_search_ranks_the_lesson_that_teaches_a_term_first_and_shows_its_prose(browser, base_url, term, lesson):
    tab = browser.new_page()
    tab.goto(f"{base_url}/search.html?q={term}", wait_until="networkidle")
    tab.wait_for_selector("#search-results ul.search li p.context", timeout=15_000)
    tab.wait_for_timeout(500)  # the snippets of the other results
    first = tab.evaluate("() => document.querySelector('#search-results ul.search li a').href")
    snippets = tab.evaluate("() => [...document.querySelectorAll('#search-results ul.search li p.context')].map(p => p.textContent)")
    tab.close()
    assert f"lessons/{lesson}.html" in first, f"searching {term!r}: the first result is {first}"
    raw = [s for s in snippets if re.search(r"\\[a-z]+|\$|Skip to main content|Show code cell|Contents \d+\. ", s)]
    assert not raw, f"searching {term!r}: snippets with LaTeX or navigation text (or the print-only contents): {raw[:3]}"


GREY_STEP = 40  # grey levels (of 255) that tell two solid lines of the same style apart


def grey(css_colour: str) -> float | None:
    """The grey level (0-255) of a CSS ``rgb(...)`` colour, as a greyscale conversion computes it (ITU-R BT.601);
    ``None`` for a pattern fill (``url(#...)``) or no colour."""
    numbers = re.findall(r"[\d.]+", css_colour or "")
    if css_colour.startswith("url(") or len(numbers) < 3:
        return None
    r, g, b = (float(n) for n in numbers[:3])
    return 0.299 * r + 0.587 * g + 0.114 * b


def distinguishable_in_grey(a: dict, b: dict) -> bool:
    """Two legend entries can be told apart without colour: by dash, marker shape, pattern or grey level."""
    for kind in ("line", "point"):
        if (a[kind] is None) != (b[kind] is None):
            return True
        if a[kind] is None:
            continue
        (colour_a, style_a), (colour_b, style_b) = a[kind], b[kind]
        if style_a != style_b:  # another dash, another marker symbol
            return True
        grey_a, grey_b = grey(colour_a), grey(colour_b)
        if grey_a is None or grey_b is None:  # a pattern fill
            if colour_a != colour_b:
                return True
        elif abs(grey_a - grey_b) >= GREY_STEP:
            return True
    return False


def test_the_greyscale_check_tells_styles_apart():
    solid_blue, solid_orange = ["rgb(0, 114, 178)", "none"], ["rgb(230, 159, 0)", "none"]
    sky, purple = ["rgb(86, 180, 233)", "none"], ["rgb(204, 121, 167)", "none"]
    assert distinguishable_in_grey({"line": solid_blue, "point": None}, {"line": solid_orange, "point": None})
    assert not distinguishable_in_grey({"line": sky, "point": None}, {"line": purple, "point": None})
    assert distinguishable_in_grey({"line": sky, "point": None}, {"line": [purple[0], "9px, 9px"], "point": None})
    bars = [{"line": None, "point": ["url(#p1)", "M6,6V-6"]}, {"line": None, "point": ["url(#p2)", "M6,6V-6"]}]
    assert distinguishable_in_grey(*bars)


@pytest.mark.parametrize("page", LESSON_PAGES)
def test_figures_read_in_greyscale(measured, page):
    """Every pair of legend entries of a figure differs by more than hue (``make measure`` saves each
    page in greyscale, ``_build/screenshots/greyscale/``, for a person to look at)."""
    confusable = [
        (figure["title"], a["name"], b["name"])
        for figure in measured(page)["legends"]
        for i, a in enumerate(figure["items"])
        for b in figure["items"][i + 1 :]
        if not distinguishable_in_grey(a, b)
    ]
    assert not confusable, f"{page}: legend entries that look alike in greyscale: {confusable}"
