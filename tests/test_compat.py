"""Supported versions: the ranges pyproject.toml declares, `make compat`'s stacks, lesson 00's report,
the Python versions `make` accepts, and `make browser`'s fallbacks.

`make compat` itself (every lesson under three stacks, ~20 minutes) runs in `.ci/run` after
`make test`; these tests check the parts of it that need no venv.
"""

from __future__ import annotations

import os
import re
import stat
import subprocess
import textwrap
import tomllib
from pathlib import Path

import pytest
from packaging.specifiers import SpecifierSet

from course_utils import versions
from course_utils.authoring import browser, compat
from course_utils.authoring.lessons import ROOT

PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def test_every_direct_dependency_declares_a_floor_that_the_floor_stack_installs():
    declared = versions.parse_requirements(PROJECT["dependencies"])
    assert set(declared) == set(versions.PACKAGES)
    floor = next(s for s in compat.STACKS if s.name == "floor").constraints()
    for name, spec in declared.items():
        if name == "torch":  # torch is 2.13.0 in every stack (its CPU build; see compat's docstring)
            assert name not in floor
            continue
        assert floor[name] == versions.floor(spec), name
        assert SpecifierSet(spec).contains(floor[name])


def test_the_colab_stack_is_inside_the_declared_ranges_and_runs_colabs_python():
    colab = next(s for s in compat.STACKS if s.name == "colab")
    assert colab.python == "3.12"
    declared = versions.parse_requirements(PROJECT["dependencies"])
    for name, version in colab.constraints().items():
        assert SpecifierSet(declared[name]).contains(version), f"{name}=={version} is outside {declared[name]}"
    assert colab.constraints()["transformers"].startswith("4.57")  # the last 4.x: Colab's through 2025


def test_the_lock_is_inside_the_declared_ranges():
    declared = versions.parse_requirements(PROJECT["dependencies"])
    locked = versions.locked()
    for name, spec in declared.items():
        assert SpecifierSet(spec).contains(locked[name].split("+")[0]), f"the lock's {name} {locked[name]} is outside {spec}"


def test_every_supported_python_is_run_by_a_stack_and_accepted_by_make():
    classifiers = versions.supported_pythons()
    assert classifiers == ("3.11", "3.12")
    assert compat.SUPPORTED_PYTHONS == classifiers
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^SUPPORTED_PYTHONS := (.+)$", makefile, re.MULTILINE).group(1).split() == list(classifiers)
    readme = (ROOT / "README.md").read_text()
    assert "Python 3.11 or 3.12" in readme


