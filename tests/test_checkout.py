"""The authoring tools act on the checkout they are run in, or refuse, naming both places.

An environment may import course_utils from another checkout than the one you are in (an
editable install made elsewhere, a shared .venv): ``lessons sync``, ``new-lesson``, ``handouts``
and the others then must not write into the other checkout.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from course_utils import authoring
from course_utils.authoring import CheckoutError, checkout, find_book
from course_utils.authoring.lessons import repository

REPO = Path(__file__).resolve().parents[1]
FORK_URL = "https://github.com/a-fork/attention-copy"


def copy_of_the_book(root: Path) -> Path:
    """A checkout's book files (its config, toc and lesson sources, one notebook), with another URL."""
    (root / "lessons").mkdir(parents=True)
    config = (REPO / "_config.yml").read_text()
    ours = repository(REPO / "_config.yml").url
    assert ours in config
    (root / "_config.yml").write_text(config.replace(ours, FORK_URL))
    shutil.copy(REPO / "_toc.yml", root / "_toc.yml")
    for source in sorted((REPO / "lessons").glob("[0-9][0-9]_*.md")):
        shutil.copy(source, root / "lessons" / source.name)
    shutil.copy(REPO / "lessons" / "00_welcome.ipynb", root / "lessons" / "00_welcome.ipynb")
    return root


def fingerprint(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def repo_untouched(handouts_before: dict[str, float]) -> None:
    """What the tools would have written into this checkout (other agents may edit it meanwhile,
    so only the traces of these tools are looked for)."""
    assert not any(FORK_URL in p.read_text() for p in (REPO / "lessons").glob("*.md")), "lessons sync wrote here"
    assert not list((REPO / "lessons").glob("*_new_topic.*")) and "new_topic" not in (REPO / "_toc.yml").read_text()
    assert handouts_mtimes() == handouts_before, "handouts were written into this checkout's _build"


def handouts_mtimes() -> dict[str, float]:
    return {p.name: p.stat().st_mtime for p in (REPO / "_build" / "handouts").glob("*")}


def tool(module: str, *args: str, cwd: Path, pythonpath: Path | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    return subprocess.run([sys.executable, "-m", f"course_utils.authoring.{module}", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


def test_the_book_is_found_from_any_folder_inside_it(tmp_path):
    book = copy_of_the_book(tmp_path / "clone")
    assert find_book(book / "lessons") == book.resolve()
    assert checkout(book / "lessons", package_checkout=book) == book.resolve()
    assert find_book(tmp_path) is None


def test_outside_a_checkout_the_tools_refuse_saying_where_they_were_run(tmp_path):
    with pytest.raises(CheckoutError, match=f"{tmp_path}.*not inside a course checkout"):
        checkout(tmp_path, package_checkout=REPO)


def test_a_package_from_another_checkout_is_refused_naming_both(tmp_path):
    book = copy_of_the_book(tmp_path / "clone")
    with pytest.raises(CheckoutError) as refused:
        checkout(book, package_checkout=REPO)
    assert str(book.resolve()) in str(refused.value) and str(REPO) in str(refused.value)
    assert "pip install --no-deps -e" in str(refused.value)


@pytest.mark.parametrize("command", [["lessons", "sync"], ["scaffold", "new_topic", "--no-execute"], ["handouts"]])
def test_a_tool_run_in_another_clone_leaves_the_package_checkout_alone(tmp_path, command):
    """This environment's course_utils is the editable install of REPO; run from another clone, the
    tools used to write into REPO (lessons.ROOT followed the package)."""
    assert authoring.PACKAGE_CHECKOUT == REPO, "this test needs the editable install of this checkout"
    book = copy_of_the_book(tmp_path / "clone")
    handouts_before = handouts_mtimes()
    before_clone = fingerprint(book)
    result = tool(*command, cwd=book / "lessons")
    assert result.returncode != 0, result.stdout
    assert str(book.resolve()) in result.stderr and str(REPO) in result.stderr, result.stderr
    repo_untouched(handouts_before)
    assert fingerprint(book) == before_clone


def test_a_package_installed_from_no_checkout_acts_on_the_clone_it_is_run_in(tmp_path):
    """An installed (not editable) course_utils: the tools work on the book of the current directory."""
    site = tmp_path / "env" / "lib" / "site-packages"
    shutil.copytree(REPO / "src" / "course_utils", site / "course_utils",
                    ignore=shutil.ignore_patterns("__pycache__", "assets"))
    book = copy_of_the_book(tmp_path / "clone")
    handouts_before = handouts_mtimes()

    synced = tool("lessons", "sync", cwd=book / "lessons", pythonpath=site)
    assert synced.returncode == 0, synced.stderr
    assert FORK_URL in (book / "lessons" / "04_self_attention.md").read_text()
    assert FORK_URL in (book / "lessons" / "00_welcome.ipynb").read_text()

    scaffolded = tool("scaffold", "new_topic", "--no-execute", cwd=book, pythonpath=site)
    assert scaffolded.returncode == 0, scaffolded.stderr
    [new] = book.glob("lessons/*_new_topic.md")
    assert f"lessons/{new.stem}" in (book / "_toc.yml").read_text()

    handouts = tool("handouts", "00_welcome", cwd=book, pythonpath=site)
    assert handouts.returncode == 0, handouts.stderr
    assert (book / "_build" / "handouts" / "00_welcome.ipynb").is_file()

    repo_untouched(handouts_before)
