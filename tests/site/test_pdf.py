"""The book as one PDF (``make pdf``): every lesson, its computed numbers, its figures, a contents list.

The PDF's text is read with pypdf. Its numbers and figure titles are taken from the committed
lesson notebooks, so the test follows the lessons as they change.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

import nbformat
import pytest

from course_utils.authoring import pdf
from course_utils.authoring.lessons import lab_of, lesson_sources, page_sources

# The PDF holds every page the site does: each lesson a chapter, its lab page (if any) a section of it.
LESSONS = [p.with_suffix(".ipynb") for p in lesson_sources()]
PAGES = [p.with_suffix(".ipynb") for p in page_sources()]
HIDDEN_OUTPUT = {"remove-output", "remove-cell", "nbval-ignore-output"}  # not on the site, or not the same twice
NUMBER = re.compile(r"(?<![\w.])-?\d+\.\d{3,}(?![\w.])")  # 0.1623, -12.5081: specific enough to be a result
PLOTLY = "application/vnd.plotly.v1+json"


@lru_cache(maxsize=1)
def _reader():
    from pypdf import PdfReader

    if not pdf.PDF.is_file():
        pytest.fail(f"no PDF at {pdf.PDF}: run `make pdf`")
    return PdfReader(pdf.PDF)


@lru_cache(maxsize=1)
def _text() -> str:
    """The PDF's text with runs of white space made single spaces (lines wrap anywhere)."""
    text = "\n".join(page.extract_text() or "" for page in _reader().pages)
    return re.sub(r"\s+", " ", unicodedata.normalize("NFKC", text))  # the ligature "ﬁ" is "fi"


def _title(lesson) -> str:
    notebook = nbformat.read(lesson, as_version=4)
    return next(c.source for c in notebook.cells if c.cell_type == "markdown" and c.source.startswith("# "))[2:].splitlines()[0]


def _numbers(lesson, count: int = 3) -> list[str]:
    """The first ``count`` distinct decimals printed by the lesson's cells (stream outputs, text)."""
    found: list[str] = []
    for cell in nbformat.read(lesson, as_version=4).cells:
        if cell.cell_type != "code" or HIDDEN_OUTPUT & set(cell.metadata.get("tags", [])):
            continue
        for output in cell.outputs:
            for number in NUMBER.findall(output.get("text", "")):
                if number not in found:
                    found.append(number)
    return found[:count]


def _figure_titles(lesson) -> list[str]:
    titles = []
    for cell in nbformat.read(lesson, as_version=4).cells:
        if {"remove-output", "remove-cell"} & set(cell.get("metadata", {}).get("tags", [])):
            continue  # the site does not show it, so neither does the PDF
        for output in cell.get("outputs", []):
            title = ((output.get("data", {}).get(PLOTLY) or {}).get("layout", {}).get("title") or {})
            text = title.get("text") if isinstance(title, dict) else title
            if text:
                titles.append(re.sub(r"<[^>]+>", "", text))
    return titles


def test_the_pdf_has_a_page_or_more_per_chapter_and_a_sensible_size():
    pages = len(_reader().pages)
    assert len(LESSONS) * 4 <= pages <= 600, f"{pages} pages"
    assert pdf.PDF.stat().st_size < 60 * 2**20


def test_the_pdf_has_a_table_of_contents():
    assert "Contents" in _text()
    for lesson in PAGES:
        assert _title(lesson) in _text()


def _plain(text: str) -> str:
    """A heading as a reader sees it: no markdown emphasis or code marks, straight quotes."""
    text = re.sub(r"[*`]", "", unicodedata.normalize("NFKC", text))
    return re.sub(r"\s+", " ", text.replace("\u2019", "'").replace("\u201c", '"').replace("\u201d", '"')).strip()


def _bookmarks() -> list[tuple[str, list[str]]]:
    """The PDF's top-level bookmarks, each with the titles of the bookmarks right under it."""
    top: list[tuple[str, list[str]]] = []
    for item in _reader().outline:
        if isinstance(item, list):
            top[-1][1].extend(str(child.title) for child in item if not isinstance(child, list))
        else:
            top.append((str(item.title), []))
    return top


def _sections(lesson) -> list[str]:
    notebook = nbformat.read(lesson, as_version=4)
    return [line[3:] for cell in notebook.cells if cell.cell_type == "markdown"
            for line in cell.source.splitlines() if line.startswith("## ")]


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda p: p.stem)
def test_the_pdf_s_bookmarks_are_each_lesson_and_its_sections_as_titled(lesson):
    """One top-level bookmark per chapter, its sections under it, each worded as its heading
    (Chromium's own bookmarks ran wrapped lines together and gave some titles twice)."""
    bookmarks = _bookmarks()
    title = _plain(_title(lesson))
    found = [(mark, children) for mark, children in bookmarks if re.fullmatch(rf"(\d+\. )?{re.escape(title)}", _plain(mark))]
    assert len(found) == 1, f"{lesson.stem}: no top-level bookmark {title!r} among {[m for m, _ in bookmarks]}"
    number = re.match(r"(\d+\. )?", _plain(found[0][0])).group()  # the welcome page has no number
    lab = lab_of(lesson.with_suffix(".md"))
    titles = _sections(lesson) + ([_title(lab.with_suffix(".ipynb"))] if lab else [])  # its lab page: a section
    sections = [f"{number[:-1]}{k}. {_plain(section)}" if number else _plain(section)
                for k, section in enumerate(titles, start=1)]
    assert [_plain(child) for child in found[0][1]] == sections


def test_the_pdf_opens_on_its_bookmarks():
    assert _reader().page_mode == "/UseOutlines"
    top = [_plain(mark) for mark, _ in _bookmarks()]
    assert top[0] == "Attention, step by step" and len(top) > len(LESSONS)
    assert not [mark for mark in top if re.fullmatch(r"(.+?) ?\1", mark)], "a bookmark gives its title twice"


@pytest.mark.parametrize("lesson", PAGES, ids=lambda p: p.stem)
def test_every_lesson_title_and_a_sample_of_its_computed_numbers_are_in_the_pdf(lesson):
    text = _text()
    assert _title(lesson) in text, f"{lesson.stem}: its title {_title(lesson)!r} is not in the PDF"
    numbers = _numbers(lesson)
    missing = [n for n in numbers if n not in text]
    assert not missing, f"{lesson.stem}: computed numbers missing from the PDF: {missing} (sample {numbers})"


def _images(resources, seen: set | None = None) -> int:
    """The images a page's ``resources`` draw, counted from their entries (pypdf's ``page.images``
    decodes every image: 13 s for the book, against 0.1 s)."""
    seen = set() if seen is None else seen
    count = 0
    for reference in ((resources or {}).get("/XObject") or {}).values():
        xobject = reference.get_object()
        if xobject.get("/Subtype") == "/Image":
            count += 1
        elif xobject.get("/Subtype") == "/Form" and id(xobject) not in seen:  # images inside a form
            seen.add(id(xobject))
            count += _images(xobject.get("/Resources"), seen)
    return count


def test_every_figure_of_the_book_is_an_image_in_the_pdf():
    """`make pdf` prints each plotly figure as a static image of itself: one image per figure, or more."""
    figures = sum(len(_figure_titles(lesson)) for lesson in PAGES)
    images = sum(_images(page.get("/Resources")) for page in _reader().pages)
    assert figures > 20 and images >= figures, f"{images} images in the PDF for {figures} figures in the lessons"
