"""Every lesson page offers its notebook (with outputs, as committed) and its MyST source for download."""

from __future__ import annotations

import posixpath
from pathlib import Path

import pytest

from course_utils.authoring.lessons import ROOT
from tests.site.conftest import SITE
from tests.site.test_site import LESSON_PAGES, _anchors


@pytest.mark.parametrize("page", LESSON_PAGES)
@pytest.mark.parametrize("suffix", [".ipynb", ".md"])
def test_the_lesson_page_offers_its_file_as_committed(site, page, suffix):
    name = Path(page).stem
    links = [h for h in _anchors(page).hrefs  # the site's own files, not GitHub's or Colab's
             if "://" not in h and posixpath.basename(h.split("#")[0]) == f"{name}{suffix}"]
    assert links, f"{page}: no link to download {name}{suffix}"
    for href in links:
        served = SITE / posixpath.normpath(posixpath.join(posixpath.dirname(page), href))
        assert served.is_file(), f"{page}: {href} is not in the site"
        committed = ROOT / "lessons" / f"{name}{suffix}"
        assert served.read_bytes() == committed.read_bytes(), f"{href} differs from the committed {committed.name}"


@pytest.mark.parametrize("page", LESSON_PAGES)
def test_the_lesson_page_links_the_whole_books_pdf(site, page):
    """`make pdf` before `make book` (as `make test` and the deploy workflow run them) puts the PDF in the site."""
    from course_utils.book import BOOK_PDF

    assert (SITE / BOOK_PDF).is_file(), f"no {BOOK_PDF} in the site: run `make pdf`, then `make book`"
    links = [h for h in _anchors(page).hrefs if h.split("#")[0].endswith(BOOK_PDF)]
    assert links, f"{page}: no link to {BOOK_PDF}"
    for href in links:
        assert (SITE / posixpath.normpath(posixpath.join(posixpath.dirname(page), href))).is_file(), href
