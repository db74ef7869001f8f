"""make new-lesson: a scaffolded lesson passes the lesson tests as it is, in the toc, executed.

Scaffolds go into a temporary copy of the files the scaffold reads and writes (``_config.yml``,
``_toc.yml``, the lessons' markdown), never into the repository itself.
"""

from __future__ import annotations

import shutil

import jupytext
import nbformat
import pytest
import yaml

from course_utils import course_map
from course_utils.authoring import lessons, scaffold
from course_utils.checks import not_attempted_message
from tests import test_lessons as lesson_checks
from tests.test_book_pages import bib_keys, cite_keys, glossary_terms, term_targets

NAME = "cross_attention"


def copy_repository(root):
    """The scaffold's inputs, copied under ``root``."""
    (root / "lessons").mkdir(parents=True)
    for name in ["_config.yml", "_toc.yml"]:
        shutil.copy(lessons.ROOT / name, root / name)
    for source in lessons.lesson_sources():
        shutil.copy(source, root / "lessons" / source.name)
    return root


def numbered_chapters(root):
    toc = yaml.safe_load((root / "_toc.yml").read_text())
    return [c["file"] for part in toc["parts"] if part.get("numbered") for c in part["chapters"]]


@pytest.fixture(scope="module")
def scaffolded(tmp_path_factory):
    """One lesson scaffolded and executed into a copy of the repository (a kernel run: done once)."""
    root = copy_repository(tmp_path_factory.mktemp("repo"))
    before = numbered_chapters(root)
    result = scaffold.scaffold(NAME, root)
    return root, before, result


# ---------------------------------------------------------------------------------- the scaffold


def test_the_lesson_gets_the_next_number_and_lands_last_in_the_lessons_part(scaffolded):
    root, before, result = scaffolded
    number = len(lessons.lesson_sources())  # lessons are numbered from 00
    assert result.markdown == root / "lessons" / f"{number:02d}_{NAME}.md"
    assert result.markdown.is_file() and result.notebook.is_file() and result.executed
    assert numbered_chapters(root) == before + [f"lessons/{number:02d}_{NAME}"]
    assert [int(f.split("/")[1][:2]) for f in numbered_chapters(root)] == list(range(1, number + 1))


@pytest.mark.parametrize(
    "check",
    [
        lesson_checks.test_lesson_is_a_paired_myst_notebook_with_a_python_kernel,
        lesson_checks.test_md_and_ipynb_hold_the_same_cells,
        lesson_checks.test_committed_notebook_has_outputs_and_no_errors,
        lesson_checks.test_lesson_follows_the_template,
        lesson_checks.test_code_lines_fit_the_page,
        lesson_checks.test_no_nbval_comment_and_every_check_cell_labelled_and_hidden,
        lesson_checks.test_every_check_cell_opens_folded_in_colab_and_jupyterlab,
        lesson_checks.test_a_count_of_questions_is_the_quizs_and_no_page_counts_the_lessons,
    ],
    ids=lambda f: f.__name__,
)
def test_the_scaffold_passes_the_lesson_tests(scaffolded, check):
    check(scaffolded[2].markdown)


def test_the_scaffolds_check_cell_is_written_folded_as_sync_would_write_it(scaffolded):
    """The template's check cell is already what `lessons sync` makes of one: sync changes nothing."""
    text = scaffolded[2].text
    assert lessons.check_cell_problems(jupytext.reads(text, fmt="md:myst").cells) == []
    assert lessons.fold_checks_in_text(text) == text
    assert lesson_checks.count_check_cells(scaffolded[2].notebook) == 1


def test_the_scaffolds_time_line_is_its_own_estimate(scaffolded):
    markdown = scaffolded[2].markdown
    assert course_map.read_lesson(markdown)[1] == course_map.study_minutes(markdown)


@pytest.mark.parametrize("suffix", [".md", ".ipynb"])
def test_the_scaffold_has_the_setup_cell_and_the_colab_badge(scaffolded, suffix):
    source = scaffolded[2].markdown
    lesson_checks.test_first_code_cell_is_the_setup_cell(source, suffix)
    notebook = jupytext.read(source.with_suffix(suffix))
    markdown = "\n".join(c.source for c in notebook.cells if c.cell_type == "markdown")
    expected = lessons.repository().colab_url(f"lessons/{source.stem}.ipynb")
    assert lessons.BADGE_LINE.findall(markdown) == [(lessons.BADGE_IMAGE, expected)]


