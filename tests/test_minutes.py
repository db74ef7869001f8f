"""course_utils.authoring.minutes: the content time model and the machinery share (issue 39)."""

from __future__ import annotations

import nbformat
import pytest

from course_utils.authoring import minutes
from course_utils.authoring.lessons import page_sources

FRONT = "---\njupytext:\n  formats: ipynb,md:myst\nkernelspec:\n  name: python3\n  display_name: Python 3\n---\n\n"


def words(n: int, word: str = "word") -> str:
    return " ".join([word] * n)


def page(tmp_path, markdown: str, outputs: dict[str, list] | None = None, name: str = "01_x"):
    """A page's .md and, when outputs are given, its executed .ipynb (outputs by code cell source)."""
    import jupytext

    path = tmp_path / f"{name}.md"
    path.write_text(FRONT + markdown, encoding="utf-8")
    if outputs is not None:
        notebook = jupytext.read(path)
        for cell in notebook.cells:
            if cell.cell_type == "code":
                cell.outputs = outputs.get(cell.source, [])
                cell.execution_count = 1
        nbformat.write(notebook, path.with_suffix(".ipynb"))
    return path


def code_cell(source: str, tags: list[str] | None = None) -> str:
    head = "```{code-cell} ipython3\n" + (f":tags: [{', '.join(tags)}]\n\n" if tags else "")
    return f"{head}{source}\n```\n\n"


def test_prose_is_read_at_120_words_a_minute_and_rounded_up_to_five(tmp_path):
    row = minutes.content(page(tmp_path, words(120 * 10) + "\n"))
    assert (row.prose_words, row.code_words, row.minutes) == (1200, 0, 10)
    assert minutes.content(page(tmp_path, words(120 * 10 + 12) + "\n")).minutes == 15  # 10.1 minutes
    assert minutes.content(page(tmp_path, words(120 * 13) + "\n")).minutes == 15
    assert minutes.content(page(tmp_path, "A few words.\n")).minutes == 5  # never "about 0 minutes"


def test_visible_code_counts_at_80_words_a_minute_and_hidden_code_not_at_all(tmp_path):
    source = "\n".join(["alpha = beta + gamma"] * 100)  # 3 words a line
    shown = minutes.content(page(tmp_path, code_cell(source)))
    assert shown.code_words == 300 and shown.exact_minutes == pytest.approx(300 / 80)
    for tag in ("remove-input", "remove-cell", "hide-input"):
        assert minutes.content(page(tmp_path, code_cell(source, [tag]))).code_words == 0, tag
    block = minutes.content(page(tmp_path, f"Some prose here.\n\n```python\n{source}\n```\n"))
    assert (block.code_words, block.prose_words) == (300, 3)


def test_printed_lines_and_figures_come_from_the_executed_notebook(tmp_path):
    stream = nbformat.v4.new_output("stream", name="stdout", text="".join(f"line {i}\n" for i in range(12)))
    figure = nbformat.v4.new_output("display_data", data={"application/vnd.plotly.v1+json": {}, "text/html": "<div>"})
    cells = code_cell("print(x)") + code_cell("fig") + code_cell("check()", ["remove-output"])
    outputs = {"print(x)": [stream], "fig": [figure], "check()": [stream]}
    row = minutes.content(page(tmp_path, cells, outputs))
    assert (row.output_lines, row.figures) == (12, 1)  # the removed output is not read
    assert row.exact_minutes == pytest.approx(4 / 80 + (12 * 5 + 45) / 60)  # print, x, fig, check
    assert minutes.content(page(tmp_path, cells, name="02_y")).output_lines == 0  # not executed: no outputs


def test_exercises_count_eight_minutes_and_solutions_and_folded_blocks_nothing(tmp_path):
    exercise = "````{exercise} Write it\n:label: ex-a\n\nWrite a function.\n````\n\n"
    solution = f"````{{solution}} ex-a\n:class: dropdown\n\n{words(600)}\n\n```python\n{words(400)}\n```\n````\n\n"
    further = f"```{{admonition}} Going further: history\n:class: dropdown\n\n{words(1200)}\n```\n\n"
    note = f"```{{note}}\n{words(120)}\n```\n\n"
    row = minutes.content(page(tmp_path, exercise + solution + further + note))
    assert row.exercises == 1 and row.code_words == 0
    assert row.prose_words == len("Write it Write a function.".split()) + 120  # the note is on the main path
    assert row.exact_minutes == pytest.approx(8 + row.prose_words / 120)


def test_machinery_sentences_are_found_and_teaching_ones_are_not():
    machinery = [
        "On another processor the last bits differ, so nbval compares with a tolerance.",
        "The cell asserts the claim instead of printing the timings.",
        "Five seeds give a spread of half a point, and a paired t-test calls it real.",
        "Run make assets to rebuild the models on two threads.",
        "AVX-512 kernels round differently from AVX2 ones.",
    ]
    teaching = [
        "The softmax turns the scores into weights that sum to one.",
        "The running example threads through every lesson of the course.",
        "Each head attends to a different subspace of the model width.",
    ]
    assert all(minutes.is_machinery(s) for s in machinery)
    assert not any(minutes.is_machinery(s) for s in teaching)
    assert minutes.is_machinery("Then run `make lab` to open JupyterLab.")  # machinery in a lesson...
    assert not minutes.is_machinery("Then run `make lab` to open JupyterLab.", onboarding=True)  # ...onboarding in 00


def test_the_share_counts_sentences_of_the_prose_only(tmp_path):
    prose = "Attention mixes the values by weight. The weights sum to one. The tests use a tolerance of one bit.\n"
    row = minutes.content(page(tmp_path, prose + code_cell("assert tolerance_of_tests == 1")))
    assert row.sentences == 3 and len(row.machinery_sentences) == 1
    assert row.machinery_share == pytest.approx(1 / 3)


def test_a_wrong_path_is_refused_with_what_was_expected(tmp_path):
    with pytest.raises(FileNotFoundError, match="expected a lesson's MyST markdown file"):
        minutes.content(tmp_path / "missing.md")
    with pytest.raises(FileNotFoundError, match="got .*01_x.ipynb"):
        minutes.content(tmp_path / "01_x.ipynb")


def test_the_command_prints_a_row_per_page_and_the_total(capsys):
    assert minutes.main([]) == 0
    printed = capsys.readouterr().out
    for source in page_sources():
        assert f"| {source.stem} |" in printed
    assert "| total |" in printed and "120 words/min" in printed


def test_run_statistics_are_a_labs_subject_and_a_lessons_machinery():
    sentence = "Five seeds cannot tell the two arms apart: the spread between seeds is wide."
    assert minutes.is_machinery(sentence) and not minutes.is_machinery(sentence, lab=True)
    assert minutes.is_machinery("Rebuilt by make assets on another processor.", lab=True)


def test_every_page_keeps_its_machinery_within_the_limit():
    """Issue 39's 5% for the lessons, issue 51's for the lab pages (run statistics excepted)."""
    from course_utils.authoring.lessons import page_sources

    over = {path.stem: f"{row.machinery_share:.0%}" for path in page_sources()
            for row in [minutes.content(path)] if row.machinery_share > minutes.MACHINERY_LIMIT}
    assert not over, over
