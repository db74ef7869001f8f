"""Handouts: each lesson's notebook without its solutions, that runs up to its first exercise."""

from __future__ import annotations

import re

import nbformat
import pytest

from course_utils.authoring import handouts

LESSONS = [p.stem for p in handouts.lesson_notebooks()]
STUB = "raise NotImplementedError"

MARKDOWN = """Intro text.

```{exercise} Write it
:label: ex-a

Do the thing.
```

````{solution} ex-a
:class: dropdown

```python
def thing():
    return 42
```
````

Between.

:::{solution} ex-b
Colon-fenced answer.
:::

```{admonition} The answer, folded
:class: tip dropdown answer

It is 42.
```

```{admonition} Going further: where 42 comes from
:class: dropdown

Kept: a folded going-further block.
```

```{note}
Kept: a note shown open.
```
"""


def test_solutions_and_answers_are_removed_and_going_further_blocks_kept():
    text, removed = handouts.strip_reveals(MARKDOWN)
    assert len(removed) == 3
    assert "return 42" not in text and "Colon-fenced" not in text and "It is 42" not in text
    for kept in ("Intro text.", "{exercise} Write it", "Do the thing.", "Between.", "Kept: a note shown open.",
                 "Going further: where 42 comes from", "Kept: a folded going-further block."):
        assert kept in text
    assert handouts.solution_code(MARKDOWN) == ["def thing():\n    return 42\n"]


def test_a_cell_left_empty_is_dropped_and_code_cells_are_kept():
    notebook = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("````{solution} ex-a\n:class: dropdown\n\nx\n````"),
        nbformat.v4.new_code_cell(f"def f():\n    {STUB}"),
        nbformat.v4.new_markdown_cell("Text."),
    ])
    result = handouts.handout(notebook)
    assert [c.cell_type for c in result.cells] == ["code", "markdown"]
    assert len(notebook.cells) == 3, "the lesson's notebook is not changed"


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    out = tmp_path_factory.mktemp("handouts")
    return {p.stem: p for p in handouts.write_handouts(out_dir=out)}


def _text(notebook) -> str:
    """Every cell's source and every output's text."""
    parts = []
    for cell in notebook.cells:
        parts.append(cell.source)
        for output in cell.get("outputs", []):
            parts.append(str(output.get("text", "")) + str(output.get("data", {})))
    return "\n".join(parts)


@pytest.mark.parametrize("lesson", LESSONS)
def test_no_solution_code_remains_and_every_stub_does(written, lesson):
    original = nbformat.read(handouts.LESSONS_DIR / f"{lesson}.ipynb", as_version=4)
    markdown = "\n".join(c.source for c in original.cells if c.cell_type == "markdown")
    solutions = handouts.solution_code(markdown)
    assert solutions, f"{lesson}: no solution found; has the lessons' markup changed?"
    # a solution's lines that the lesson's code cells also hold (a stub's `def` line, `else:`) may stay
    in_code = {line.strip() for c in original.cells if c.cell_type == "code" for line in c.source.splitlines()}
    handout = nbformat.read(written[lesson], as_version=4)
    text = _text(handout)
    lines = {line.strip() for line in text.splitlines()}
    assert "{solution}" not in text
    for code in solutions:
        own = [line.strip() for line in code.splitlines() if line.strip() and line.strip() not in in_code]
        assert own, f"{lesson}: a solution with no line of its own: {code!r}"
        left = [line for line in own if line in lines]
        assert not left, f"{lesson}: solution code left in the handout: {left}"
    stubs = sum(STUB in c.source for c in original.cells if c.cell_type == "code")
    assert sum(STUB in c.source for c in handout.cells if c.cell_type == "code") == stubs
    assert text.count("{exercise}") == markdown.count("{exercise}")


def _code_cells(notebook) -> list[tuple[str, dict]]:
    return [(c.source, dict(c.metadata)) for c in notebook.cells if c.cell_type == "code"]


@pytest.mark.parametrize("lesson", LESSONS)
def test_the_handout_holds_every_code_cell_of_the_lesson_unchanged(written, lesson):
    """A handout runs as its lesson does: its code cells are the lesson's, in order, sources and
    metadata unchanged (only markdown loses its reveals). `make notebooks` runs every lesson's code
    cells (nbval), so this and the run below prove that every handout runs up to each exercise; a
    handout that dropped or changed a code cell (a stub, a cell the next one needs) fails here."""
    original = nbformat.read(handouts.LESSONS_DIR / f"{lesson}.ipynb", as_version=4)
    handout = nbformat.read(written[lesson], as_version=4)
    assert _code_cells(handout) == _code_cells(original), f"{lesson}: the handout's code cells differ from the lesson's"


# One handout run for real, as a learner's kernel runs it: the written file opens, its cells run in
# the lessons' folder and its first checker, run on the stub, says so. The smallest lesson with an
# exercise; the others' code cells are their lessons' (above), which nbval runs.
RUN_LESSON = "03_positional_encoding"


def test_a_handout_runs_up_to_its_first_exercise(written):
    from nbclient import NotebookClient

    notebook = nbformat.read(written[RUN_LESSON], as_version=4)
    code = [c for c in notebook.cells if c.cell_type == "code"]
    first_stub = next(i for i, c in enumerate(code) if STUB in c.source)
    # the cells before the first exercise, its stub, and the checker cell after it
    notebook.cells = code[: first_stub + 2]
    NotebookClient(notebook, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(handouts.LESSONS_DIR)}}).execute()
    checker = notebook.cells[-1]
    said = "".join(o.get("text", "") for o in checker.outputs)
    assert "not attempted yet" in said, f"{RUN_LESSON}: the first checker, run on the stub, said {said!r}"


GOING_FURTHER = re.compile(r"^`{3,}\{admonition\} (Going further[^\n]*)", re.MULTILINE)


def test_every_going_further_block_of_the_lessons_stays_in_its_handout(written):
    """A lesson's folded "Going further" blocks are optional reading, not answers: the handout
    keeps each one (and, as the test above shows, drops every solution)."""
    kept = 0
    for lesson in LESSONS:
        original = nbformat.read(handouts.LESSONS_DIR / f"{lesson}.ipynb", as_version=4)
        titles = GOING_FURTHER.findall("\n".join(c.source for c in original.cells if c.cell_type == "markdown"))
        text = _text(nbformat.read(written[lesson], as_version=4))
        missing = [title for title in titles if title not in text]
        assert not missing, f"{lesson}: the handout dropped its going-further blocks {missing}"
        kept += len(titles)
    assert kept >= 5, f"expected the lessons to fold their optional material in 'Going further' blocks, found {kept}"


@pytest.mark.parametrize("lesson", LESSONS)
def test_a_handouts_check_cells_open_folded_as_in_the_lesson(lesson, tmp_path):
    """A handout keeps each check cell's metadata: in Colab a titled form, collapsed in JupyterLab."""
    from course_utils.authoring import lessons
    from tests.test_lessons import colab_view_problems

    [written] = handouts.write_handouts([lesson], tmp_path)
    checks = [c for c in nbformat.read(written, as_version=4).cells if lessons.is_check_cell(c)]
    assert len(checks) == sum(map(lessons.is_check_cell, nbformat.read(
        handouts.LESSONS_DIR / f"{lesson}.ipynb", as_version=4).cells))
    assert colab_view_problems(written) == []
