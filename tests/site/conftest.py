"""Fixtures of the site test: the built site served on 127.0.0.1, and headless Chromium.

The site must have been built first (``make book``; ``make test`` does it). Chromium is not
optional: ``make test`` installs it through apt, and a missing browser fails the test.
"""

from __future__ import annotations

import contextlib
import functools
import gzip
import http.server
import os
import re
import threading
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SITE = ROOT / "_build" / "html"
SCREENSHOTS = ROOT / "_build" / "screenshots"
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
]


@pytest.fixture(scope="session")
def site() -> Path:
    if not (SITE / "index.html").is_file():
        pytest.fail(f"no built site at {SITE}: run `make book` first")
    return SITE


COMPRESSED_TYPES = (".html", ".js", ".css", ".svg", ".json", ".txt", ".map")


@functools.lru_cache(maxsize=512)
def _gzipped(path: str, mtime: float) -> bytes:
    return gzip.compress(Path(path).read_bytes(), compresslevel=6, mtime=0)


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    """Serves the site as a web host does (GitHub Pages among them): text gzip-compressed for a
    browser that accepts it, so the page weights measured are the bytes a reader downloads."""

    def do_GET(self):  # noqa: N802 - the stdlib's name
        path = Path(self.translate_path(self.path))
        if path.is_file() and path.suffix in COMPRESSED_TYPES and "gzip" in self.headers.get("Accept-Encoding", ""):
            body = _gzipped(str(path), path.stat().st_mtime)
            self.send_response(200)
            self.send_header("Content-Type", self.guess_type(str(path)))
            self.send_header("Content-Encoding", "gzip")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            try:
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):  # the page was closed while loading
                pass
            return
        super().do_GET()

    def log_message(self, format, *args):  # noqa: A002 - the stdlib's name
        pass


@contextlib.contextmanager
def serve(site: Path):
    """The site at ``site`` served on 127.0.0.1; yields its base URL."""
    handler = functools.partial(_QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="session")
def base_url(site: Path):
    with serve(site) as url:
        yield url


def chromium_path() -> str:
    """The system's Chromium (``COURSE_BROWSER`` first), else Playwright's own (``make browser``)."""
    from course_utils.authoring import browser

    path = browser.system_chromium(os.environ.get("COURSE_BROWSER")) or browser.playwright_chromium()
    if not path:
        pytest.fail("headless Chromium is not installed: run `make browser` (apt-get install chromium, or, "
                    "without apt, .venv/bin/python -m playwright install chromium)")
    return path


@contextlib.contextmanager
def launch_chromium():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=chromium_path(), headless=True, args=CHROMIUM_FLAGS)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture(scope="session")
def browser():
    with launch_chromium() as chromium:
        yield chromium


# A test whose parameter is a page of the site (its id ends in "[lessons/04_self_attention.html]") runs
# on the worker that has that page's other tests, so that the page is measured once (:func:`measured`):
# `make site` runs pytest-xdist with --dist loadgroup, and this scheduler makes each page a group.
# (pytest-xdist's own loadgroup, by xdist_group marks, puts nothing together under pytest 9: it renames
# the items' _nodeid, which pytest 9 no longer reads.)
PAGE_PARAMETER = re.compile(r"\[(?P<page>[\w./-]+\.html)\]$")


def page_scope(nodeid: str) -> str:
    """The unit of work of a test: its page, for a test of one page; the PDF, for a test of the PDF
    (they share its text, which pypdf takes about a minute to extract: once, on one worker); else the
    test itself."""
    match = PAGE_PARAMETER.search(nodeid)
    if match:
        return f"page {match['page']}"
    return "the pdf" if nodeid.startswith("tests/site/test_pdf.py::") else nodeid


def pytest_xdist_make_scheduler(config, log):
    if config.getoption("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class ByPage(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return page_scope(nodeid)

    return ByPage(config, log)


@pytest.fixture(scope="session")
def measured(browser, base_url):
    """:func:`tests.site.phone.measure` of a page, measured once: a page's tests share a worker
    (:func:`page_scope`)."""
    from tests.site import phone

    cache: dict[str, dict] = {}

    def get(page: str) -> dict:
        if page not in cache:
            cache[page] = phone.measure(browser, base_url, page)
        return cache[page]

    return get
