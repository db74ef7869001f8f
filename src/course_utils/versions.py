"""Which versions of its packages the course supports and tests, and which ones this machine has.

The supported ranges are those ``pyproject.toml`` declares (read from the installed package's
metadata, so Colab sees the same ranges as a clone). ``make compat`` runs every lesson at the
floor of every range, at Colab's 2025 stack and at the newest versions; ``make test`` runs them at
the exact versions of ``requirements.lock``. :func:`report` says, for each package, whether the
installed version is one of those (and which), inside the range but untested, or outside it;
:func:`tested_versions` lists the versions the tests run.
"""

from __future__ import annotations

import importlib.metadata
import platform
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]  # the repository, when the package runs from a clone
PACKAGES = ("numpy", "scipy", "torch", "transformers", "tokenizers", "safetensors", "plotly", "ipywidgets", "tqdm")
# What Colab shipped through 2025: the Colab-like stack of `make compat` (Python 3.12).
COLAB_2025 = {"transformers": "4.57.6", "numpy": "2.0.2", "plotly": "5.24.1", "ipywidgets": "8.1.5"}
COLAB_PYTHON = "3.12"
REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9_.-]+)\s*([^;]*)")


def parse_requirements(lines) -> dict[str, str]:
    """``["numpy>=1.26", ...]`` -> ``{"numpy": ">=1.26"}`` (extras' requirements left out)."""
    declared = {}
    for line in lines:
        if "extra ==" in line:
            continue
        match = REQUIREMENT.match(line)
        if not match:
            raise ValueError(f"cannot read the requirement {line!r}")
        declared[match.group(1).lower().replace("_", "-")] = match.group(2).replace(" ", "")
    return declared


def floor(spec: str) -> str:
    """The lowest version a specifier allows: ``">=1.26,<3"`` -> ``"1.26"``."""
    found = re.search(r">=\s*([0-9][0-9A-Za-z.]*)", spec)
    if not found:
        raise ValueError(f"the specifier {spec!r} declares no floor (expected '>=X')")
    return found.group(1)


def _pyproject() -> dict:
    import tomllib

    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def declared() -> dict[str, str]:
    """The supported range of each direct dependency: ``{"numpy": ">=1.26", ...}``."""
    try:
        return parse_requirements(importlib.metadata.requires("course_utils") or [])
    except importlib.metadata.PackageNotFoundError:  # running from src/ without installing
        return parse_requirements(_pyproject()["dependencies"])


def supported_pythons() -> tuple[str, ...]:
    """The Python versions the course supports and tests (``("3.11", "3.12")``)."""
    try:
        classifiers = importlib.metadata.metadata("course_utils").get_all("Classifier") or []
    except importlib.metadata.PackageNotFoundError:
        classifiers = _pyproject().get("classifiers", [])
    return tuple(c.rsplit(":: ", 1)[1] for c in classifiers if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c))


def locked() -> dict[str, str]:
    """The exact versions of ``requirements.lock`` (empty when the lock is not there, as in Colab)."""
    lock = ROOT / "requirements.lock"
    if not lock.is_file():
        return {}
    pins = re.findall(r"^([A-Za-z0-9_.-]+)==([^\s;]+)", lock.read_text(encoding="utf-8"), re.MULTILINE)
    return {name.lower().replace("_", "-"): version for name, version in pins}


# What each tested version is, in a learner's words: `make compat` runs the lowest supported and
# Colab's, `make test` the version requirements.lock pins.
FLOOR, COLAB, PINNED = "lowest supported", "Colab's 2025", "pinned"


def tested(package: str) -> dict[str, str]:
    """Versions of ``package`` the course's tests run -> what each is (``"pinned"``, ``"lowest
    supported"``, ``"Colab's 2025"``, or several of them)."""
    runs: dict[str, list[str]] = {}
    for version, label in [(floor(declared()[package]), FLOOR),
                           (COLAB_2025.get(package), COLAB),
                           (locked().get(package), PINNED)]:
        if version:
            runs.setdefault(version, []).append(label)
    return {version: ", ".join(labels) for version, labels in runs.items()}


def tested_versions(package: str) -> str:
    """The versions of ``package`` (or ``"python"``) the course's tests run, lowest first:
    ``"1.26, 2.0.2, 2.4.6"``."""
    from packaging.version import Version

    versions = supported_pythons() if package == "python" else tested(package)
    return ", ".join(sorted(versions, key=Version))


def status(package: str, installed: str) -> str:
    """``"tested (pinned)"`` (or which tested version it is), ``"supported, not tested"`` or
    ``"NOT SUPPORTED: needs …"``."""
    from packaging.specifiers import SpecifierSet
    from packaging.version import Version

    if package not in declared():
        raise ValueError(f"expected one of the course's dependencies {sorted(declared())}, got {package!r}")
    spec = declared()[package]
    version = Version(installed)
    if not SpecifierSet(spec).contains(version, prereleases=True):
        return f"NOT SUPPORTED: needs {package}{spec}"
    public = Version(version.public)  # 2.13.0+cpu is the 2.13.0 the lock pins
    runs = [label for pinned, label in tested(package).items() if Version(Version(pinned).public) == public]
    return f"tested ({', '.join(runs)})" if runs else "supported, not tested"


def report() -> list[tuple[str, str, str, str]]:
    """(package, installed, supported range, status) for Python and every direct dependency;
    :func:`tested_versions` gives the versions the tests run of each."""
    python = platform.python_version()
    short = ".".join(python.split(".")[:2])
    pythons = supported_pythons()
    python_status = ("tested" + (" (Colab's)" if short == COLAB_PYTHON else "") if short in pythons
                     else f"NOT SUPPORTED: the course is tested on Python {', '.join(pythons)}")
    rows = [("python", python, " ".join(pythons), python_status)]
    for package in PACKAGES:
        try:
            installed = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            rows.append((package, "missing", declared()[package], f"NOT SUPPORTED: pip install '{package}{declared()[package]}'"))
            continue
        rows.append((package, installed, declared()[package], status(package, installed)))
    return rows


def unsupported() -> list[str]:
    """The rows of :func:`report` that are outside what the course supports, as sentences."""
    return [f"{name} {installed}: {verdict}" for name, installed, _, verdict in report()
            if verdict.startswith("NOT SUPPORTED")]