def test_the_exercise_stub_meets_its_checker(scaffolded):
    notebook = nbformat.read(scaffolded[2].notebook, as_version=4)
    printed = [o.get("text", "") for c in notebook.cells if c.cell_type == "code" for o in c.outputs]
    assert any(not_attempted_message("softmax") in text for text in printed)
    text = scaffolded[2].text
    assert "raise NotImplementedError" in text and "check_softmax(softmax)" in text
    assert "````{solution} ex-cross-attention-softmax" in text


def test_the_scaffold_runs_the_same_twice(scaffolded):
    """As nbval checks the committed lessons: a fresh run gives the committed outputs."""
    committed = nbformat.read(scaffolded[2].notebook, as_version=4)
    fresh, _ = lessons.run_lesson(scaffolded[2].markdown)
    assert [c.get("outputs") for c in fresh.cells] == [c.get("outputs") for c in committed.cells]


def test_the_scaffold_links_only_existing_terms_citations_and_labels(scaffolded):
    text = scaffolded[2].text
    assert term_targets(text) and {t.lower() for t in term_targets(text)} <= glossary_terms()
    assert cite_keys(text) and set(cite_keys(text)) <= set(bib_keys())
    label = "ex-cross-attention-softmax"
    assert not any(label in p.read_text() for p in lessons.lesson_sources()), "exercise labels must be unique"


def test_the_scaffold_carries_the_marker_and_todos(scaffolded):
    text = scaffolded[2].text
    assert scaffold.MARKER in text and text.count("TODO") >= 5
    assert f"{{doc}}`{lessons.lesson_sources()[-1].stem}`" in text, "Before you start links the previous lesson"


# ---------------------------------------------------------------------------------- names, dry run, removal


@pytest.mark.parametrize("name", ["", "Cross", "1st", "cross-attention", "cross__attention", "_x", "x_", "a" * 41, 7])
def test_bad_names_are_refused(tmp_path, name):
    with pytest.raises(ValueError, match="expected NAME to be a lower-case slug"):
        scaffold.validate_name(name, copy_repository(tmp_path))


def test_an_existing_lesson_name_is_refused(tmp_path):
    existing = lessons.lesson_sources()[-1]
    with pytest.raises(
        ValueError, match=f"a lesson named '{existing.stem[3:]}' exists already: lessons/{existing.name}"
    ):
        scaffold.validate_name(existing.stem[3:], copy_repository(tmp_path))


@pytest.mark.parametrize("title", ["", "  ", "04 Attention", "two\nlines"])
def test_bad_titles_are_refused(tmp_path, title):
    with pytest.raises(ValueError, match="expected a one-line title"):
        scaffold.scaffold(NAME, copy_repository(tmp_path), title=title, execute=False)


def test_title_of_a_slug():
    assert scaffold.title_of("cross_attention") == "Cross attention"
    assert scaffold.title_of("gpt2") == "Gpt2"


def test_next_number_counts_from_zero(tmp_path):
    (tmp_path / "lessons").mkdir()
    assert scaffold.next_number(tmp_path) == 0
    assert scaffold.next_number(lessons.ROOT) == int(lessons.lesson_sources()[-1].stem[:2]) + 1


def test_a_dry_run_writes_nothing(tmp_path):
    root = copy_repository(tmp_path)
    before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    result = scaffold.scaffold(NAME, root, title="Cross-attention", dry_run=True)
    assert {p: p.read_bytes() for p in root.rglob("*") if p.is_file()} == before
    assert not result.executed and "# Cross-attention\n" in result.text
    assert result.toc_line == f"- file: lessons/{result.markdown.stem}"


def test_toc_edits_keep_the_comments_and_undo_exactly():
    text = (lessons.ROOT / "_toc.yml").read_text()
    new, line = scaffold.toc_with_lesson(text, "99_extra")
    assert line == "- file: lessons/99_extra"
    assert [l for l in text.splitlines() if l.startswith("#")] == [l for l in new.splitlines() if l.startswith("#")]
    assert scaffold.toc_without_lesson(new, "99_extra") == text
    with pytest.raises(ValueError, match="expected one line '- file: lessons/99_extra' in _toc.yml, found 0"):
        scaffold.toc_without_lesson(text, "99_extra")


