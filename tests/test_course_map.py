"""course_utils.course_map: the introduction's learning path and lesson table, read from the lesson files."""

from __future__ import annotations

import re

import plotly.graph_objects as go
import pytest

from course_utils import course_map
from course_utils.authoring import bench, lessons


def write_lesson(folder, stem, title="A title", minutes=25):
    (folder / f"{stem}.md").write_text(
        f"---\nx: 1\n---\n\n# {title}\n\n**Before you start:** x. **Time:** about\n{minutes} minutes.\n"
    )


def test_the_plan_follows_the_course_design():
    assert [p.number for p in course_map.PLAN] == list(range(10))
    assert [p.name for p in course_map.PLAN][:2] == ["Welcome", "RNN recap"]


def test_every_written_lesson_is_read_from_its_file():
    entries = course_map.lessons()
    written = [e for e in entries if e.path is not None]
    assert [e.stem for e in written] == [p.stem for p in lessons.lesson_sources()]
    for entry in written:
        text = entry.path.read_text(encoding="utf-8")
        assert f"# {entry.title}\n" in text
        assert re.search(rf"\*\*Time:\*\*\s+about\s+{entry.minutes}\s+minutes", text)
        assert entry.budget_s == bench.LESSON_BUDGET_S.get(entry.stem, bench.DEFAULT_LESSON_BUDGET_S)


def test_planned_lessons_without_a_file_are_coming(tmp_path):
    write_lesson(tmp_path, "00_welcome", "Welcome", 10)
    write_lesson(tmp_path, "01_rnn_recap", "RNN recap", 45)
    write_lesson(tmp_path, "10_cross_attention", "Cross-attention", 30)
    entries = course_map.lessons(tmp_path)
    assert [e.planned.number for e in entries] == list(range(11))
    assert [e.minutes for e in entries[:2]] == [10, 45]
    assert all(e.path is None and e.minutes is None and e.budget_s is None for e in entries[2:10])
    assert entries[10].title == "Cross-attention" and entries[10].budget_s == bench.DEFAULT_LESSON_BUDGET_S


def test_a_lesson_without_its_time_is_refused(tmp_path):
    (tmp_path / "00_welcome.md").write_text("# Welcome\n\nNo time here.\n")
    with pytest.raises(ValueError, match=r"expected one '\*\*Time:\*\* about N minutes', found 0"):
        course_map.lessons(tmp_path)


def test_the_learning_path_draws_one_box_per_lesson_and_an_arrow_between_each(tmp_path):
    write_lesson(tmp_path, "00_welcome", "Welcome", 10)
    entries = course_map.lessons(tmp_path)
    fig = course_map.learning_path(entries)
    assert isinstance(fig, go.Figure)
    boxes = [s for s in fig.layout.shapes if s.type == "rect"]
    assert len(boxes) == len(entries)
    assert [b.line.dash for b in boxes[:2]] == ["solid", "dash"]  # written, then coming: not only colour
    arrows = [a for a in fig.layout.annotations if a.showarrow]
    assert len(arrows) == len(entries) - 1
    labels = [a.text for a in fig.layout.annotations if not a.showarrow]
    assert labels[0].startswith("<b>00 Welcome</b>") and "coming" in labels[1]
    assert "5 hidden states" in labels[1]  # the running example's T, formatted in
    assert fig.layout.title.text


def test_the_lesson_table_links_written_lessons_only(tmp_path):
    write_lesson(tmp_path, "00_welcome", "Welcome & more", 10)
    text = course_map.lesson_table_html(course_map.lessons(tmp_path))
    assert '<a href="../lessons/00_welcome.html">Welcome &amp; more</a>' in text
    assert text.count("<a href=") == 1 and text.count("(coming)") == 9
    assert text.count("<tr>") == 11  # header and ten lessons


def test_an_empty_map_is_refused():
    with pytest.raises(ValueError, match="expected at least one lesson"):
        course_map.learning_path([])


def test_the_learning_path_carries_a_one_column_layout_for_narrow_screens(tmp_path):
    write_lesson(tmp_path, "00_welcome", "Welcome", 10)
    entries = course_map.lessons(tmp_path)
    fig = course_map.learning_path(entries)
    narrow = fig.layout.meta["narrow_layout"]
    boxes = [s for s in narrow["shapes"] if s["type"] == "rect"]
    assert len(boxes) == len(entries)
    assert {(b["x0"] + b["x1"]) / 2 for b in boxes} == {0}  # one column
    assert narrow["height"] > fig.layout.height  # more rows, each as tall
    assert narrow["xaxis"]["range"] == [-0.5, 0.5]


def test_every_lessons_time_line_is_its_estimate():
    for entry in course_map.lessons():
        estimate = course_map.study_minutes(entry.path)
        assert entry.minutes == estimate, (
            f"{entry.stem}: '**Time:** about {entry.minutes} minutes', but its content reads as about "
            f"{estimate} minutes (course_map.study_minutes): update the Time line"
        )


def test_the_study_estimate_counts_prose_cells_and_exercises(tmp_path):
    words = " ".join(["word"] * course_map.WORDS_PER_MINUTE * 10)  # 10 minutes of prose
    cell = "```{code-cell} ipython3\nprint('not prose ' * 3)\n```\n"
    block = "```python\nnot prose either\n```\n"
    exercise = "```{exercise} Write it\n:label: ex-a\n\nShort.\n```\n"
    path = tmp_path / "01_x.md"
    path.write_text(f"---\nfront: matter words\n---\n\n{words}\n\n{block}")
    assert course_map.study_minutes(path) == 10
    path.write_text(f"{words}\n\n" + cell * 5)
    assert course_map.study_minutes(path) == 10 + 5 * course_map.MINUTES_PER_CODE_CELL
    path.write_text(f"{words}\n\n" + exercise * 3)
    assert course_map.study_minutes(path) == 5 * round((10 + 3 * course_map.MINUTES_PER_EXERCISE) / 5)
    path.write_text("A few words.")
    assert course_map.study_minutes(path) == 5  # never "about 0 minutes"
