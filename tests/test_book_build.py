"""Real builds of a throw-away one-lesson book with the course's extension (course_utils.book).

They check what only a build shows: a lesson whose execution raised fails every build, strict or
plain, first or repeated, until it is fixed; a plain ``jupyter-book build .`` runs the lessons as
``make book`` does (offline, hash seed 0) and its log has no kernel transport warning; the execution
cache is dropped when course_utils changes. Each build takes a few seconds.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from course_utils import book

JUPYTER_BOOK = Path(sys.executable).with_name("jupyter-book")
CONFIG = """\
title: tiny
only_build_toc_files: true
execute:
  execute_notebooks: cache
  allow_errors: false
  stderr_output: warn
sphinx:
  extra_extensions:
    - course_utils.book
"""
TOC = "format: jb-book\nroot: intro\nchapters:\n  - file: lessons/01_tiny\n"
LESSON = """\
---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---
# Tiny

```{code-cell} ipython3
import os
print("environment:", *(f"{k}={os.environ.get(k)}" for k in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "PYTHONHASHSEED")))
```

```{code-cell} ipython3
CELL
```
"""
BROKEN = 'assert 1 + 1 == 3, "broken on purpose"'
FIXED = 'print("fixed:", 1 + 1)'


def tiny_book(root: Path, cell: str) -> Path:
    (root / "lessons").mkdir(parents=True, exist_ok=True)
    (root / "_config.yml").write_text(CONFIG)
    (root / "_toc.yml").write_text(TOC)
    (root / "intro.md").write_text("# Intro\n")
    (root / "lessons" / "01_tiny.md").write_text(LESSON.replace("CELL", cell))
    return root


def build(root: Path, *flags: str) -> subprocess.CompletedProcess:
    """``jupyter-book build .`` in ``root``, in an environment without the Makefile's variables."""
    env = {k: v for k, v in os.environ.items() if k not in book.LESSON_ENVIRONMENT}
    return subprocess.run([str(JUPYTER_BOOK), "build", ".", *flags], cwd=root, env=env,
                          capture_output=True, text=True, timeout=600)


STRICT = ("-W", "--keep-going")  # what make book and make pdf pass


def test_a_failed_lesson_fails_every_build_until_it_is_fixed(tmp_path):
    root = tiny_book(tmp_path / "book", BROKEN)
    first, second = build(root, *STRICT), build(root, *STRICT)
    assert first.returncode != 0, "the first strict build passed with a failed lesson"
    assert second.returncode != 0, "the second strict build passed with a failed lesson"
    for result in (first, second):
        log = result.stdout + result.stderr
        assert "lessons/01_tiny.md, code cell 2" in log and "AssertionError: broken on purpose" in log, log[-3000:]
    plain = build(root)
    assert plain.returncode != 0, "a plain build published the failed lesson"
    assert "lessons/01_tiny.md, code cell 2" in plain.stdout + plain.stderr
    singlehtml = build(root, "--builder", "singlehtml", *STRICT)  # the make pdf build
    assert singlehtml.returncode != 0

    (root / "lessons" / "01_tiny.md").write_text(LESSON.replace("CELL", FIXED))
    fixed = build(root, *STRICT)
    assert fixed.returncode == 0, (fixed.stdout + fixed.stderr)[-3000:]
    assert "fixed: 2" in (root / "_build" / "html" / "lessons" / "01_tiny.html").read_text()


def test_a_plain_build_runs_the_lessons_as_make_book_does_and_quietly(tmp_path):
    root = tiny_book(tmp_path / "book", FIXED)
    result = build(root, *STRICT)
    log = result.stdout + result.stderr
    assert result.returncode == 0, log[-3000:]
    page = (root / "_build" / "html" / "lessons" / "01_tiny.html").read_text()
    assert "HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 PYTHONHASHSEED=0" in page
    assert "Executing notebook" in log
    assert "without encryption" not in log, "ipykernel's transport warning is back in the build log"
    assert book.execution_cache_is_current(root / "_build" / ".jupyter_cache")

    again = build(root, *STRICT)  # nothing changed: the cached lesson is not executed again
    assert again.returncode == 0 and "Executing notebook" not in again.stdout + again.stderr

    # course_utils "changes" (the cache is stamped with another code's hash): the cache and the pages go
    stamp = root / "_build" / ".jupyter_cache" / book.SOURCE_STAMP
    stamp.write_text("0" * 64 + "\n")
    changed = build(root, *STRICT)
    assert changed.returncode == 0
    assert "Executing notebook" in changed.stdout + changed.stderr, "a lesson's outputs of older code were kept"
    assert book.execution_cache_is_current(root / "_build" / ".jupyter_cache")


def test_a_build_without_the_plotly_bundle_stops_at_once_saying_how_to_fetch_it(tmp_path):
    root = tiny_book(tmp_path / "book", BROKEN)  # a lesson that would fail: it must not even run
    env_prefix = tmp_path / "empty-prefix"
    # the bundle is looked up under sys.prefix; a sitecustomize moves sys.prefix of the build only
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "sitecustomize.py").write_text(f"import sys\nsys.prefix = {str(env_prefix)!r}\n")
    env = {k: v for k, v in os.environ.items() if k not in book.LESSON_ENVIRONMENT}
    env["PYTHONPATH"] = str(tmp_path / "site")
    result = subprocess.run([str(JUPYTER_BOOK), "build", "."], cwd=root, env=env,
                            capture_output=True, text=True, timeout=600)
    log = result.stdout + result.stderr
    assert result.returncode != 0
    assert "course_utils.book fetch-assets" in log and "Missing asset" in log, log[-3000:]
    assert "Executing notebook" not in log, "the build ran the lessons before finding the bundle missing"
