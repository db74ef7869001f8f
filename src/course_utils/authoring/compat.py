"""``make compat``: every lesson, top to bottom, under each package stack the course says it supports.

Learners do not run the course in its lock. Colab installs ``course_utils`` next to its own torch,
transformers, numpy and plotly; other machines have other versions. ``pyproject.toml`` declares the
range of each direct dependency, and this tool tests that range:

- ``floor``: every direct dependency at the lowest version ``pyproject.toml`` allows (read from it,
  so the declared floor and the tested floor cannot drift apart), under Python 3.11;
- ``colab``: what Colab shipped through 2025 (transformers 4.57, numpy 2.0.2, plotly 5.24.1,
  ipywidgets 8.1), under Python 3.12, Colab's;
- ``newest``: the newest versions pip resolves today, under Python 3.11.

torch is 2.13.0 in every stack: its CPU build installs quickly for Python 3.11; for Python 3.12 the
registry serves the CUDA build (about 4.7 GB installed, a minute on this machine's network).

Each stack gets a throw-away venv in ``_build/compat/<stack>``, into which ``course_utils`` is
installed the way Colab installs it (``pip install`` of the repository, not editable, so the
package data is tested too); then nbval runs every lesson in lax mode: a cell passes when it does
not raise (the ``assert`` statements of the lessons still count), its output is not compared.
Prints a table stack x lesson -> passed/total cells and exits 1 on any failure.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys
import time
import tomllib
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

from .. import versions
from . import kernel_retry, require_checkout, watchdog
from .lessons import ROOT, page_sources

PYPROJECT = ROOT / "pyproject.toml"
WORK = ROOT / "_build" / "compat"
TORCH = "torch==2.13.0"
# What nbval needs to run the lessons; not part of what is tested, so left to resolve freely.
TOOLS = ("nbval>=0.11,<0.12", "pytest", "pytest-xdist", "ipykernel")
# Packages whose installed versions the report shows.
SHOWN = ("numpy", "torch", "transformers", "tokenizers", "safetensors", "plotly", "ipywidgets", "tqdm",
         "huggingface-hub")


@dataclass(frozen=True)
class Stack:
    """A set of package versions the lessons must run under.

    ``pins`` maps a package to its exact version; packages not pinned resolve to the newest version
    that ``pyproject.toml`` and the pins allow. ``floor=True`` pins every direct dependency of
    ``pyproject.toml`` to its declared lowest version (on top of ``pins``).
    """

    name: str
    python: str
    about: str
    pins: dict[str, str] = field(default_factory=dict)
    floor: bool = False

    def constraints(self, pyproject: Path = PYPROJECT) -> dict[str, str]:
        """Package -> exact version for this stack (torch excluded: it is always 2.13.0)."""
        pinned = dict(declared_floors(pyproject)) if self.floor else {}
        pinned.update(self.pins)
        pinned.pop("torch", None)
        return pinned


STACKS = (
    Stack("floor", "3.11", "every direct dependency at the floor pyproject.toml declares", floor=True),
    Stack("colab", versions.COLAB_PYTHON, "Colab through 2025: transformers 4.57, numpy 2.0.2, plotly 5.24.1",
          pins=versions.COLAB_2025),
    Stack("newest", "3.11", "the newest versions pip resolves"),
)
SUPPORTED_PYTHONS = tuple(sorted({stack.python for stack in STACKS}))


def declared_floors(pyproject: Path = PYPROJECT) -> dict[str, str]:
    """name -> the lowest version each direct dependency of ``pyproject.toml`` allows."""
    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    return {name: versions.floor(spec) for name, spec in versions.parse_requirements(project["dependencies"]).items()}


def find_python(version: str) -> str:
    """An interpreter of ``version`` (``"3.12"``): on PATH, or installed by pyenv or the system.

    Raises with what to install when there is none.
    """
    pyenv = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv")  # pyenv's own variable first
    candidates = [shutil.which(f"python{version}") or ""]
    candidates += sorted(str(p) for p in (pyenv / "versions").glob(f"{version}.*/bin/python{version}"))
    candidates += [f"/usr/bin/python{version}", f"/usr/local/bin/python{version}"]
    for candidate in filter(None, candidates):
        try:
            found = subprocess.run([candidate, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                                   capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if found.returncode == 0 and found.stdout.strip() == version:
            return candidate
    raise RuntimeError(
        f"make compat needs Python {version} and found none (tried python{version} on PATH, pyenv, /usr/bin): "
        f"install it (pyenv install {version}, or your system's python{version} package), "
        f"or run the other stacks: make compat STACKS='...'"
    )


@dataclass
class Result:
    """What one stack did: install time, lesson cells passed/total, failures, versions."""

    stack: Stack
    install_s: float = 0.0
    run_s: float = 0.0
    cells: dict[str, tuple[int, int]] = field(default_factory=dict)  # lesson -> (passed, total)
    failures: list[str] = field(default_factory=list)
    versions: dict[str, str] = field(default_factory=dict)
    error: str = ""
    retries: list[str] = field(default_factory=list)  # kernel starts tried again (kernel_retry)

    @property
    def ok(self) -> bool:
        return not self.error and not self.failures and bool(self.cells)


def build_wheel(dist: Path) -> Path:
    """``course_utils`` as a wheel in ``dist``, built from a copy of the sources (the tree stays clean)."""
    import tempfile

    shutil.rmtree(dist, ignore_errors=True)
    with tempfile.TemporaryDirectory() as scratch:
        copy = Path(scratch) / "course"
        copy.mkdir()
        for name in ("pyproject.toml", "README.md"):
            shutil.copy2(ROOT / name, copy / name)
        shutil.copytree(ROOT / "src", copy / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        _run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(dist), str(copy)])
    wheels = sorted(dist.glob("course_utils-*.whl"))
    if len(wheels) != 1:
        raise RuntimeError(f"expected one course_utils wheel in {dist}, found {wheels}")
    return wheels[0]


def install(stack: Stack, folder: Path, wheel: Path) -> Result:
    """A fresh venv in ``folder`` with ``course_utils`` installed as Colab does, under ``stack``'s pins."""
    result = Result(stack)
    start = time.perf_counter()
    try:
        python = find_python(stack.python)
        shutil.rmtree(folder, ignore_errors=True)
        folder.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run([python, "-m", "venv", str(folder)], check=True, capture_output=True, text=True)
        constraints = folder / "constraints.txt"
        constraints.write_text("".join(f"{n}=={v}\n" for n, v in stack.constraints().items()), encoding="utf-8")
        pip = [str(folder / "bin" / "python"), "-m", "pip", "install", "--quiet", "--upgrade"]
        _run(pip + ["pip"])
        _run(pip + ["-c", str(constraints), TORCH, str(wheel), *TOOLS])
        result.versions = installed_versions(folder)
    except (RuntimeError, subprocess.CalledProcessError) as error:
        result.error = _describe(error)
    result.install_s = time.perf_counter() - start
    return result


