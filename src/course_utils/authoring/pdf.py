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
import sys
import threading
import time
from pathlib import Path

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
.bd-article > section + section, .course-pdf-chapter { break-before: page; }
.course-pdf-toc { break-after: page; }
.course-pdf-toc ol { font-size: 11pt; line-height: 1.6; }
pre, pre span { white-space: pre-wrap !important; overflow-wrap: anywhere; }
div.cell_output pre, div.highlight pre { font-size: 7.5pt !important; }
details { display: block; }
details > * { display: block !important; }
form, fieldset, figure, .plotly-graph-div, table { break-inside: avoid; }
"""

# A table of contents from the page's own chapter headings (h1), each linked to its section.
ADD_TOC = """() => {
  const article = document.querySelector('.bd-article') || document.body;
  const chapters = [...article.querySelectorAll('section > h1')].slice(1);
  chapters.forEach(h => h.parentElement.classList.add('course-pdf-chapter'));
  const toc = document.createElement('nav');
  toc.className = 'course-pdf-toc';
  toc.innerHTML = '<h2>Contents</h2><ol>' + chapters.map(h => {
    const id = h.parentElement.id || h.id;
    return `<li><a href="#${id}">${h.textContent.replace(/[#\\u00b6]/g, '').trim()}</a></li>`;
  }).join('') + '</ol>';
  const first = article.querySelector('section');
  (first || article).after(toc);
  document.querySelectorAll('details').forEach(d => d.open = true);
  return chapters.length;
}"""

MATH_TYPESET = """() => !window.MathJax || (window.MathJax.startup && window.MathJax.startup.promise
  && window.MathJax.startup.promise.then(() => true))"""
FIGURES_DRAWN = """() => document.documentElement.dataset.figuresDrawn !== undefined
  || ![...document.querySelectorAll('div.plotly-graph-div')].some(div => !div.querySelector('svg.main-svg'))"""


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - the stdlib's name
        pass


@contextlib.contextmanager
def serve(folder: Path):
    """``folder`` served on 127.0.0.1; yields its base URL."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_QuietHandler, directory=str(folder)))
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
            tab.evaluate("() => window.MathJax && MathJax.startup && MathJax.startup.promise")
            tab.wait_for_function("() => !document.querySelector('.MathJax_Processing, mjx-processing')", timeout=timeout_ms)
            chapters = tab.evaluate(ADD_TOC)
            tab.add_style_tag(content=PRINT_CSS)
            tab.emulate_media(media="print")
            tab.wait_for_timeout(500)
            tab.pdf(
                path=str(out), format="A4", print_background=True, prefer_css_page_size=True, outline=True,
                display_header_footer=True, header_template="<span></span>",
                footer_template=('<div style="font-size:8px;width:100%;text-align:center;color:#555">'
                                 'Attention, step by step · <span class="pageNumber"></span> / '
                                 '<span class="totalPages"></span></div>'),
            )
        finally:
            browser.close()
    return {"chapters": chapters, "seconds": time.perf_counter() - started, "bytes": out.stat().st_size}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("site", nargs="?", type=Path, default=SINGLEHTML)
    parser.add_argument("--out", type=Path, default=PDF)
    args = parser.parse_args(argv)
    result = print_pdf(args.site, args.out)
    print(f"{args.out}: {result['chapters']} chapters, {result['bytes'] / 2**20:.1f} MiB, "
          f"printed in {result['seconds']:.0f} s")


if __name__ == "__main__":
    main(sys.argv[1:])
