"""A kernel that dies at start is started again (course_utils.authoring.kernel_retry).

The failure is made deterministic with kernelspecs of our own, in a temporary JUPYTER_PATH: one
that exits on its first start (as a kernel whose port was taken does) and starts on the next, and
one that always exits. nbval with the plugin passes the first after one retry and fails the second
with the kernel's stderr in the report; nbval without it fails the first (the control).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from course_utils.authoring import kernel_retry

FIRST_START_DIES = """\
import os, sys
from pathlib import Path

marker = Path(__file__).with_name("started")
if not marker.exists():
    marker.touch()
    print("flaky kernel: zmq.error.ZMQError: Address already in use (simulated)", file=sys.stderr, flush=True)
    sys.exit(3)
os.execv(sys.executable, [sys.executable, "-m", "ipykernel_launcher", "-f", sys.argv[1]])
"""

ALWAYS_DIES = """\
import sys

print("dead kernel: zmq.error.ZMQError: Address already in use (simulated)", file=sys.stderr, flush=True)
sys.exit(3)
"""


def kernelspec(tmp_path: Path, name: str, program: str) -> Path:
    """A kernelspec ``name`` that runs ``program`` in ``tmp_path/jupyter`` (a JUPYTER_PATH); that path."""
    folder = tmp_path / "jupyter" / "kernels" / name
    folder.mkdir(parents=True)
    (folder / "kernel.py").write_text(program, encoding="utf-8")
    spec = {"argv": [sys.executable, str(folder / "kernel.py"), "{connection_file}"], "display_name": name,
            "language": "python"}
    (folder / "kernel.json").write_text(json.dumps(spec), encoding="utf-8")
    return tmp_path / "jupyter"


def one_cell_notebook(tmp_path: Path) -> Path:
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        "print(6 * 7)", execution_count=1, outputs=[nbformat.v4.new_output("stream", name="stdout", text="42\n")])])
    path = tmp_path / "lesson.ipynb"
    nbformat.write(notebook, path)
    return path


def nbval(tmp_path: Path, kernel: str, program: str, *, plugin: bool) -> subprocess.CompletedProcess:
    """nbval, strict, on a notebook of one cell, in the kernel ``kernel`` (running ``program``)."""
    jupyter_path = kernelspec(tmp_path, kernel, program)
    notebook = one_cell_notebook(tmp_path)
    flags = ["-p", "course_utils.authoring.kernel_retry"] if plugin else []
    env = {**os.environ, "JUPYTER_PATH": str(jupyter_path), "PYDEVD_DISABLE_FILE_VALIDATION": "1"}
    return subprocess.run([sys.executable, "-m", "pytest", "--nbval", f"--nbval-kernel-name={kernel}",
                           "-p", "no:cacheprovider", "-p", "no:xdist", *flags, str(notebook)],
                          capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300)


def summary(run: subprocess.CompletedProcess) -> dict[str, int]:
    last = run.stdout.strip().splitlines()[-1]
    return {word: int(n) for n, word in re.findall(r"(\d+) (passed|failed|errors?)", last)}


def test_a_kernel_that_dies_at_its_first_start_passes_after_one_retry(tmp_path):
    run = nbval(tmp_path, "first-start-dies", FIRST_START_DIES, plugin=True)
    assert run.returncode == 0 and summary(run) == {"passed": 1}, run.stdout[-3000:] + run.stderr[-2000:]
    assert "kernel starts retried: 1" in run.stdout
    assert "kernel 'first-start-dies': try 2 of 4 after RuntimeError" in run.stdout


def test_without_the_plugin_the_same_kernel_fails_every_cell(tmp_path):
    """The control: the kernelspec above does die, and nbval alone does not start it again."""
    run = nbval(tmp_path, "first-start-dies", FIRST_START_DIES, plugin=False)
    assert run.returncode != 0 and "passed" not in summary(run), run.stdout[-3000:]
    assert "Kernel died before replying to kernel_info" in run.stdout + run.stderr


def test_a_kernel_that_always_dies_fails_with_its_stderr_shown(tmp_path):
    run = nbval(tmp_path, "always-dies", ALWAYS_DIES, plugin=True)
    assert run.returncode != 0 and "passed" not in summary(run), run.stdout[-3000:]
    assert "KernelStartError: kernel 'always-dies' failed to start 4 times in a row" in run.stdout
    assert run.stdout.count("dead kernel: zmq.error.ZMQError: Address already in use (simulated)") >= 4
    assert "kernel starts retried: 3" in run.stdout


def test_nbclient_starts_a_dying_kernel_again(tmp_path, monkeypatch):
    """The lesson executor, jupyter-cache (the book's build) and the tests run notebooks with nbclient."""
    from nbclient import NotebookClient

    monkeypatch.setenv("JUPYTER_PATH", str(kernelspec(tmp_path, "first-start-dies", FIRST_START_DIES)))
    monkeypatch.setattr(kernel_retry, "RETRIES", [])
    kernel_retry.install()
    notebook = nbformat.read(one_cell_notebook(tmp_path), as_version=4)
    NotebookClient(notebook, timeout=120, kernel_name="first-start-dies").execute()
    assert notebook.cells[0].outputs[0]["text"] == "42\n"
    assert len(kernel_retry.RETRIES) == 1 and "try 2 of 4" in kernel_retry.RETRIES[0]


def test_nbclient_names_the_stderr_of_a_kernel_that_always_dies(tmp_path, monkeypatch):
    from nbclient import NotebookClient

    monkeypatch.setenv("JUPYTER_PATH", str(kernelspec(tmp_path, "always-dies", ALWAYS_DIES)))
    monkeypatch.setattr(kernel_retry, "BACKOFF_S", (0.05,))
    kernel_retry.install()
    notebook = nbformat.read(one_cell_notebook(tmp_path), as_version=4)
    with pytest.raises(kernel_retry.KernelStartError, match="(?s)failed to start 4 times.*dead kernel: zmq"):
        NotebookClient(notebook, timeout=120, kernel_name="always-dies").execute()


def test_start_with_retries_waits_longer_each_time_and_keeps_every_stderr():
    waits, calls = [], []

    def start(stderr):
        calls.append(stderr)
        stderr.write(f"attempt {len(calls)}\n".encode())
        if len(calls) < 3:
            raise RuntimeError("Kernel died before replying to kernel_info")
        return "kernel"

    assert kernel_retry.start_with_retries(start, "kernel 'k'", sleep=waits.append) == "kernel"
    assert len(calls) == 3 and len(waits) == 2 and 1.0 <= waits[0] <= 1.5 and 2.0 <= waits[1] <= 3.0

    def never(stderr):
        stderr.write(b"port taken\n")
        raise RuntimeError("Kernel died before replying to kernel_info")

    with pytest.raises(kernel_retry.KernelStartError, match=r"(?s)2 times in a row.*try 2:.*port taken"):
        kernel_retry.start_with_retries(never, "kernel 'k'", tries=2, sleep=waits.append)
    with pytest.raises(ValueError, match="at least one try"):
        kernel_retry.start_with_retries(never, "kernel 'k'", tries=0)


def test_an_error_that_is_not_a_failed_start_is_not_retried():
    calls = []

    def start(stderr):
        calls.append(1)
        raise KeyError("no such kernel")

    with pytest.raises(KeyError):
        kernel_retry.start_with_retries(start, "kernel 'k'", sleep=lambda s: None)
    assert calls == [1]


def test_make_compat_loads_the_plugin_from_the_installed_course_utils(tmp_path):
    """``make compat`` installs course_utils from a wheel into throw-away venvs and runs nbval there
    with ``-p course_utils.authoring.kernel_retry``: the wheel holds the plugin, and pytest loads
    it from the unpacked wheel (not this checkout) and starts a dying kernel again."""
    import zipfile

    from course_utils.authoring import compat

    command = compat.nbval_command(tmp_path / "venv", tmp_path / "junit.xml", [compat.ROOT / "lessons" / "00_welcome.md"])
    assert command[command.index("course_utils.authoring.kernel_retry") - 1] == "-p"
    wheel = compat.build_wheel(tmp_path / "dist")
    installed = tmp_path / "site"
    with zipfile.ZipFile(wheel) as archive:
        assert "course_utils/authoring/kernel_retry.py" in archive.namelist()
        archive.extractall(installed)
    jupyter_path = kernelspec(tmp_path, "first-start-dies", FIRST_START_DIES)
    notebook = one_cell_notebook(tmp_path)
    env = {**os.environ, "JUPYTER_PATH": str(jupyter_path), "PYTHONPATH": str(installed),
           kernel_retry.LOG_VARIABLE: str(tmp_path / "retries.log")}
    where = subprocess.run([sys.executable, "-c", "import course_utils.authoring.kernel_retry as k; print(k.__file__)"],
                           capture_output=True, text=True, env=env, cwd=tmp_path, check=True)
    assert where.stdout.strip().startswith(str(installed))
    run = subprocess.run([sys.executable, "-m", "pytest", "--nbval-lax", "--nbval-kernel-name=first-start-dies",
                          "-p", "course_utils.authoring.kernel_retry", "-p", "no:cacheprovider", "-p", "no:xdist",
                          str(notebook)], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert run.returncode == 0 and "kernel starts retried: 1" in run.stdout, run.stdout[-3000:] + run.stderr[-2000:]
    assert (tmp_path / "retries.log").read_text().count("try 2 of 4") == 1
