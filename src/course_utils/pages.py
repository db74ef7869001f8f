"""The two kinds of page executed from ``lessons/``: a lesson and its lab page.

A **lesson** is ``lessons/NN_slug.md``: one of the numbered steps of the course, with its objectives,
exercises, quiz and takeaways, and a main path a learner finishes in one sitting. Its **lab page**,
when it has one, is ``lessons/NN_slug_lab.md``: the measured experiments, seed tables, ablations and
targets behind the lesson's claims, for the curious learner and the reviewer. A lab page is executed,
paired and checked like a lesson, sits under its lesson in the table of contents, and has no lesson
number of its own, no quiz and no exercises required.
"""

from __future__ import annotations

from pathlib import Path

LAB_SUFFIX = "_lab"  # lessons/NN_slug_lab.md is the lab page of lessons/NN_slug.md


def is_lab(path: Path | str) -> bool:
    """Whether a page of ``lessons/`` (a path or a stem) is a lab page, ``NN_slug_lab``."""
    return Path(path).stem.endswith(LAB_SUFFIX)


def lab_of(lesson: Path) -> Path | None:
    """The lab page of a lesson's ``.md`` (``NN_slug.md`` → ``NN_slug_lab.md``), None if it has none."""
    lesson = Path(lesson)
    if is_lab(lesson):
        raise ValueError(f"expected a lesson such as lessons/07_distillation.md, got the lab page {lesson.name}")
    lab = lesson.with_name(f"{lesson.stem}{LAB_SUFFIX}{lesson.suffix or '.md'}")
    return lab if lab.is_file() else None


def lesson_of(lab: Path) -> Path:
    """The lesson a lab page belongs to (``NN_slug_lab.md`` → ``NN_slug.md``)."""
    lab = Path(lab)
    if not is_lab(lab):
        raise ValueError(f"expected a lab page such as lessons/07_distillation_lab.md, got {lab.name}")
    return lab.with_name(lab.stem[: -len(LAB_SUFFIX)] + (lab.suffix or ".md"))
