"""The pinned stack: ``requirements.lock`` (pip) and its mirror ``environment.yml`` (conda).

``requirements.lock`` holds the exact version of every package the course is tested with; ``make``
installs it into ``.venv``. Conda users get the same versions from ``environment.yml``, which is
written from the lock by ``python -m course_utils.authoring.lockfile`` (``make lock`` does this
after re-resolving ``requirements.in``), and a test keeps the two in step.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from . import ROOT, require_checkout

LOCK = ROOT / "requirements.lock"
ENVIRONMENT = ROOT / "environment.yml"
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;#]+)$")
PYTHON_VERSION = "3.11"


def normalize(name: str) -> str:
    """A package name as PEP 503 compares them (``Jupyter_Book`` → ``jupyter-book``)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def parse_pins(lines: list[str], source: str) -> dict[str, str]:
    """``name==version`` lines (comments and blank lines skipped) as ``{normalized name: version}``."""
    pins: dict[str, str] = {}
    for number, raw in enumerate(lines, 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        match = PIN.match(line)
        if not match:
            raise ValueError(f"{source}:{number}: expected an exact pin 'name==version', got {raw.strip()!r}")
        name = normalize(match.group(1))
        if name in pins:
            raise ValueError(f"{source}:{number}: {name} is pinned twice")
        pins[name] = match.group(2)
    return pins


def lock_pins(path: Path = LOCK) -> dict[str, str]:
    """The pins of ``requirements.lock``."""
    return parse_pins(path.read_text(encoding="utf-8").splitlines(), path.name)


def environment_pins(path: Path = ENVIRONMENT) -> dict[str, str]:
    """The pip pins listed in ``environment.yml``."""
    import yaml

    spec = yaml.safe_load(path.read_text(encoding="utf-8"))
    pip_sections = [d["pip"] for d in spec.get("dependencies", []) if isinstance(d, dict) and "pip" in d]
    if len(pip_sections) != 1:
        raise ValueError(f"{path.name}: expected exactly one 'pip:' list under dependencies")
    return parse_pins(pip_sections[0], path.name)


def environment_yml(pins: dict[str, str]) -> str:
    """The text of ``environment.yml`` for these pins."""
    lines = [
        "# Conda environment for the course. GENERATED from requirements.lock by",
        "# `python -m course_utils.authoring.lockfile` (make lock): do not edit by hand.",
        "#   conda env create -f environment.yml && conda activate attention-course",
        "#   pip install -e . --no-deps",
        "#   python -m course_utils.book fetch-assets   # the site's partial plotly.js (npm registry)",
        "name: attention-course",
        "channels:",
        "  - conda-forge",
        "dependencies:",
        f"  - python={PYTHON_VERSION}",
        "  - pip",
        "  - pip:",
    ]
    lines += [f"      - {name}=={version}" for name, version in sorted(pins.items())]
    return "\n".join(lines) + "\n"


def main() -> int:
    require_checkout()
    ENVIRONMENT.write_text(environment_yml(lock_pins()), encoding="utf-8")
    print(f"wrote {ENVIRONMENT.name} from {LOCK.name} ({len(lock_pins())} pins)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