def test_a_new_lesson_goes_after_the_last_lesson_and_its_lab_page():
    text = (lessons.ROOT / "_toc.yml").read_text()
    last = lessons.lesson_sources()[-1].stem
    with_lab = text.replace(f"- file: lessons/{last}\n", f"- file: lessons/{last}\n        sections:\n"
                            f"          - file: lessons/{last}_lab\n", 1)
    new, line = scaffold.toc_with_lesson(with_lab, "99_extra")
    chapters = [p for p in yaml.safe_load(new)["parts"] if p.get("numbered")][0]["chapters"]
    assert chapters[-1] == {"file": "lessons/99_extra"} and line == "- file: lessons/99_extra"
    assert chapters[-2] == {"file": f"lessons/{last}", "sections": [{"file": f"lessons/{last}_lab"}]}


def test_a_toc_without_a_numbered_lessons_part_is_refused():
    with pytest.raises(ValueError, match="expected one numbered part captioned 'Lessons' in _toc.yml, found 0"):
        scaffold.toc_with_lesson("format: jb-book\nroot: intro\nparts:\n  - caption: Other\n    chapters: []\n", "01_x")


def test_remove_takes_a_scaffold_back_out(tmp_path):
    root = copy_repository(tmp_path)
    toc = (root / "_toc.yml").read_text()
    result = scaffold.scaffold(NAME, root, execute=False)
    with pytest.raises(ValueError, match="only the last lesson can be removed"):
        scaffold.remove(lessons.lesson_sources()[-1].stem, root)
    assert scaffold.remove(result.markdown.stem, root) == [result.markdown]
    assert (root / "_toc.yml").read_text() == toc and not result.markdown.exists()


def test_remove_refuses_an_edited_lesson_unless_forced(tmp_path):
    root = copy_repository(tmp_path)
    result = scaffold.scaffold(NAME, root, execute=False)
    result.markdown.write_text(result.text.replace(scaffold.MARKER + "\n", ""))
    with pytest.raises(ValueError, match="no longer carries the scaffold's marker line"):
        scaffold.remove(result.markdown.stem, root)
    assert scaffold.remove(result.markdown.stem, root, force=True) == [result.markdown]


def test_the_command_line_reports_errors_and_dry_runs(capsys):
    assert scaffold.main(["Bad-Name"]) == 2
    assert "error: expected NAME to be a lower-case slug" in capsys.readouterr().err
    assert scaffold.main([NAME, "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"would write lessons/{scaffold.next_number():02d}_{NAME}.md") and scaffold.MARKER in out


TRICKY_TITLE = 'Why `softmax` needs a "temperature" at $5 (it\'s $(whoami))'


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_new_lesson_passes_name_and_title_through_the_environment_unchanged():
    """Backquotes, quotes and dollars in TITLE reach the scaffold as typed; nothing runs, nothing is lost."""
    import subprocess

    done = subprocess.run(["make", "--no-print-directory", "new-lesson", f"NAME={NAME}", f"TITLE={TRICKY_TITLE}",
                           "SCAFFOLD_FLAGS=--dry-run"], cwd=lessons.ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert f"\n# {TRICKY_TITLE}\n" in done.stdout
    assert "command not found" not in done.stderr


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_a_quote_in_name_cannot_turn_a_dry_run_into_a_real_scaffold():
    import subprocess

    before = sorted(p.name for p in (lessons.ROOT / "lessons").iterdir())
    done = subprocess.run(["make", "--no-print-directory", "new-lesson", f'NAME={NAME}" --title "x',
                           "SCAFFOLD_FLAGS=--dry-run"], cwd=lessons.ROOT, capture_output=True, text=True)
    assert done.returncode != 0 and "expected NAME to be a lower-case slug" in done.stderr
    assert sorted(p.name for p in (lessons.ROOT / "lessons").iterdir()) == before


def test_the_scaffold_reads_name_and_title_from_the_environment(monkeypatch, capsys):
    monkeypatch.setenv("LESSON_NAME", NAME)
    monkeypatch.setenv("LESSON_TITLE", TRICKY_TITLE)
    assert scaffold.main(["--from-environment", "--dry-run"]) == 0
    assert f"\n# {TRICKY_TITLE}\n" in capsys.readouterr().out
