"""Fixtures of the site test: the built site served on 127.0.0.1, and headless Chromium.

The site must have been built first (``make book``; ``make test`` does it). Chromium is not
optional: ``make test`` installs it through apt, and a missing browser fails the test.
"""

from __future__ import annotations

import functools
import http.server
import os
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


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - the stdlib's name
        pass


@pytest.fixture(scope="session")
def base_url(site: Path):
    handler = functools.partial(_QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def chromium_path() -> str:
    """The system's Chromium (``COURSE_BROWSER`` first), else Playwright's own (``make browser``)."""
    from course_utils.authoring import browser

    path = browser.system_chromium(os.environ.get("COURSE_BROWSER")) or browser.playwright_chromium()
    if not path:
        pytest.fail("headless Chromium is not installed: run `make browser` (apt-get install chromium, or, "
                    "without apt, .venv/bin/python -m playwright install chromium)")
    return path


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=chromium_path(), headless=True, args=CHROMIUM_FLAGS)
        yield chromium
        chromium.close()
