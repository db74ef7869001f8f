"""``make new-lesson NAME=slug``: a new lesson from the course template, paired, listed and executed.

``python -m course_utils.authoring.scaffold my_topic`` writes ``lessons/NN_my_topic.md`` (NN is the
next lesson number) with everything the tests ask of a lesson: Jupytext front matter and kernel,
one title, the Colab badge and the set-up cell for the repository of ``_config.yml``, "What you
will learn", "Before you start", "**Time:**", a section with a code cell and a check cell (folded
in Colab and JupyterLab, hidden on the site), an exercise with its stub and its checker, "Key
takeaways" and the references. It adds the lesson to the numbered "Lessons" part of ``_toc.yml``,
after the last lesson, then executes it into its paired ``.ipynb``, so the scaffold passes ``make
test`` as it is. Every ``TODO`` marks what the author writes next.

``--dry-run`` prints what would be written and changes nothing; ``--remove NN_my_topic`` takes a
scaffolded lesson back out (its ``.md``, its ``.ipynb`` and its ``_toc.yml`` line), as long as it
is the last lesson and still carries the scaffold's marker line (``--force`` removes it anyway).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from . import lessons, require_checkout
from .minutes import content_of

NAME = re.compile(r"^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$")
MAX_NAME_LENGTH = 40
MARKER = "% Scaffolded by `make new-lesson`: replace every TODO, then delete this line."
LESSONS_CAPTION = "Lessons"

FRONT_MATTER = """\
---
jupytext:
  formats: ipynb,md:myst
  text_representation:
    extension: .md
    format_name: myst
    format_version: 0.13
    jupytext_version: 1.19.6
kernelspec:
  display_name: Python 3 (ipykernel)
  language: python
  name: python3
---
"""

BODY = """\
{marker}

TODO: one paragraph that says what this lesson adds to lesson {previous_number:02d}, and why a
learner needs it now. Link each glossary term on its first use, like {{term}}`softmax`.

**What you will learn**

- TODO: a first objective, as something the learner will be able to do;
- TODO: a second objective;
- TODO: a third objective.

**Before you start:** {{doc}}`{previous}` (TODO: what it brings to this lesson). **Time:** about 30
minutes.

## The running example

TODO: explain the idea in a few sentences, then show it on the running example,
`[CLS] I love NLP [SEP]`, in a small cell.

```{{code-cell}} ipython3
from course_utils.data import running_example

example = running_example()
print("tokens:", " ".join(example.tokens))
print("embeddings (T, D):", example.embeddings.shape)
```

TODO: guard each claim your prose makes about a result with a check cell like the next one: the
site hides it, and Colab and JupyterLab show it folded under its title. Write its first line,
`# check: what it checks`, and its asserts; `make lessons` turns it into this folded form.

```{{code-cell}} ipython3
---
cellView: form
jupyter:
  source_hidden: true
tags: [remove-cell]
---
# @title check: the running example is five tokens of four numbers each
assert example.embeddings.shape == (5, 4)
```

## An exercise

TODO: replace this exercise with the lesson's own. A code exercise is a stub that raises
`NotImplementedError`, then a cell that calls its checker: write the checker in
`course_utils/checks/<topic>.py`, as `course_utils/checks/rnn.py` does for lesson 01.

```{{exercise}} Write a stable softmax
:label: ex-{label}-softmax

Complete `softmax` so that it returns $\\exp(x) / \\sum \\exp(x)$ along `axis`, for any shape,
without overflowing on large scores. Then run the next cell: the checker says what is wrong, or
prints one line when every case passes.
```

```{{code-cell}} ipython3
def softmax(x, axis=-1):
    \"\"\"exp(x) / sum(exp(x)) along axis, stable; any shape in, same shape out.\"\"\"
    raise NotImplementedError  # your code here
```

```{{code-cell}} ipython3
from course_utils.checks import check_softmax

check_softmax(softmax)
```

````{{solution}} ex-{label}-softmax
:class: dropdown

Subtract the maximum before the exponential (it cancels in the ratio), and keep the summed axis:

```python
import numpy as np


def softmax(x, axis=-1):
    x = np.asarray(x)
    exps = np.exp(x - x.max(axis=axis, keepdims=True))
    return exps / exps.sum(axis=axis, keepdims=True)
```
````

## Key takeaways

- TODO: the first thing to remember, with the number that shows it;
- TODO: the second.

