"""The pinned stack: requirements.lock and its conda mirror environment.yml."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from course_utils.authoring import lockfile

ROOT = Path(__file__).resolve().parents[1]


def test_environment_yml_mirrors_the_lock_exactly():
    lock, environment = lockfile.lock_pins(), lockfile.environment_pins()
    assert environment == lock, (
        "environment.yml and requirements.lock differ; run `python -m course_utils.authoring.lockfile`:\n"
        f"only in the lock: {sorted(set(lock.items()) - set(environment.items()))}\n"
        f"only in environment.yml: {sorted(set(environment.items()) - set(lock.items()))}"
    )


def test_environment_yml_is_exactly_what_the_generator_writes():
    assert (ROOT / "environment.yml").read_text() == lockfile.environment_yml(lockfile.lock_pins())


def test_the_stack_of_the_design_is_pinned():
    pins = lockfile.lock_pins()
    assert pins["torch"] == "2.13.0"
    assert pins["jupyter-book"] == "1.0.4.post1"
    assert pins["nbval"].startswith("0.11.")
    assert pins["numpy"].startswith("2.")
    assert pins["transformers"].startswith("5.")
    assert pins["ipywidgets"].startswith("8.")
    for name in ["myst-nb", "jupytext", "ipykernel", "tokenizers", "safetensors", "plotly", "tqdm", "pytest",
                 "hypothesis", "sphinx-exercise", "sphinxcontrib-bibtex", "playwright"]:
        assert name in pins, f"{name} is not pinned in requirements.lock"


def test_every_direct_requirement_is_locked():
    pins = lockfile.lock_pins()
    for line in (ROOT / "requirements.in").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name = lockfile.normalize(re.split(r"[<>=!~ ]", line, maxsplit=1)[0])
            assert name in pins, f"{name} (requirements.in) is missing from requirements.lock: run `make lock`"


def test_the_lock_pins_each_package_once_and_not_this_package():
    pins = lockfile.lock_pins()
    assert "course-utils" not in pins


@pytest.mark.parametrize(
    "lines, message",
    [
        (["numpy>=2"], r"x:1: expected an exact pin 'name==version', got 'numpy>=2'"),
        (["numpy==2.0", "NumPy==2.1"], r"x:2: numpy is pinned twice"),
    ],
)
def test_parse_pins_rejects_loose_or_repeated_pins(lines, message):
    with pytest.raises(ValueError, match=message):
        lockfile.parse_pins(lines, "x")


def test_parse_pins_skips_comments_and_normalizes_names():
    assert lockfile.parse_pins(["# c", "", "Jupyter_Book==1.0  # pinned"], "x") == {"jupyter-book": "1.0"}