def _run(command: list[str]) -> None:
    # the repository is installed from a copy made by pip; PYTHONPATH must not shadow it
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    subprocess.run(command, check=True, capture_output=True, text=True, env=env, cwd=ROOT)


def _describe(error: Exception) -> str:
    if isinstance(error, subprocess.CalledProcessError):
        tail = (error.stderr or error.stdout or "").strip().splitlines()[-12:]
        return f"`{' '.join(map(str, error.cmd[:6]))} ...` failed:\n" + "\n".join(tail)
    return str(error)


def installed_versions(folder: Path) -> dict[str, str]:
    """The versions of :data:`SHOWN` (and Python) in a venv."""
    code = ("import importlib.metadata as m, sys, json; "
            f"names = {list(SHOWN)!r}; v = {{}}\n"
            "for n in names:\n"
            "    try: v[n] = m.version(n)\n"
            "    except m.PackageNotFoundError: v[n] = '-'\n"
            "v['python'] = '%d.%d.%d' % sys.version_info[:3]; print(json.dumps(v))")
    out = subprocess.run([str(folder / "bin" / "python"), "-c", code], check=True, capture_output=True, text=True)
    import json

    return json.loads(out.stdout)


def nbval_command(folder: Path, report: Path, lessons: list[Path]) -> list[str]:
    """The pytest command of :func:`run_lessons`: nbval, lax, in the venv of ``folder``.

    Two lessons at a time, the last (longest) first, as `make test` runs them; a kernel that dies
    at start is started again (:mod:`course_utils.authoring.kernel_retry`, from the
    ``course_utils`` installed in the venv).
    """
    return [str(folder / "bin" / "python"), "-m", "pytest", "--nbval-lax", "--nbval-current-env",
            "--nbval-cell-timeout=600", "-p", "course_utils.authoring.kernel_retry", "-p", "no:cacheprovider",
            "-q", f"--junitxml={report}", "-n", "2", "--dist", "loadfile",
            *[str(p.with_suffix(".ipynb").relative_to(ROOT)) for p in sorted(lessons, reverse=True)]]


