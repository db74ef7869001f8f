"""Handouts for instructors: each lesson's notebook without its solutions, ready to assign.

``python -m course_utils.authoring.handouts [--out DIR] [LESSON ...]`` (``make handouts``) reads
each committed ``lessons/NN_name.ipynb`` and writes ``_build/handouts/NN_name.ipynb`` with

- every ``{solution}`` block removed (a lesson writes each solution as a MyST ``solution``
  directive, shown on the site in a dropdown, right after its exercise's stub and checker);
- every other *answer* removed: a directive with the class ``answer`` (``:class: dropdown answer``),
  the folded answer to a "predict, then run" question;
- everything else kept as committed: the exercise statements, the stubs that
  ``raise NotImplementedError``, the checker cells (whose committed output says "not attempted
  yet"), the folded "Going further" blocks (optional reading, not answers), the lesson's text,
  code and outputs, and the check cells as the lesson has them: Colab forms titled ``check: ...``,
  collapsed in JupyterLab (their cell metadata, kept).

Handouts are made for lessons, which hold the exercises; lab pages have none.

A markdown cell left empty is dropped. The handouts are written, never committed.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from . import require_checkout
from .lessons import LESSONS_DIR, ROOT, lesson_sources  # noqa: F401  (LESSONS_DIR: the tests' folder)

OUT_DIR = ROOT / "_build" / "handouts"
# A MyST directive fenced by 3 or more backticks or colons: ```{name} ... ``` or :::{name} ... :::
DIRECTIVE = re.compile(r"^(?P<fence>`{3,}|:{3,})\{(?P<name>[\w:-]+)\}[^\n]*\n(?P<body>.*?)^(?P=fence)[ \t]*$\n?",
                       re.MULTILINE | re.DOTALL)


def is_reveal(name: str, body: str) -> bool:
    """A solution, or an answer (a directive of class ``answer``): what a handout must not give away."""
    options = re.findall(r"^:(\w+):[ \t]*(.*)$", body.split("\n\n", 1)[0], re.MULTILINE)
    return name == "solution" or any(key == "class" and "answer" in value.split() for key, value in options)


def strip_reveals(markdown: str) -> tuple[str, list[str]]:
    """The markdown without its reveals, and the reveals removed (their whole text)."""
    removed: list[str] = []

    def drop(match: re.Match) -> str:
        if is_reveal(match["name"], match["body"]):
            removed.append(match[0])
            return ""
        return match[0]

    return DIRECTIVE.sub(drop, markdown), removed


def solution_code(markdown: str) -> list[str]:
    """The code blocks (```python ... ```) inside the solutions of a markdown text."""
    blocks = []
    for match in DIRECTIVE.finditer(markdown):
        if match["name"] == "solution":
            blocks += re.findall(r"^```(?:python|ipython3)?[ \t]*\n(.*?)^```[ \t]*$", match["body"], re.MULTILINE | re.DOTALL)
    return blocks


def handout(notebook):
    """A copy of ``notebook`` (an ``nbformat`` notebook) without its reveals."""
    import copy

    result = copy.deepcopy(notebook)
    cells = []
    for cell in result.cells:
        if cell.cell_type == "markdown":
            text, removed = strip_reveals(cell.source)
            if removed:
                if not text.strip():
                    continue
                cell.source = text.strip("\n")
        cells.append(cell)
    result.cells = cells
    return result


def lesson_notebooks(names: list[str] | None = None) -> list[Path]:
    """The committed notebooks of the lessons named (``01_rnn_recap`` or its path), else of all lessons
    (lab pages, which hold no exercises, are not handed out)."""
    every = [p.with_suffix(".ipynb") for p in lesson_sources()]
    if not names:
        return every
    chosen = []
    for name in names:
        stem = Path(name).stem
        match = [p for p in every if p.stem == stem]
        if not match:
            raise SystemExit(f"no lesson {name!r}: expected one of {[p.stem for p in every]}")
        chosen += match
    return chosen


def write_handouts(names: list[str] | None = None, out_dir: Path = OUT_DIR) -> list[Path]:
    """Write the handout of each lesson into ``out_dir``; returns their paths."""
    import nbformat

    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for path in lesson_notebooks(names):
        notebook = nbformat.read(path, as_version=4)
        target = out_dir / path.name
        nbformat.write(handout(notebook), target)
        written.append(target)
    return written


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("lessons", nargs="*", help="lesson names (default: every lesson)")
    parser.add_argument("--out", type=Path, default=OUT_DIR, help=f"output folder (default: {OUT_DIR})")
    args = parser.parse_args(argv)
    require_checkout()
    for path in write_handouts(args.lessons, args.out):
        print(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path)


if __name__ == "__main__":
    main(sys.argv[1:])
