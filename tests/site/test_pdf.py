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
from course_utils.authoring.lessons import LESSONS_DIR

LESSONS = sorted(LESSONS_DIR.glob("[0-9][0-9]_*.ipynb"))
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
        if cell.cell_type != "code" or "NBVAL_IGNORE_OUTPUT" in cell.source or "remove-output" in cell.metadata.get("tags", []):
            continue
        for output in cell.outputs:
            for number in NUMBER.findall(output.get("text", "")):
                if number not in found:
                    found.append(number)
    return found[:count]


def _figure_titles(lesson) -> list[str]:
    titles = []
    for cell in nbformat.read(lesson, as_version=4).cells:
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


def test_the_pdf_has_a_table_of_contents_and_an_outline():
    assert "Contents" in _text()
    outline = " ".join(str(item.title) for item in _reader().outline if not isinstance(item, list))
    for lesson in LESSONS:
        assert _title(lesson) in outline or _title(lesson) in _text()


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda p: p.stem)
def test_every_lesson_title_and_a_sample_of_its_computed_numbers_are_in_the_pdf(lesson):
    text = _text()
    assert _title(lesson) in text, f"{lesson.stem}: its title {_title(lesson)!r} is not in the PDF"
    numbers = _numbers(lesson)
    missing = [n for n in numbers if n not in text]
    assert not missing, f"{lesson.stem}: computed numbers missing from the PDF: {missing} (sample {numbers})"


def test_every_figure_of_the_book_is_an_image_in_the_pdf():
    """`make pdf` prints each plotly figure as a static image of itself: one image per figure, or more."""
    figures = sum(len(_figure_titles(lesson)) for lesson in LESSONS)
    images = sum(len(page.images) for page in _reader().pages)
    assert figures > 20 and images >= figures, f"{images} images in the PDF for {figures} figures in the lessons"