def run_lessons(result: Result, folder: Path, lessons: list[Path]) -> Result:
    """nbval, lax, on every lesson in the venv of ``folder``; fills ``result.cells`` and ``failures``."""
    report = folder / "junit.xml"
    command = nbval_command(folder, report, lessons)  # waiting threads asleep (OMP_WAIT_POLICY below)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", PYTHONHASHSEED="0", OMP_WAIT_POLICY="PASSIVE",
               PYDEVD_DISABLE_FILE_VALIDATION="1", PATH=f"{folder / 'bin'}{os.pathsep}{env.get('PATH', '')}")
    retries = folder / "kernel-retries.log"
    env[kernel_retry.LOG_VARIABLE] = str(retries)
    start = time.perf_counter()
    report.unlink(missing_ok=True)  # a hung attempt's retry must not be read from the first's report
    retries.unlink(missing_ok=True)
    run = watchdog.run(command, env=env, cwd=ROOT, echo=False)  # a hung run is stopped and run again
    result.run_s = time.perf_counter() - start
    if retries.is_file():
        result.retries = retries.read_text(encoding="utf-8").splitlines()
    if not report.is_file():
        result.error = f"pytest wrote no report (exit {run.returncode}):\n{run.output[-4000:]}"
        return result
    result.cells, result.failures = read_junit(report)
    missing = [p.stem for p in lessons if p.stem not in result.cells]
    if missing:
        result.error = f"no cells ran for {missing} (exit {run.returncode}):\n{run.output[-2000:]}"
    return result


def read_junit(report: Path) -> tuple[dict[str, tuple[int, int]], list[str]]:
    """Cells passed/total per lesson, and one line per failed cell, from nbval's JUnit XML."""
    cells: dict[str, list[int]] = {}
    failures = []
    for case in ET.parse(report).getroot().iter("testcase"):
        found = re.search(r"(\d\d_[a-z0-9_]+)\.ipynb", f"{case.get('file', '')} {case.get('classname', '')}")
        if not found:
            continue
        lesson = found.group(1)
        passed, total = cells.setdefault(lesson, [0, 0])
        problem = case.find("failure") if case.find("failure") is not None else case.find("error")
        if problem is None and case.find("skipped") is None:
            cells[lesson] = [passed + 1, total + 1]
        elif case.find("skipped") is None:
            cells[lesson] = [passed, total + 1]
            failures.append(f"{lesson} {case.get('name')}: {_reason(problem.text or problem.get('message') or '')}")
    return {k: (v[0], v[1]) for k, v in cells.items()}, failures


