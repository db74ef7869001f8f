"""Instructor tools: executing lessons into notebooks, and the benchmark's table."""

from __future__ import annotations

import nbformat
import pytest

from course_utils.authoring import bench, lessons

TINY_LESSON = """---
jupytext:
  formats: ipynb,md:myst
kernelspec:
  display_name: Python 3 (ipykernel)
  language: python
  name: python3
---

# Tiny

```{code-cell} ipython3
import random

random.seed(0)
print(random.random())
```
"""


@pytest.fixture
def tiny_lesson(tmp_path):
    path = tmp_path / "99_tiny.md"
    path.write_text(TINY_LESSON)
    return path


def test_execute_writes_the_same_notebook_twice(tiny_lesson):
    seconds = lessons.execute(tiny_lesson)
    first = tiny_lesson.with_suffix(".ipynb").read_bytes()
    lessons.execute(tiny_lesson)
    assert tiny_lesson.with_suffix(".ipynb").read_bytes() == first
    assert seconds > 0
    notebook = nbformat.read(tiny_lesson.with_suffix(".ipynb"), as_version=4)
    assert [cell.id for cell in notebook.cells] == ["cell-0", "cell-1"]
    assert notebook.cells[1].outputs[0].text == "0.8444218515250481\n"
    assert "version" not in notebook.metadata.language_info
    assert "execution" not in notebook.cells[1].metadata  # no timings recorded


def test_a_failing_cell_stops_the_execution(tmp_path):
    from nbclient.exceptions import CellExecutionError

    path = tmp_path / "98_broken.md"
    path.write_text(TINY_LESSON.replace("print(random.random())", "1 / 0"))
    with pytest.raises(CellExecutionError, match="ZeroDivisionError"):
        lessons.execute(path)
    assert not path.with_suffix(".ipynb").exists()


def test_run_lesson_names_a_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="expected a lesson file such as lessons/01_rnn_recap.md"):
        lessons.run_lesson(tmp_path / "nope.md")


def test_bench_times_a_lesson(tiny_lesson):
    assert 0 < bench.time_lesson(tiny_lesson) < 60


def test_bench_rows_say_whether_the_budget_holds():
    assert bench.row("lesson 01", 6.04, 30) == "| lesson 01 | 6.0 | 30 | ok |"
    assert bench.row("lesson 01", 31.0, 30) == "| lesson 01 | 31.0 | 30 | OVER BUDGET |"
    assert bench.row("book build, clean", 17.4, None) == "| book build, clean | 17.4 | - | - |"


def test_merge_streams_joins_consecutive_chunks_of_one_stream_only():
    import nbformat

    from course_utils.authoring.lessons import merge_streams

    out = nbformat.v4.new_output
    outputs = [out("stream", name="stdout", text="a\n"), out("stream", name="stdout", text="b\n"),
               out("stream", name="stderr", text="warning\n"), out("stream", name="stdout", text="c\n"),
               out("execute_result", data={"text/plain": "1"}), out("stream", name="stdout", text="d\n")]
    merged = merge_streams(outputs)
    assert [(o.output_type, o.get("name"), o.get("text")) for o in merged] == [
        ("stream", "stdout", "a\nb\n"), ("stream", "stderr", "warning\n"), ("stream", "stdout", "c\n"),
        ("execute_result", None, None), ("stream", "stdout", "d\n"),
    ]


@pytest.mark.parametrize("title, heading, names", [
    ("1. RNN recap: reading one word ata time", "1. RNN recap: reading one word at a time", True),
    ("The mapThe map", "The map", True),
    ("5.3. 5.3. Causal masks: the decoder’sCausal masks: the decoder’sview", "5.3. Causal masks: the decoder’s view", True),
    ("6.10. What do the heads look at? Anattention explorerattention explorer",
     "6.10. What do the heads look at? An attention explorer", True),  # the last line doubled
    ("6.10. What do the heads look at?", "6.10. What do the heads look at? An attention explorer", False),
    ("5.4. Explore the masks", "5.3. Causal masks: the decoder’s view", False),
    ("Start here", "Contents", False),
    ("Contents", "1. Contents", False),  # another number is another heading
    ("1.1. The running example", "3.1. The running example", False),
])
def test_a_chromium_bookmark_names_its_heading_despite_lost_spaces_and_doubled_lines(title, heading, names):
    from course_utils.authoring import pdf

    assert pdf._names(title, heading) is names


def _pdf_with_a_short_trailer(path):
    """A two-page PDF with two bookmarks whose trailer /Size is smaller than its object count, as
    pypdf finds Chromium's book PDF (make pdf printed "Object count ... exceeds defined trailer size")."""
    import re

    from pypdf import PdfWriter

    writer = PdfWriter()
    for title in ("One", "Two"):
        writer.add_blank_page(width=200, height=200)
        writer.add_outline_item(title, len(writer.pages) - 1)
    with path.open("wb") as handle:
        writer.write(handle)
    data = path.read_bytes()
    path.write_bytes(re.sub(rb"/Size \d+", b"/Size 3", data))
    return path


def test_rewriting_the_bookmarks_prints_no_trailer_size_warning(tmp_path, caplog):
    from pypdf import PdfReader, PdfWriter

    from course_utils.authoring import pdf

    path = _pdf_with_a_short_trailer(tmp_path / "book.pdf")
    with caplog.at_level("WARNING"):
        PdfWriter(clone_from=PdfReader(path))
    assert any("exceeds defined trailer size" in r.getMessage() for r in caplog.records), "the case is not set up"
    caplog.clear()
    with caplog.at_level("WARNING"):
        assert pdf.bookmarks(path, [(1, "One"), (1, "Two")]) == 2
    assert not [r.getMessage() for r in caplog.records if "trailer size" in r.getMessage()]
    assert [item.title for item in PdfReader(path).outline] == ["One", "Two"]
    with caplog.at_level("WARNING"):  # only that warning is dropped, and only while cloning
        PdfWriter(clone_from=PdfReader(_pdf_with_a_short_trailer(tmp_path / "again.pdf")))
    assert any("exceeds defined trailer size" in r.getMessage() for r in caplog.records)


def test_bench_times_a_fine_tuning_step_in_each_setting_and_rows_give_the_speed_up():
    from course_utils.authoring import bench_fine_tuning

    seconds = bench_fine_tuning.time_fine_tuning_steps(rounds=1, steps=2)
    assert list(seconds) == list(bench_fine_tuning.SETTINGS) and all(0 < s < 5 for s in seconds.values())
    lines = bench_fine_tuning.rows({name: 0.1 / (i + 1) for i, name in enumerate(bench_fine_tuning.SETTINGS)})
    assert lines[0] == "| fine-tuning step, random batches, AdamW loop: ms (x1.00) | 100.0 | - | - |"
    assert lines[3].endswith("(the recipe): ms (x4.00) | 25.0 | - | - |")
