"""Whether a Python environment already holds the pinned stack, so that make can take it as it is.

``make``'s first target installs ``requirements.lock`` into ``.venv``. An environment that already
has every pinned version (a ``.venv`` from an earlier install, a linked one shared by two clones)
needs no install, and reinstalling into a shared one would upgrade its pip and point its
``course_utils`` at this clone. The Makefile runs this file by its path, with the environment's
Python, before anything of the course is installed (it needs the standard library only)::

    .venv/bin/python src/course_utils/authoring/envcheck.py requirements.lock

and installs only when it exits non-zero; it prints what is missing or at another version.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import re
import sys
from pathlib import Path

PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;#]+)\s*$")


def normalized(name: str) -> str:
    """A distribution name as pip compares them: ``Jupyter_Book`` -> ``jupyter-book``."""
    return re.sub(r"[-_.]+", "-", name).lower()


def pins(lock_text: str) -> dict[str, str]:
    """``{name: version}`` of a lock's ``name==version`` lines (comments and blank lines skipped)."""
    found = {}
    for number, line in enumerate(lock_text.splitlines(), start=1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        match = PIN.match(line)
        if not match:
            raise ValueError(f"line {number} of the lock is not 'name==version': {line!r}")
        found[normalized(match.group(1))] = match.group(2)
    return found


def installed() -> dict[str, str]:
    """``{name: version}`` of the distributions this Python sees."""
    return {normalized(d.metadata["Name"]): d.version for d in importlib.metadata.distributions() if d.metadata["Name"]}


def unmet(lock_text: str, have: dict[str, str] | None = None) -> list[str]:
    """Each pin of the lock that the environment does not meet, as ``"name==version (have: ...)"``.

    A local version label is the wheel's build, not another version: the lock's ``torch==2.13.0``
    is met by ``2.13.0+cpu``.
    """
    have = installed() if have is None else have
    problems = []
    for name, version in sorted(pins(lock_text).items()):
        got = have.get(name)
        if got is None or got.split("+")[0] != version.split("+")[0]:
            problems.append(f"{name}=={version} (have: {got or 'not installed'})")
    return problems


def course_utils_folder() -> Path | None:
    """The folder ``course_utils`` is imported from in this environment, if any."""
    spec = importlib.util.find_spec("course_utils")
    return Path(spec.origin).resolve().parent if spec is not None and spec.origin else None


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print("usage: python envcheck.py requirements.lock", file=sys.stderr)
        return 2
    lock = Path(argv[0])
    if not lock.is_file():
        print(f"error: expected the lock file, got {lock}", file=sys.stderr)
        return 2
    problems = unmet(lock.read_text(encoding="utf-8"))
    if problems:
        shown = "\n  ".join(problems[:10]) + (f"\n  ... and {len(problems) - 10} more" if len(problems) > 10 else "")
        print(f"{sys.prefix} does not hold the pinned stack of {lock}:\n  {shown}")
        return 1
    print(f"{sys.prefix} holds every version pinned in {lock}: nothing to install")
    return 0


if __name__ == "__main__":
    sys.exit(main())