def _reason(text: str) -> str:
    """The line of a failed cell's report that says why: a timeout, else the exception's own line
    (``ValueError: ...``; plotly and Python print more after it, down to a row of ``^``), else the
    traceback's last line that is not only carets."""
    text = re.sub(r"(?:#x1B|\x1b)\[[0-9;]*m", "", text)  # nbval colours its report
    timeout = re.search(r"Timeout of \d+ seconds exceeded[^\n]*", text)
    if timeout:
        return timeout.group(0)
    lines = [line.strip() for line in text.splitlines() if line.strip().strip("^~ ")]
    raised = [line for line in lines if re.match(r"[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt)\b:?", line)]
    return (raised or lines or ["(no message)"])[-1][:300]


def table(results: list[Result], lessons: list[Path]) -> str:
    """The markdown table stack x lesson -> passed/total cells, with times and versions."""
    head = "| lesson | " + " | ".join(f"{r.stack.name} (Python {r.stack.python})" for r in results) + " |"
    lines = [head, "|---" * (len(results) + 1) + "|"]
    for lesson in lessons:
        cells = []
        for r in results:
            passed, total = r.cells.get(lesson.stem, (0, 0))
            cells.append("not run" if not total else f"{passed}/{total}" + ("" if passed == total else " FAILED"))
        lines.append(f"| {lesson.stem} | " + " | ".join(cells) + " |")
    lines.append("| install (s) | " + " | ".join(f"{r.install_s:.0f}" for r in results) + " |")
    lines.append("| lessons (s) | " + " | ".join(f"{r.run_s:.0f}" for r in results) + " |")
    for name in ("python", *SHOWN):
        lines.append(f"| {name} | " + " | ".join(r.versions.get(name, "-") for r in results) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    names = [s.name for s in STACKS]
    parser = argparse.ArgumentParser(prog="python -m course_utils.authoring.compat", description=__doc__.split("\n")[0])
    parser.add_argument("stacks", nargs="*", metavar="STACK", help=f"stacks to test (default: all of {', '.join(names)})")
    parser.add_argument("--keep", action="store_true", help="keep the venvs in _build/compat/ (default: removed)")
    args = parser.parse_args(argv)
    require_checkout()
    unknown = [n for n in args.stacks if n not in names]
    if unknown:
        parser.error(f"unknown stack(s) {unknown}: expected some of {names}")
    stacks = [s for s in STACKS if not args.stacks or s.name in args.stacks]
    lessons = page_sources()
    start = time.perf_counter()
    print(f"make compat: {len(lessons)} lessons under {', '.join(s.name for s in stacks)}; installing the stacks")
    wheel = build_wheel(WORK / "dist")
    with concurrent.futures.ThreadPoolExecutor(max_workers=len(stacks)) as pool:  # pip is mostly I/O
        results = list(pool.map(lambda s: install(s, WORK / s.name, wheel), stacks))
    for result in results:
        if result.error:
            print(f"[{result.stack.name}] install failed after {result.install_s:.0f} s: {result.error}")
            continue
        print(f"[{result.stack.name}] installed in {result.install_s:.0f} s; running the lessons", flush=True)
        run_lessons(result, WORK / result.stack.name, lessons)
        print(f"[{result.stack.name}] {'passed' if result.ok else 'FAILED'} in {result.run_s:.0f} s", flush=True)
    report = table(results, lessons)
    print("\n" + report + "\n")
    for result in results:
        for line in ([result.error] if result.error and result.cells else []) + result.failures:
            print(f"[{result.stack.name}] {line}")
        for line in result.retries:
            print(f"[{result.stack.name}] kernel start retried: {line}")
    (WORK / "report.md").write_text(report + "\n", encoding="utf-8")
    if not args.keep:
        for stack in stacks:
            shutil.rmtree(WORK / stack.name, ignore_errors=True)
    failed = [r.stack.name for r in results if not r.ok]
    total = time.perf_counter() - start
    print(f"make compat: {'FAILED: ' + ', '.join(failed) if failed else 'every stack passed'} in {total / 60:.1f} min")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
