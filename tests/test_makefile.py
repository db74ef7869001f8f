"""make's own behaviour: its help, and the environment it installs into (issue 31).

The environment tests run the Makefile's install rule with a stand-in Python (``BIN``) that
records every call and answers ``-m pip`` itself, so nothing is installed anywhere; everything
else goes to this environment's Python.
"""

from __future__ import annotations

import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from course_utils.authoring import envcheck

REPO = Path(__file__).resolve().parents[1]
LOCK = (REPO / "requirements.lock").read_text()


def make(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess:
    return subprocess.run(["make", "--no-print-directory", *args], cwd=cwd, capture_output=True, text=True, timeout=300)


def test_help_gives_the_preview_address_and_the_new_lesson_title():
    default = make("help").stdout
    assert "http://127.0.0.1:8000" in default and "$(PORT)" not in default
    assert "http://127.0.0.1:8123" in make("help", "PORT=8123").stdout
    [new_lesson] = [line for line in default.splitlines() if "make new-lesson" in line]
    assert "NAME=my_topic" in new_lesson and "TITLE=" in new_lesson


@pytest.fixture()
def recording_python(tmp_path):
    """A bin/ folder whose python logs its arguments and passes all but pip to the real one."""
    bin_dir, log = tmp_path / "bin", tmp_path / "calls.log"
    bin_dir.mkdir()
    python = bin_dir / "python"
    python.write_text(
        "#!/bin/sh\n"
        f'echo "$*" >> "{log}"\n'
        'if [ "$1" = "-m" ] && [ "$2" = "pip" ]; then exit 0; fi\n'
        f'exec "{sys.executable}" "$@"\n'
    )
    python.chmod(python.stat().st_mode | stat.S_IEXEC)
    return bin_dir, log


def test_an_environment_that_holds_the_lock_is_taken_as_it_is(tmp_path, recording_python):
    bin_dir, log = recording_python
    result = make("install", f"BIN={bin_dir}", f"STAMP={tmp_path / 'installed'}", f"PYTHON={sys.executable}")
    assert result.returncode == 0, result.stdout + result.stderr
    calls = log.read_text()
    assert "-m pip" not in calls, f"make reinstalled an environment that held the lock:\n{calls}"
    assert "holds every version pinned" in result.stdout
    assert (tmp_path / "installed").is_file()


def test_an_environment_that_misses_a_pin_is_installed_into(tmp_path, recording_python):
    bin_dir, log = recording_python
    clone = tmp_path / "clone"
    (clone / "src" / "course_utils" / "authoring").mkdir(parents=True)
    shutil.copy(REPO / "Makefile", clone / "Makefile")
    shutil.copy(REPO / "pyproject.toml", clone / "pyproject.toml")
    shutil.copy(REPO / "src" / "course_utils" / "authoring" / "envcheck.py", clone / "src" / "course_utils" / "authoring")
    (clone / "requirements.lock").write_text(LOCK.replace("\nnumpy==", "\nnumpy==0.0.1\n# was numpy=="))
    result = make("install", f"BIN={bin_dir}", f"STAMP={tmp_path / 'installed'}", f"PYTHON={sys.executable}", cwd=clone)
    assert result.returncode == 0, result.stdout + result.stderr
    calls = log.read_text()
    assert "numpy==0.0.1 (have: " in result.stdout
    assert "-m pip install --quiet -r requirements.lock" in calls
    # this environment's course_utils is REPO's: the clone's is installed in its place, and said so
    assert "-m pip install --quiet --no-deps -e ." in calls
    assert f"came from {REPO / 'src' / 'course_utils'}" in result.stdout


def test_the_lock_check_reads_pins_and_ignores_local_version_labels():
    lock = "# comment\n\ntorch==2.13.0\nNumPy==2.1.0\n"
    assert envcheck.pins(lock) == {"torch": "2.13.0", "numpy": "2.1.0"}
    assert envcheck.unmet(lock, {"torch": "2.13.0+cpu", "numpy": "2.1.0"}) == []
    assert envcheck.unmet(lock, {"torch": "2.12.0"}) == ["numpy==2.1.0 (have: not installed)",
                                                         "torch==2.13.0 (have: 2.12.0)"]
    with pytest.raises(ValueError, match="line 1"):
        envcheck.pins("torch>=2\n")


def test_the_conda_instructions_take_every_step_of_make_install():
    """The instructor guide's conda steps and environment.yml's header: without fetch-assets, a conda
    build stopped with 'expected the partial plotly.js bundle'."""
    makefile = (REPO / "Makefile").read_text()
    install_rule = makefile.split("$(STAMP): requirements.lock pyproject.toml", 1)[1].split("\ninstall:", 1)[0]
    assert "-m course_utils.book fetch-assets" in install_rule and "-e ." in install_rule
    guide = (REPO / "book" / "instructor_guide.md").read_text()
    [conda] = [part for part in guide.split("\n- ") if part.startswith("**Conda**")]
    header = (REPO / "environment.yml").read_text().split("\nname:", 1)[0]
    for text in (conda, header):
        assert "conda env create -f environment.yml" in text and "conda activate attention-course" in text
        assert "pip install -e . --no-deps" in text
        assert "python -m course_utils.book fetch-assets" in text


def test_the_guide_says_what_a_plain_jupyter_book_build_needs_and_the_readme_points_to_it():
    assert "(book/instructor_guide.md)" in (REPO / "README.md").read_text()
    for text in ((REPO / "book" / "instructor_guide.md").read_text(),):
        section = re.search(r"(?i)without make", text)
        assert section, "no section on building without make"
        plain = text[section.start():section.start() + 2000]
        assert "course_utils.book fetch-assets" in plain
        assert all(variable in plain for variable in ("HF_HUB_OFFLINE=1", "TRANSFORMERS_OFFLINE=1", "PYTHONHASHSEED=0"))
        assert "execution cache" in plain


def test_the_rebuild_and_pilot_targets_have_help_and_a_row_in_the_readme():
    """Issue 58's targets: each in `make help` and in the README's command table."""
    listed = make("help").stdout
    readme = (REPO / "README.md").read_text()
    for target in ("assets", "study", "pilot"):
        assert re.search(rf"^  make {target} +\S", listed, re.MULTILINE), target
        assert f"| `make {target}` |" in readme, target