References: {{cite}}`vaswani2017attention` (TODO: the works this lesson cites); the full list is
on the {{doc}}`../book/references` page. Next, TODO: what the next lesson adds.
"""


@dataclass(frozen=True)
class Scaffold:
    """What :func:`scaffold` wrote (or, in a dry run, would write)."""

    markdown: Path  # lessons/NN_name.md
    notebook: Path  # lessons/NN_name.ipynb
    toc_line: str  # the line added to _toc.yml
    text: str  # the lesson's markdown
    executed: bool  # whether the .ipynb was written


def title_of(name: str) -> str:
    """The default title of lesson ``name``: ``"my_topic"`` -> ``"My topic"``."""
    words = name.split("_")
    return " ".join([words[0].capitalize(), *words[1:]])


def validate_name(name: str, root: Path = lessons.ROOT) -> str:
    """``name`` if it is a new lesson slug (lower case, digits, single underscores), else ``ValueError``."""
    if not isinstance(name, str) or not NAME.fullmatch(name) or len(name) > MAX_NAME_LENGTH:
        raise ValueError(
            f"expected NAME to be a lower-case slug of at most {MAX_NAME_LENGTH} characters: a letter, then "
            f"letters, digits and single underscores, such as 'cross_attention'; got {name!r}"
        )
    existing = sorted((root / "lessons").glob(f"[0-9][0-9]_{name}.*"), key=lambda p: (p.suffix != ".md", p.name))
    if existing:
        raise ValueError(f"a lesson named {name!r} exists already: lessons/{existing[0].name}")
    return name


def next_number(root: Path = lessons.ROOT) -> int:
    """The number of the next lesson: one more than the highest ``lessons/NN_*.md``."""
    numbers = [int(p.stem[:2]) for p in lessons.lesson_sources(root / "lessons")]
    number = max(numbers, default=-1) + 1
    if number > 99:
        raise ValueError("the course has lessons up to 99 already: lesson numbers have two digits")
    return number


def lesson_text(number: int, name: str, title: str, repo: lessons.Repository, previous: str) -> str:
    """The markdown of a new lesson ``NN_name`` from the template; ``previous`` is the stem of the lesson before."""
    stem = f"{number:02d}_{name}"
    badge = lessons.badge_markdown(repo, f"lessons/{stem}.ipynb")
    setup = lessons.setup_cell(repo)
    label = name.replace("_", "-")  # exercise labels: lower case and hyphens
    body = BODY.format(marker=MARKER, label=label, previous=previous, previous_number=number - 1)
    text = f"{FRONT_MATTER}\n# {title}\n\n{badge}\n\n```{{code-cell}} ipython3\n{setup}\n```\n\n{body}"
    # the Time line is the template's own content time (make minutes); it grows with the lesson
    # (tests/test_course_map.py). The template's few printed lines do not move it by 5 minutes.
    return text.replace("**Time:** about 30", f"**Time:** about {content_of(text, page=stem).minutes}", 1)


def _lessons_part(toc: dict) -> dict:
    parts = [p for p in toc.get("parts", []) if p.get("caption") == LESSONS_CAPTION and p.get("numbered")]
    if len(parts) != 1:
        raise ValueError(f"expected one numbered part captioned {LESSONS_CAPTION!r} in _toc.yml, found {len(parts)}")
    return parts[0]


def toc_with_lesson(text: str, stem: str) -> tuple[str, str]:
    """``_toc.yml``'s text with ``lessons/<stem>`` added after the last chapter of the numbered
    "Lessons" part (comments and layout kept); returns ``(new text, added line)``."""
    import yaml

    part = _lessons_part(yaml.safe_load(text))
    chapters = part.get("chapters") or []
    if not chapters:
        raise ValueError(f"expected the {LESSONS_CAPTION!r} part of _toc.yml to list its lessons already")
    last = chapters[-1]["file"]
    lines = text.splitlines(keepends=True)
    [index] = [i for i, line in enumerate(lines) if re.fullmatch(rf"\s*- file: {re.escape(last)}\s*", line)]
    indent = lines[index][: len(lines[index]) - len(lines[index].lstrip())]
    added = f"{indent}- file: lessons/{stem}"
    end = index + 1  # after the last chapter's own lines (its sections: a lab page), if any
    while end < len(lines) and lines[end].strip() and len(lines[end]) - len(lines[end].lstrip()) > len(indent):
        end += 1
    if not lines[end - 1].endswith("\n"):
        lines[end - 1] += "\n"
    lines.insert(end, added + "\n")
    new = "".join(lines)
    new_chapters = _lessons_part(yaml.safe_load(new))["chapters"]
    assert new_chapters[-1] == {"file": f"lessons/{stem}"}, "internal error: the lesson did not land in the Lessons part"
    assert new_chapters[-2] == chapters[-1], "internal error: the lesson before lost its sections"
    return new, added.strip()


def toc_without_lesson(text: str, stem: str) -> str:
    """``_toc.yml``'s text without the line of ``lessons/<stem>``."""
    lines = text.splitlines(keepends=True)
    kept = [line for line in lines if not re.fullmatch(rf"\s*- file: lessons/{re.escape(stem)}\s*", line)]
    if len(kept) != len(lines) - 1:
        raise ValueError(f"expected one line '- file: lessons/{stem}' in _toc.yml, found {len(lines) - len(kept)}")
    return "".join(kept)


