"""course_utils.course_map: the introduction's learning path and lesson table, read from the lesson files."""

from __future__ import annotations

import re

import plotly.graph_objects as go
import pytest

from course_utils import course_map
from course_utils.authoring import bench, lessons, minutes


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


def test_a_lab_page_is_its_lessons_lab_not_a_lesson_of_its_own(tmp_path):
    write_lesson(tmp_path, "07_distillation", "Distillation", 60)
    write_lesson(tmp_path, "07_distillation_lab", "Distillation, measured", 40)
    entries = course_map.lessons(tmp_path)
    [seven] = [e for e in entries if e.planned.number == 7]
    assert seven.title == "Distillation" and seven.minutes == 60  # the lab did not take lesson 07's place
    assert seven.lab == tmp_path / "07_distillation_lab.md"
    assert all(e.lab is None for e in entries if e is not seven)
    assert len(entries) == len(course_map.PLAN)  # no lesson number of its own
    assert course_map.is_lab(seven.lab) and not course_map.is_lab(seven.path)
    assert course_map.lab_of(seven.path) == seven.lab and course_map.lesson_of(seven.lab) == seven.path
    assert '<a href="../lessons/07_distillation_lab.html">' in course_map.lesson_table_html(entries)


def test_page_kinds_refuse_the_other_kind_and_lessons_one_number(tmp_path):
    with pytest.raises(ValueError, match="expected a lesson such as lessons/07_distillation.md, got the lab page"):
        course_map.lab_of(tmp_path / "07_distillation_lab.md")
    with pytest.raises(ValueError, match="expected a lab page such as lessons/07_distillation_lab.md, got 07_x.md"):
        course_map.lesson_of(tmp_path / "07_x.md")
    assert course_map.lab_of(tmp_path / "07_x.md") is None  # a lesson without a lab
    write_lesson(tmp_path, "03_a")
    write_lesson(tmp_path, "03_b")
    with pytest.raises(ValueError, match="two lessons numbered 03: 03_a.md and 03_b.md"):
        course_map.lessons(tmp_path)


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


@pytest.mark.parametrize("entry", [e for e in course_map.lessons() if e.path is not None], ids=lambda e: e.stem)
def test_every_lessons_time_line_is_its_content_time_and_at_most_75_minutes(entry):
    estimate = course_map.study_minutes(entry.path)
    assert entry.minutes == estimate, (
        f"{entry.stem}: '**Time:** about {entry.minutes} minutes', but its main path reads as about "
        f"{estimate} minutes (make minutes): update the Time line"
    )
    assert estimate <= minutes.MAIN_PATH_LIMIT, (
        f"{entry.stem}: its main path takes about {estimate} minutes, more than {minutes.MAIN_PATH_LIMIT}: move "
        "material into folded 'Going further' blocks or the lesson's lab page"
    )


@pytest.mark.parametrize("lab", [e.lab for e in course_map.lessons() if e.lab is not None], ids=lambda p: p.stem)
def test_every_lab_pages_time_line_is_its_content_time(lab):
    """A lab page states its time too (07's is the study, on the main path: at most 75 minutes)."""
    _, stated = course_map.read_lesson(lab)
    estimate = course_map.study_minutes(lab)
    assert stated == estimate, f"{lab.stem}: '**Time:** about {stated} minutes', but make minutes reads {estimate}"
    assert estimate <= minutes.MAIN_PATH_LIMIT


def test_the_study_time_is_the_content_models(tmp_path):
    path = tmp_path / "01_x.md"
    path.write_text(" ".join(["word"] * minutes.PROSE_WORDS_PER_MINUTE * 20))
    assert course_map.study_minutes(path) == minutes.content(path).minutes == 20