def fake_python(folder: Path, version: str) -> Path:
    path = folder / f"python{version}"
    path.write_text(f"#!/bin/sh\necho {version}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


@pytest.mark.parametrize("version", ["3.9", "3.13"])
def test_make_refuses_an_unsupported_python_with_a_clear_message(tmp_path, version):
    venv = tmp_path / "venv"
    done = subprocess.run(["make", "--no-print-directory", "install", f"PYTHON={fake_python(tmp_path, version)}",
                           f"VENV={venv}"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
    assert f"is Python {version}, and the course supports Python 3.11 3.12" in done.stdout + done.stderr
    assert not venv.exists(), "a venv was created with an unsupported Python"


def test_make_refuses_a_python_that_does_not_run(tmp_path):
    done = subprocess.run(["make", "--no-print-directory", "install", f"PYTHON={tmp_path / 'nothing'}",
                           f"VENV={tmp_path / 'venv'}"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and "is Python none" in done.stdout + done.stderr


def test_find_python_names_what_to_install(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("PYENV_ROOT", raising=False)
    with pytest.raises(RuntimeError, match=r"make compat needs Python 3\.99 .*install it"):
        compat.find_python("3.99")


def test_find_python_checks_the_version_the_interpreter_reports(monkeypatch, tmp_path):
    fake_python(tmp_path, "3.12")
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("PYENV_ROOT", raising=False)
    assert compat.find_python("3.12") == str(tmp_path / "python3.12")
    (tmp_path / "python3.12").write_text("#!/bin/sh\necho 3.10\n")  # a pyenv shim of another version
    with pytest.raises(RuntimeError):
        compat.find_python("3.12")


def test_find_python_looks_in_pyenv_root_before_the_home_folder(monkeypatch, tmp_path):
    # pyenv installed outside the home folder (PYENV_ROOT), as on a machine whose HOME is elsewhere
    bin_folder = tmp_path / "pyenv" / "versions" / "3.12.9" / "bin"
    bin_folder.mkdir(parents=True)
    fake_python(bin_folder, "3.12")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PYENV_ROOT", str(tmp_path / "pyenv"))
    assert compat.find_python("3.12") == str(bin_folder / "python3.12")


JUNIT = textwrap.dedent("""\
    <?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest">
    <testcase classname="lessons.00_welcome.ipynb" name="Cell 0" file="lessons/00_welcome.ipynb" />
    <testcase classname="lessons.00_welcome.ipynb" name="Cell 1" file="lessons/00_welcome.ipynb" />
    <testcase classname="lessons.05_masking.ipynb" name="Cell 0" file="lessons/05_masking.ipynb" />
    <testcase classname="lessons.05_masking.ipynb" name="Cell 7" file="lessons/05_masking.ipynb">
      <failure message="Error">Traceback ...
    ImportError: cannot import name 'eager_attention_forward'</failure></testcase>
    <testcase classname="lessons.08_using_distilbert.ipynb" name="Cell 8" file="lessons/08_using_distilbert.ipynb">
      <failure message="#x1B[91mNotebook cell execution failed#x1B[0m">#x1B[94mCell 8: Timeout of 600 seconds exceeded executing cell
    ...
    #x1B[31mKeyboardInterrupt#x1B[39m: </failure></testcase>
    </testsuite></testsuites>
    """)


def test_read_junit_counts_cells_per_lesson_and_names_each_failure(tmp_path):
    report = tmp_path / "junit.xml"
    report.write_text(JUNIT)
    cells, failures = compat.read_junit(report)
    assert cells == {"00_welcome": (2, 2), "05_masking": (1, 2), "08_using_distilbert": (0, 1)}
    assert failures == ["05_masking Cell 7: ImportError: cannot import name 'eager_attention_forward'",
                        "08_using_distilbert Cell 8: Timeout of 600 seconds exceeded executing cell"]


def test_a_failure_is_named_by_the_exception_line_not_the_carets_printed_after_it():
    # what CI printed for plotly 5.20's refusal of font weight: "09_since_distilbert Cell 12: ^^^^^^"
    text = ("File .../basedatatypes.py:4392, in _process_kwargs\n-> 4392 raise err\n\n"
            "#x1B[31mValueError#x1B[39m: Invalid property specified for object of type "
            "plotly.graph_objs.layout.annotation.Font: 'weight'\n\nDid you mean \"size\"?\n\n"
            "    Valid properties:\n        color\n        size\n\nBad property path:\nweight\n^^^^^^\n")
    assert compat._reason(text) == ("ValueError: Invalid property specified for object of type "
                                    "plotly.graph_objs.layout.annotation.Font: 'weight'")
    assert compat._reason("something odd\n   ^^^\n") == "something odd"
    assert compat._reason("") == "(no message)"


def test_the_table_marks_failed_lessons_and_a_failed_stack_fails(tmp_path):
    report = tmp_path / "junit.xml"
    report.write_text(JUNIT)
    result = compat.Result(compat.STACKS[0], install_s=61, run_s=200)
    result.cells, result.failures = compat.read_junit(report)
    lessons = [ROOT / "lessons" / f"{n}.md" for n in ("00_welcome", "05_masking", "07_distillation")]
    table = compat.table([result], lessons)
    assert "| 00_welcome | 2/2 |" in table and "| 05_masking | 1/2 FAILED |" in table
    assert "| 07_distillation | not run |" in table and "| install (s) | 61 |" in table
    assert not result.ok
    result.failures = []
    assert result.ok


def test_compat_refuses_an_unknown_stack(capsys):
    with pytest.raises(SystemExit):
        compat.main(["floo"])
    assert "unknown stack(s) ['floo']" in capsys.readouterr().err


# ------------------------------------------------------------------ lesson 00's environment report


def test_the_report_says_tested_for_the_lock_and_never_fails_on_a_supported_version():
    rows = {row[0]: row for row in versions.report()}
    assert set(rows) == {"python", *versions.PACKAGES}
    assert all("tested" in verdict for _, _, _, verdict in rows.values()), rows  # this venv is the lock
    assert versions.unsupported() == []


@pytest.mark.parametrize("package, version, expected", [
    ("transformers", "4.57.6", "tested (Colab's 2025)"),
    ("transformers", "4.57.0", "tested (lowest supported)"),
    ("transformers", "5.2.0", "supported, not tested"),
    ("transformers", "4.46.3", "NOT SUPPORTED: needs transformers>=4.57"),
    ("numpy", "1.26.0", "tested (lowest supported)"),
    ("numpy", "1.25.2", "NOT SUPPORTED: needs numpy>=1.26"),
    ("torch", "2.13.0+cpu", "tested (pinned)"),
])
def test_status_of_a_version(package, version, expected):
    assert versions.status(package, version) == expected


def test_the_tested_versions_of_each_package_are_the_floor_colabs_and_the_pin_lowest_first():
    """Lesson 00's table lists them per row: what differs from row to row."""
    from packaging.version import Version

    for package in versions.PACKAGES:
        listed = versions.tested_versions(package).split(", ")
        expected = {versions.floor(versions.declared()[package]), versions.locked()[package]}
        expected |= {versions.COLAB_2025[package]} if package in versions.COLAB_2025 else set()
        assert listed == sorted(expected, key=Version), package
    assert versions.tested_versions("numpy") == "1.26, 2.0.2, " + versions.locked()["numpy"]
    assert versions.tested_versions("python") == ", ".join(versions.supported_pythons())


def test_status_of_a_package_the_course_does_not_declare_says_which_it_does():
    with pytest.raises(ValueError, match=r"expected one of the course's dependencies \[.*'numpy'.*\], got 'pandas'"):
        versions.status("pandas", "2.0")


def test_floor_needs_a_lower_bound():
    assert versions.floor(">=1.26,<3") == "1.26"
    with pytest.raises(ValueError, match="declares no floor"):
        versions.floor("<3")


# ------------------------------------------------------------------ make browser


def test_browser_prefers_an_installed_chromium(monkeypatch):
    monkeypatch.setattr(browser.shutil, "which", lambda name: f"/usr/bin/{name}" if name == "chromium" else None)
    assert browser.ensure() == "/usr/bin/chromium"


def test_browser_without_apt_installs_playwrights_chromium_and_says_so(monkeypatch, capsys):
    installed = []
    monkeypatch.setattr(browser.shutil, "which", lambda name: None)  # no chromium, no apt-get
    monkeypatch.setattr(browser, "playwright_chromium", lambda: "/cache/ms-playwright/chrome" if installed else None)

    def run(command, check=False):
        installed.append(command)
        return subprocess.CompletedProcess(command, 0)

    monkeypatch.setattr(browser.subprocess, "run", run)
    assert browser.ensure() == "/cache/ms-playwright/chrome"
    assert installed and installed[0][1:] == ["-m", "playwright", "install", "chromium"]
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and "installing Playwright's own Chromium" in out


def test_browser_says_what_to_install_when_nothing_works(monkeypatch):
    monkeypatch.setattr(browser.shutil, "which", lambda name: None)
    monkeypatch.setattr(browser, "playwright_chromium", lambda: None)
    monkeypatch.setattr(browser.subprocess, "run", lambda command, check=False: subprocess.CompletedProcess(command, 1))
    with pytest.raises(RuntimeError, match="apt-get install chromium.*brew install --cask chromium.*playwright install"):
        browser.ensure()


def test_the_site_test_finds_the_browser_the_same_way():
    conftest = (ROOT / "tests" / "site" / "conftest.py").read_text()
    assert "browser.system_chromium" in conftest and "browser.playwright_chromium" in conftest
    assert os.environ.get("COURSE_BROWSER", "chromium")  # exported by the Makefile


def test_the_instructor_guide_states_the_declared_floors():
    guide = (ROOT / "book" / "instructor_guide.md").read_text()
    section = guide.split("\n## Supported versions\n", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| ([a-z, ]+) \| ([^|]+) \|", section, re.MULTILINE)
    stated = {}
    for names, ranges in rows:
        for name, bound in zip(names.split(", "), re.findall(r"≥ ([0-9.]+)", ranges)):
            stated[name] = bound
    declared = versions.parse_requirements(PROJECT["dependencies"])
    assert {name: versions.floor(spec) for name, spec in declared.items()} == stated