def scaffold(
    name: str, root: Path = lessons.ROOT, *, title: str | None = None, execute: bool = True, dry_run: bool = False
) -> Scaffold:
    """Create lesson ``NN_name`` under ``root`` (the repository root): its ``.md``, its ``_toc.yml``
    entry and, when ``execute``, its executed ``.ipynb``. ``dry_run`` writes nothing."""
    root = Path(root)
    validate_name(name, root)
    if title is not None and (not title.strip() or "\n" in title or re.match(r"\s*\d", title)):
        raise ValueError(
            f"expected a one-line title that does not start with a number (the book numbers lessons), got {title!r}"
        )
    number = next_number(root)
    stem = f"{number:02d}_{name}"
    sources = lessons.lesson_sources(root / "lessons")
    previous = sources[-1].stem if sources else "00_welcome"
    text = lesson_text(
        number, name, title.strip() if title else title_of(name), lessons.repository(root / "_config.yml"), previous
    )
    toc_path = root / "_toc.yml"
    new_toc, toc_line = toc_with_lesson(toc_path.read_text(encoding="utf-8"), stem)
    markdown = root / "lessons" / f"{stem}.md"
    result = Scaffold(markdown, markdown.with_suffix(".ipynb"), toc_line, text, executed=False)
    if dry_run:
        return result
    markdown.write_text(text, encoding="utf-8")
    toc_path.write_text(new_toc, encoding="utf-8")
    if execute:
        lessons.execute(markdown)
        result = Scaffold(markdown, markdown.with_suffix(".ipynb"), toc_line, text, executed=True)
    return result


def remove(stem: str, root: Path = lessons.ROOT, *, force: bool = False) -> list[Path]:
    """Take scaffolded lesson ``stem`` (``NN_name``) back out; returns the files deleted.

    Only the last lesson can go (numbers must stay consecutive), and only while its ``.md`` still
    holds the scaffold's marker line, unless ``force``.
    """
    root = Path(root)
    markdown = root / "lessons" / f"{stem}.md"
    if not markdown.is_file():
        raise FileNotFoundError(f"expected a lesson such as lessons/05_my_topic.md, got {markdown}")
    last = lessons.lesson_sources(root / "lessons")[-1]
    if markdown.resolve() != last.resolve():
        raise ValueError(f"only the last lesson can be removed (lessons/{last.name}), not lessons/{markdown.name}")
    if not force and MARKER not in markdown.read_text(encoding="utf-8"):
        raise ValueError(
            f"lessons/{markdown.name} no longer carries the scaffold's marker line, so it holds your work: "
            "pass --force to remove it anyway"
        )
    toc_path = root / "_toc.yml"
    toc_path.write_text(toc_without_lesson(toc_path.read_text(encoding="utf-8"), stem), encoding="utf-8")
    deleted = [p for p in (markdown, markdown.with_suffix(".ipynb")) if p.is_file()]
    for path in deleted:
        path.unlink()
    return deleted


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m course_utils.authoring.scaffold", description=__doc__.split("\n")[0]
    )
    parser.add_argument("name", nargs="?", help="the new lesson's slug, e.g. cross_attention (or NN_slug with --remove)")
    parser.add_argument("--title", help="the lesson's title (default: from the name, 'Cross attention')")
    parser.add_argument("--dry-run", action="store_true", help="print what would be written; change nothing")
    parser.add_argument("--no-execute", action="store_true", help="do not execute the lesson into its .ipynb")
    parser.add_argument("--remove", action="store_true", help="take the scaffolded lesson NN_slug back out")
    parser.add_argument("--force", action="store_true", help="with --remove: remove it even if it was edited")
    parser.add_argument("--from-environment", action="store_true",
                        help="read the name and title from LESSON_NAME and LESSON_TITLE (what `make new-lesson` does)")
    args = parser.parse_args(argv)
    require_checkout()
    if args.from_environment:  # `make new-lesson`: no shell quoting between the author's words and the scaffold
        args.name, args.title = os.environ.get("LESSON_NAME", ""), os.environ.get("LESSON_TITLE") or None
    if not args.name:
        parser.error("expected the lesson's NAME (a slug such as cross_attention)")
    try:
        if args.remove:
            for path in remove(args.name, force=args.force):
                print(f"removed {path.relative_to(lessons.ROOT)}")
            print(f"removed lessons/{args.name} from _toc.yml")
            return 0
        result = scaffold(args.name, title=args.title, execute=not args.no_execute, dry_run=args.dry_run)
    except (ValueError, FileNotFoundError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    relative = result.markdown.relative_to(lessons.ROOT)
    if args.dry_run:
        notebook = relative.with_suffix(".ipynb")
        print(f"would write {relative}, add '{result.toc_line}' to _toc.yml and execute it into {notebook}:\n")
        print(result.text)
        return 0
    print(f"wrote {relative}\nadded '{result.toc_line}' to _toc.yml")
    if result.executed:
        print(f"executed it into {relative.with_suffix('.ipynb')}")
    print(
        f"next: write the lesson (every TODO), then `make lessons` and `make test`; "
        f"to undo: python -m course_utils.authoring.scaffold --remove {result.markdown.stem}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
