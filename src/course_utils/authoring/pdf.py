"""``make pdf``: the whole book as one PDF, printed by headless Chromium from a single-page build.

``python -m course_utils.authoring.pdf [SINGLEHTML_DIR] [--out PDF]`` serves the single-page HTML
build (``jupyter-book build . --builder singlehtml``, which ``make pdf`` runs first, reusing the
lessons' execution cache) on 127.0.0.1, opens it in the headless Chromium of the site test, waits
until MathJax has typeset every formula and every plotly figure is drawn, and prints it to
``_build/pdf/attention-step-by-step.pdf``: A4, a table of contents first, each chapter on a new
page, page numbers in the footer. No LaTeX is needed.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import http.server
import os
import re
import sys
import threading
import time
from pathlib import Path

from . import require_checkout
from .lessons import ROOT

SINGLEHTML = ROOT / "_build" / "singlehtml"
PDF = ROOT / "_build" / "pdf" / "attention-step-by-step.pdf"
PDF_NAME = PDF.name

# Print styles: the theme's navigation and buttons out, each top-level section on a new page,
# code wrapped rather than cut at the margin, the quiz's forms kept whole.
PRINT_CSS = """
@page { size: A4; margin: 16mm 14mm 18mm 14mm; }
.bd-header, .bd-sidebar-primary, .bd-sidebar-secondary, .header-article, .bd-footer,
.bd-footer-article, .prev-next-area, .headerlink, .bd-header-announcement, .toggle-details,
.search-button, .theme-switch-button, #pst-back-to-top, .cell_input.tag_remove-input { display: none !important; }
.bd-main, .bd-content, .bd-article-container, .bd-page-width, .bd-container { max-width: none !important; }
.course-pdf-chapter { break-before: page; }
.bd-sidebar, .bd-toc, nav.bd-links { display: none !important; }
.course-pdf-toc { break-after: page; break-before: page; }
.course-pdf-toc ol { list-style: none; padding-left: 0; }
.course-pdf-toc ol { font-size: 11pt; line-height: 1.6; }
pre, pre span { white-space: pre-wrap !important; overflow-wrap: anywhere; }
div.cell_output pre, div.highlight pre { font-size: 7.5pt !important; }
details { display: block; }
details > * { display: block !important; }
form, fieldset, figure, img.course-pdf-figure, table { break-inside: avoid; }
"""

# The single page holds each document after a <span id="document-NAME">, as a <section> led by its
# title: each such section starts a page, and a contents list linking them follows the first.
ADD_TOC = """() => {
  const documents = [...document.querySelectorAll('span[id^="document-"]')]
    .map(span => span.nextElementSibling).filter(s => s && s.tagName === 'SECTION');
  // a chapter is a page at the top of the toc; a lab page sits inside its lesson's, as a section
  const chapters = documents.filter(s => !documents.some(other => other !== s && other.contains(s)));
  chapters.forEach(s => s.classList.add('course-pdf-chapter'));
  const title = s => s.querySelector('h1, h2').textContent.replace(/[#\\u00b6]/g, '').trim();
  const toc = document.createElement('nav');
  toc.className = 'course-pdf-toc';
  toc.setAttribute('aria-label', 'Contents');
  toc.innerHTML = '<h2>Contents</h2><ol>' + chapters.map(s =>
    `<li><a href="#${s.id}">${title(s)}</a></li>`).join('') + '</ol>';
  const article = document.querySelector('.bd-article') || document.body;
  const first = article.querySelector('section');
  first.querySelector('h1').after(toc);
  document.querySelectorAll('details').forEach(d => d.open = true);
  return chapters.map(title);
}"""

# Each drawn plotly figure becomes a static image of itself (plotly's own toImage) before printing:
# Chromium's print layout misplaces plotly's stacked, absolutely positioned SVG layers.
FIGURES_AS_IMAGES = """async () => {
  const divs = [...document.querySelectorAll('div.plotly-graph-div')].filter(div => div.querySelector('svg.main-svg'));
  for (const div of divs) {
    const width = Math.max(div.clientWidth, 300), height = Math.max(div.clientHeight, 200);
    const image = document.createElement('img');
    image.src = await Plotly.toImage(div, {format: 'png', width, height, scale: 2});
    image.alt = div.getAttribute('aria-label') || 'figure';
    image.className = 'course-pdf-figure';
    image.style.width = '100%';
    div.replaceWith(image);
  }
  return divs.length;
}"""

# The headings the PDF's bookmarks are made of, as printed, with their levels: each chapter's title
# (h2 in the single page) at the top level with the book's title (h1, the introduction), their
# sections one and two levels down; the permalink "#" is no part of a title.
HEADINGS = """() => [...document.querySelectorAll('h1, h2, h3, h4')]
  .filter(h => h.getClientRects().length > 0)
  .map(h => [Number(h.tagName[1]) - (h.closest('.course-pdf-chapter') ? 1 : 0),
             h.textContent.replace(/[#\\u00b6]/g, '').replace(/\\s+/g, ' ').trim()])
  .filter(([level]) => level <= 3)"""
LOOKAHEAD = 4  # headings a bookmark may skip over (Chromium leaves out some), before it counts as a stray

MATH_TYPESET = """() => !window.MathJax || (window.MathJax.startup && window.MathJax.startup.promise
  && window.MathJax.startup.promise.then(() => true))"""
FIGURES_DRAWN = """() => document.documentElement.dataset.figuresDrawn !== undefined
  || ![...document.querySelectorAll('div.plotly-graph-div')].some(div => !div.querySelector('svg.main-svg'))"""


class _SinglePageHandler(http.server.SimpleHTTPRequestHandler):
    """Serves the single-page build, whose page is written in a subfolder (``book/intro.html``, the
    root document) while its scripts and styles are named relative to the build's root
    (``_static/...``): a file missing in the page's folder is looked up at the root."""

    def translate_path(self, path):
        local = Path(super().translate_path(path))
        root = Path(self.directory)
        if not local.exists() and local.is_relative_to(root) and len(local.relative_to(root).parts) > 1:
            fallback = root.joinpath(*local.relative_to(root).parts[1:])
            if fallback.exists():
                return str(fallback)
        return str(local)

    def log_message(self, format, *args):  # noqa: A002 - the stdlib's name
        pass


class _QuietServer(http.server.ThreadingHTTPServer):
    def handle_error(self, request, client_address):  # a page closed while loading: nothing to report
        pass


@contextlib.contextmanager
def serve(folder: Path):
    """``folder`` served on 127.0.0.1; yields its base URL."""
    server = _QuietServer(("127.0.0.1", 0), functools.partial(_SinglePageHandler, directory=str(folder)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def chromium() -> str:
    from . import browser

    path = browser.system_chromium(os.environ.get("COURSE_BROWSER")) or browser.playwright_chromium()
    if not path:
        raise SystemExit("headless Chromium is not installed: run `make browser`")
    return path


def print_pdf(site: Path = SINGLEHTML, out: Path = PDF, *, timeout_ms: int = 180_000) -> dict:
    """Print the single-page build in ``site`` to ``out``; returns what it measured."""
    from playwright.sync_api import sync_playwright

    index = site / "index.html"
    if not index.is_file():
        raise SystemExit(f"no single-page build at {site}: run `jupyter-book build . --builder singlehtml` "
                         "(make pdf does it)")
    out.parent.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    with serve(site) as url, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium(), headless=True,
                                             args=["--no-sandbox", "--disable-gpu", "--headless"])
        try:
            # a laptop-wide page, so figures are drawn at the width they are printed at
            tab = browser.new_page(viewport={"width": 1100, "height": 1400})
            tab.goto(f"{url}/index.html", wait_until="networkidle", timeout=timeout_ms)
            tab.wait_for_function(FIGURES_DRAWN, timeout=timeout_ms)
            # MathJax loads after the first paint (course-after-paint.js): until it runs, window.MathJax
            # is its configuration, with no startup to wait on
            tab.wait_for_function("() => !window.MathJax || window.MathJax.startup", timeout=timeout_ms)
            tab.evaluate("() => window.MathJax && MathJax.startup && MathJax.startup.promise")
            tab.wait_for_function("() => !document.querySelector('.MathJax_Processing, mjx-processing')", timeout=timeout_ms)
            figures = tab.evaluate(FIGURES_AS_IMAGES)
            chapters = tab.evaluate(ADD_TOC)
            tab.add_style_tag(content=PRINT_CSS)
            tab.emulate_media(media="print")
            tab.wait_for_timeout(500)
            headings = tab.evaluate(HEADINGS)
            tab.pdf(
                path=str(out), format="A4", print_background=True, prefer_css_page_size=True, outline=True,
                tagged=True, display_header_footer=True, header_template="<span></span>",
                footer_template=('<div style="font-size:8px;width:100%;text-align:center;color:#555">'
                                 'Attention, step by step · <span class="pageNumber"></span> / '
                                 '<span class="totalPages"></span></div>'),
            )
        finally:
            browser.close()
    marks = bookmarks(out, headings)
    return {"chapters": len(chapters), "titles": chapters, "figures": figures, "bookmarks": marks,
            "seconds": time.perf_counter() - started, "bytes": out.stat().st_size}


def _squeezed(text: str) -> str:
    return re.sub(r"\s+", "", text)


def _names(title: str, heading: str) -> bool:
    """Whether Chromium's bookmark ``title`` names ``heading``.

    Chromium's titles lose the spaces at line breaks ("reading one word ata time"), and some come
    with a line given twice (the last: "What do the heads look at? Anattention explorerattention
    explorer"), or their first line ("5.3. 5.3. Causal masks: the decoder'sCausal masks: the
    decoder'sview"): compared without white space, such a title starts with the heading's number,
    ends with its name and is at most twice as long.
    """
    number, name = re.fullmatch(r"((?:\d+\.)*)\s*(.*)", heading, re.S).groups()
    squeezed, whole = _squeezed(title), _squeezed(heading)
    if squeezed == whole or _undoubled(squeezed) == _undoubled(whole):
        return True
    return (squeezed.startswith(_squeezed(number)) and squeezed.endswith(_squeezed(name))
            and len(squeezed) <= 2 * len(whole))


def _undoubled(text: str) -> str:
    """``text`` with every run given twice in a row given once ("Anattentionexplorerattentionexplorer"
    -> "Anattentionexplorer"): Chromium doubles the first or the last line of some wrapped titles."""
    previous = None
    while previous != text:
        previous, text = text, re.sub(r"(.{3,}?)\1", r"\1", text)
    return text


class _NotTheTrailerSize:
    """Drops pypdf's "Object count N exceeds defined trailer size M" while a PDF is cloned.

    pypdf compares the objects it copies from Chromium's PDF with the source's trailer /Size and
    warns when they are more; the PDF it writes gets a cross-reference table and /Size of its own,
    so the source's count says nothing about the result (the PDF tests check the result).
    """

    @staticmethod
    def filter(record) -> bool:
        return not str(record.msg).startswith("Object count")


@contextlib.contextmanager
def _quiet_trailer_size():
    import logging

    logger, quiet = logging.getLogger("pypdf._writer"), _NotTheTrailerSize()
    logger.addFilter(quiet)
    try:
        yield
    finally:
        logger.removeFilter(quiet)


def bookmarks(pdf_path: Path, headings: list[tuple[int, str]]) -> int:
    """Rewrite the PDF's bookmarks from the printed page's ``headings`` ``[(level, text)]``; returns
    how many it wrote.

    Chromium's outline (``outline=True``) points at the right places, but it runs the lines of a
    wrapped title together, gives some titles twice, and nests every chapter under the book's
    title. Each of its bookmarks keeps its place and takes the text and level of the heading it
    names; bookmarks that name no heading (the contents list's captions) are dropped.
    """
    from pypdf import PdfReader, PdfWriter
    from pypdf.generic import Fit

    reader = PdfReader(pdf_path)
    marks: list[tuple[int, float | None, str]] = []

    def walk(items) -> None:
        for item in items:
            if isinstance(item, list):
                walk(item)
            else:
                marks.append((reader.get_destination_page_number(item), item.top, str(item.title)))

    walk(reader.outline)
    placed, next_heading = [], 0
    for page, top, title in marks:
        ahead = headings[next_heading:next_heading + LOOKAHEAD]
        found = next((k for k, (_, text) in enumerate(ahead) if _names(title, text)), None)
        if found is not None:
            level, text = ahead[found]
            placed.append((level, text, page, top))
            next_heading += found + 1
    with _quiet_trailer_size():
        writer = PdfWriter(clone_from=reader)
    if "/Outlines" in writer.root_object:
        del writer.root_object["/Outlines"]
    parents: list = []
    for level, text, page, top in placed:
        del parents[level - 1:]
        parent = parents[-1] if parents else None
        fit = Fit.xyz(left=0, top=float(top)) if top is not None else Fit.fit()
        parents.append(writer.add_outline_item(title=text, page_number=page, parent=parent, fit=fit, is_open=False))
    writer.page_mode = "/UseOutlines"
    partial = pdf_path.with_suffix(".partial.pdf")
    with partial.open("wb") as handle:
        writer.write(handle)
    partial.replace(pdf_path)
    return len(placed)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("site", nargs="?", type=Path, default=SINGLEHTML)
    parser.add_argument("--out", type=Path, default=PDF)
    args = parser.parse_args(argv)
    require_checkout()
    result = print_pdf(args.site, args.out)
    print(f"{args.out}: {result['chapters']} chapters, {result['figures']} figures, {result['bookmarks']} bookmarks, "
          f"{result['bytes'] / 2**20:.1f} MiB, "
          f"printed in {result['seconds']:.0f} s")


if __name__ == "__main__":
    main(sys.argv[1:])
