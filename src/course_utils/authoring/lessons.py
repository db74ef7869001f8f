"""Lessons as files: repository settings, Colab links, set-up cells, execution into ``.ipynb``.

The repository URL and branch are written once, in ``_config.yml``. Everything that names them
in a lesson (the Colab badge, the ``pip install`` line of the set-up cell) is derived here, and
``python -m course_utils.authoring.lessons sync`` rewrites the lessons after a change.

``python -m course_utils.authoring.lessons execute [LESSON ...]`` executes lessons from their
MyST markdown and writes the paired ``.ipynb`` with outputs. It runs offline
(``HF_HUB_OFFLINE=1``), records no timings, and so writes the same bytes every time. The one
exception is a cell tagged ``nbval-ignore-output`` (timings, the machine's environment, a live
training run): its output cannot repeat, so the output already committed is kept while the cell's
source and the bundled models are unchanged (the notebook records the bundle's digest, ``BUNDLE_KEY``
in its metadata; ``--refresh-unstable`` replaces the outputs with this run's in any case). nbval reads its markers from the
cell tags; a lesson never carries them as visible comments, which a learner would read.

Checks that guard a claim of the prose are **check cells**: a code cell tagged ``remove-cell`` (the
site shows nothing of it) or, when it prints a result the reader should see, ``remove-input`` (the
site shows that output, not the code), whose first line says in words what it checks, as the
title of a Colab form (``# @title check: every row sums to 1``).
Its metadata folds it wherever the notebook opens: ``cellView: form`` (Colab shows the title and
hides the code) and ``jupyter.source_hidden`` (JupyterLab and Notebook 7 collapse its code). That
metadata lives in the lesson's ``.md``, the one source of both files: jupytext round-trips it, so
it survives a learner saving the paired notebook in JupyterLab, which rewrites the ``.md`` from
the notebook. Authors need not type it: ``sync`` (run by ``make lessons``) turns a cell whose first
line is ``# check: ...`` into such a form, in the ``.md`` and in the ``.ipynb``.
:func:`check_cell_problems` finds the cells that break these rules.

Lessons and their lab pages (:mod:`course_utils.pages`) are executed, paired and checked alike.

``python -m course_utils.authoring.lessons cache CACHE_DIR`` puts each lesson's committed ``.ipynb``
into the book's execution cache (jupyter-cache, keyed on the code cells) as that lesson's executed
notebook. ``make test`` runs it right after nbval has checked that the committed outputs are what a
fresh run gives, so the PDF and the site are built from outputs just validated instead of executing
every lesson a second time.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from ..bundle import digest as bundle_digest
from ..pages import is_lab, lab_of, lesson_of  # noqa: F401  (the page kinds, re-exported)
from . import ROOT, kernel_retry, require_checkout

LESSONS_DIR = ROOT / "lessons"
CONFIG = ROOT / "_config.yml"
LESSON_NAME = re.compile(r"^\d\d_[a-z0-9_]+$")
CELL_TIMEOUT_S = 600
UNSTABLE_TAG = "nbval-ignore-output"
# the notebook metadata (under "course_utils") that records which bundle its unstable outputs are from
BUNDLE_KEY = "unstable_outputs_bundle"
NBVAL_COMMENT = re.compile(r"^[ \t]*#[ \t]*NBVAL_[A-Z_]+", re.MULTILINE)  # nbval's comment markers, refused
CHECK_TITLE = "# @title check: "  # a check cell's first line: Colab's form title, then what it checks
CHECK_LABEL = re.compile(r"^# @title check: \S")
# how an author may start a check cell (``# check: ...``, ``#@title check: ...``); sync writes CHECK_TITLE
CHECK_SPELLING = re.compile(r"^#[ \t]*(?:@title[ \t]*)?check:[ \t]*(?=\S)")
# Colab's form syntax a check must not hold: a field or text of the form, options after the title
COLAB_FORM_SYNTAX = re.compile(r"#[ \t]*@(?:param|markdown)\b")
FOLD = {"cellView": "form", "jupyter": {"source_hidden": True}}  # a check cell's metadata, folded
CODE_WIDTH = 88  # columns of a lesson's code lines (tests/test_lessons.py)
HIDDEN_INPUT_TAGS = {"remove-input", "remove-cell"}
ASSERT = re.compile(r"^[ \t]*assert\b", re.MULTILINE)

BADGE_IMAGE = "https://colab.research.google.com/assets/colab-badge.svg"
BADGE_LINE = re.compile(r"^\[!\[Open In Colab\]\(([^)]*)\)\]\(([^)]*)\)[ \t]*$", re.MULTILINE)
INSTALL_LINE = re.compile(r'^([ \t]*%pip install --quiet )"course_utils @ git\+[^"]*"[ \t]*$', re.MULTILINE)

# The set-up cell, the first code cell of every page. Its comment says what a learner needs to know;
# `sync` rewrites the comment of every page's set-up cell to this one.
SETUP_COMMENT = """\
# Run this cell first: in Colab it installs the course's package, and everywhere
# it prepares the figures."""
SETUP_CELL = SETUP_COMMENT + """
import sys

if "google.colab" in sys.modules:
    %pip install --quiet "{pip_spec}"

from course_utils.env import setup_notebook

setup_notebook()"""
# the comment lines that open a set-up cell, whatever they say (group 1), before its install test
SETUP_HEAD = re.compile(r'^((?:#[^\n]*\n)+)(?=import sys\n\nif "google\.colab" in sys\.modules:\n)', re.MULTILINE)


@dataclass(frozen=True)
class Repository:
    """Where the course lives: ``url`` (a GitHub URL) and ``branch``, from ``_config.yml``."""

    url: str
    branch: str

    @property
    def github_path(self) -> str:
        """``owner/name`` of the GitHub repository."""
        match = re.fullmatch(r"https://github\.com/([^/]+/[^/]+?)(?:\.git)?/?", self.url)
        if not match:
            raise ValueError(f"expected repository.url in _config.yml to be https://github.com/OWNER/NAME, got {self.url!r}")
        return match.group(1)

    def colab_url(self, notebook: str) -> str:
        """Colab's address for a notebook of the repository, e.g. ``lessons/01_rnn_recap.ipynb``."""
        return f"https://colab.research.google.com/github/{self.github_path}/blob/{self.branch}/{notebook}"

    def pip_spec(self) -> str:
        """The ``pip install`` requirement of the course package at this repository and branch."""
        return f"course_utils @ git+{self.url.rstrip('/')}@{self.branch}"


def repository(config: Path = CONFIG) -> Repository:
    """The repository settings of ``_config.yml``."""
    import yaml

    settings = yaml.safe_load(config.read_text(encoding="utf-8")).get("repository") or {}
    if not settings.get("url") or not settings.get("branch"):
        raise ValueError(f"expected repository.url and repository.branch in {config}")
    return Repository(url=str(settings["url"]), branch=str(settings["branch"]))


def page_sources(lessons_dir: Path = LESSONS_DIR) -> list[Path]:
    """Every executed page's MyST markdown file: each lesson (``NN_slug.md``), followed by its lab
    page when it has one (``NN_slug_lab.md``). All are executed, paired and checked alike."""
    return sorted((p for p in lessons_dir.glob("*.md") if LESSON_NAME.match(p.stem)), key=lambda p: p.stem)


def lesson_sources(lessons_dir: Path = LESSONS_DIR) -> list[Path]:
    """Every lesson's MyST markdown file, in lesson order (``NN_slug.md``; lab pages left out)."""
    return [p for p in page_sources(lessons_dir) if not is_lab(p)]


def lab_sources(lessons_dir: Path = LESSONS_DIR) -> list[Path]:
    """Every lab page's MyST markdown file (``NN_slug_lab.md``), in lesson order."""
    return [p for p in page_sources(lessons_dir) if is_lab(p)]


def badge_markdown(repo: Repository, notebook: str) -> str:
    """The Colab badge line of a lesson (markdown)."""
    return f"[![Open In Colab]({BADGE_IMAGE})]({repo.colab_url(notebook)})"


def setup_cell(repo: Repository) -> str:
    """The source of the set-up cell that installs the course package from ``repo`` in Colab."""
    return SETUP_CELL.format(pip_spec=repo.pip_spec())


def _sync_setup(source: str, repo: Repository) -> str:
    """``source`` (a page's text or its set-up cell) with the set-up cell's comment and install line
    of :data:`SETUP_CELL`."""
    source = SETUP_HEAD.sub(lambda m: SETUP_COMMENT + "\n", source, count=1)
    return INSTALL_LINE.sub(lambda m: f'{m.group(1)}"{repo.pip_spec()}"', source, count=1)


def sync_text(text: str, repo: Repository, notebook: str) -> str:
    """A lesson's text with its badge and set-up cell pointing at ``repo``, the set-up cell's
    comment of :data:`SETUP_CELL`, and every check cell folded (:func:`fold_check_cell`)."""
    if not BADGE_LINE.search(text):
        raise ValueError(f"{notebook}: no Colab badge line found (expected {badge_markdown(repo, notebook)!r})")
    if not INSTALL_LINE.search(text):
        raise ValueError(f"{notebook}: no set-up cell with a '%pip install --quiet \"course_utils @ git+…\"' line")
    text = BADGE_LINE.sub(lambda m: badge_markdown(repo, notebook), text, count=1)
    return fold_checks_in_text(_sync_setup(text, repo))


def fold_checks_in_text(text: str) -> str:
    """A page's MyST text with every check cell folded (:func:`fold_check_cell`).

    The text is unchanged, byte for byte, when every check cell is folded already; otherwise it is
    written back by jupytext, as a save of the paired notebook in JupyterLab would write it.
    """
    import jupytext

    notebook = jupytext.reads(text, fmt="md:myst")
    if not sum(fold_check_cell(cell) for cell in notebook.cells):
        return text
    return jupytext.writes(notebook, fmt="md:myst")


def sync_notebook(path: Path, repo: Repository, notebook: str) -> bool:
    """Point the badge and set-up cell of a committed ``.ipynb`` at ``repo``, give its set-up cell
    the comment of :data:`SETUP_CELL` and fold its check cells, keeping its outputs.

    Returns whether the notebook changed. Only those lines and the check cells' metadata change, so
    the notebook stays the twin of its synced ``.md`` and its outputs stay valid (they depend on
    neither the URL nor comments).
    """
    import nbformat

    if not path.is_file():
        return False
    original = path.read_text(encoding="utf-8")
    book = nbformat.reads(original, as_version=4)
    for cell in book.cells:
        if cell.cell_type == "markdown":
            cell.source = BADGE_LINE.sub(lambda m: badge_markdown(repo, notebook), cell.source, count=1)
        elif cell.cell_type == "code":
            if INSTALL_LINE.search(cell.source):
                cell.source = _sync_setup(cell.source, repo)
            fold_check_cell(cell)
    text = nbformat.writes(book) + "\n"
    if text == original:
        return False
    path.write_text(text, encoding="utf-8")
    return True


def sync(paths: list[Path] | None = None, repo: Repository | None = None) -> list[Path]:
    """Point every lesson's badge and set-up cell, in its ``.md`` and its ``.ipynb``, at ``repo``.

    ``repo`` defaults to the repository of ``_config.yml``. Returns the files that changed.
    """
    repo = repo or repository()
    changed = []
    for path in paths or page_sources():
        notebook = path.with_suffix(".ipynb").relative_to(ROOT).as_posix()
        text = path.read_text(encoding="utf-8")
        new = sync_text(text, repo, notebook)
        if new != text:
            path.write_text(new, encoding="utf-8")
            changed.append(path)
        if sync_notebook(path.with_suffix(".ipynb"), repo, notebook):
            changed.append(path.with_suffix(".ipynb"))
    return changed


def has_unstable_output(cell) -> bool:
    """Whether nbval ignores this code cell's output (the ``nbval-ignore-output`` tag)."""
    return UNSTABLE_TAG in cell.get("metadata", {}).get("tags", [])


def is_check_cell(cell) -> bool:
    """Whether a code cell is a check cell: its first line is ``# @title check: ...`` (or a spelling
    that :func:`fold_check_cell` turns into it, such as ``# check: ...``)."""
    return cell.cell_type == "code" and bool(CHECK_SPELLING.match(cell.source))


def is_folded(cell) -> bool:
    """Whether a cell's metadata folds it in Colab (``cellView: form``) and in JupyterLab
    (``jupyter.source_hidden``)."""
    metadata = cell.get("metadata", {})
    return metadata.get("cellView") == "form" and (metadata.get("jupyter") or {}).get("source_hidden") is True


def _fit_comment_lines(lines: list[str], width: int = CODE_WIDTH) -> list[str]:
    """The comment lines that open a cell, each cut to ``width`` columns at a space where it is longer:
    the words cut off open the next comment line (a new one when the next line is not a comment)."""
    lines = list(lines)
    index = 0
    while index < len(lines) and lines[index].startswith("#"):
        line = lines[index]
        cut = line.rfind(" ", 0, width + 1)
        start = len(CHECK_TITLE) if index == 0 else 2  # never cut into the title's prefix or the '# '
        if len(line) > width and cut > start:
            head, overflow = line[:cut].rstrip(), line[cut + 1:].strip()
            lines[index] = head
            following = lines[index + 1] if index + 1 < len(lines) else ""
            if re.match(r"# \S", following):
                lines[index + 1] = f"# {overflow} {following[2:]}"
            else:
                lines.insert(index + 1, f"# {overflow}")
        index += 1
    return lines


def fold_check_cell(cell) -> bool:
    """Make a check cell what a learner meets folded wherever its notebook opens; returns whether it
    changed (a cell that is not a check cell never does).

    Its first line becomes ``# @title check: ...`` (Colab shows it as the form's title; comment lines
    longer than 88 columns are cut, the words cut off going to the next line), and its metadata gets
    ``cellView: form`` (Colab hides the code of a form: googlecolab/colabtools#2154) and
    ``jupyter.source_hidden: true`` (JupyterLab collapses its code). The metadata's keys are sorted,
    as in the ``.ipynb``, so that the ``.md`` written from either file is the same.
    """
    if not is_check_cell(cell):
        return False
    lines = cell.source.split("\n")
    lines[0] = CHECK_SPELLING.sub(CHECK_TITLE, lines[0], count=1)
    source = "\n".join(_fit_comment_lines(lines))
    metadata = dict(cell.metadata)
    metadata["cellView"] = FOLD["cellView"]
    metadata["jupyter"] = {**(metadata.get("jupyter") or {}), **FOLD["jupyter"]}
    metadata = {key: metadata[key] for key in sorted(metadata)}
    if source == cell.source and list(metadata.items()) == list(cell.metadata.items()):
        return False
    cell.source = source
    cell.metadata.clear()
    cell.metadata.update(metadata)
    return True


def check_cell_problems(cells) -> list[str]:
    """What breaks the rules of markers and check cells in a page's cells, one line per problem:
    an nbval marker written as a comment; a check cell the site would show; a cell hidden on the
    site that asserts without saying what it checks; a check cell that is not a folded Colab form
    titled ``check: ...`` (``lessons sync`` makes it one), or that holds Colab form syntax."""
    problems = []
    sync = "`python -m course_utils.authoring.lessons sync` (or `make lessons`) folds it"
    for index, cell in enumerate(cells):
        if cell.cell_type != "code":
            continue
        tags = set(cell.get("metadata", {}).get("tags", []))
        if NBVAL_COMMENT.search(cell.source):
            problems.append(f"cell {index}: an nbval marker as a visible comment; use the cell tag "
                            f"(e.g. `:tags: [{UNSTABLE_TAG}]`)")
        if is_check_cell(cell) and not tags & HIDDEN_INPUT_TAGS:
            problems.append(f"cell {index}: a check cell the site shows; tag it remove-input (remove-cell if it "
                            "prints nothing)")
        if tags & HIDDEN_INPUT_TAGS and ASSERT.search(cell.source) and not is_check_cell(cell):
            problems.append(f"cell {index}: a hidden cell that asserts; its first line should say what it checks "
                            f"('{CHECK_TITLE}...')")
        if not is_check_cell(cell):
            continue
        if not CHECK_LABEL.match(cell.source):
            problems.append(f"cell {index}: a check cell whose first line is not '{CHECK_TITLE}...', the title "
                            f"Colab shows; {sync}")
        if not is_folded(cell):
            problems.append(f"cell {index}: a check cell that opens unfolded (it needs cellView: form and "
                            f"jupyter.source_hidden: true in its metadata); {sync}")
        title = cell.source.split("\n", 1)[0]
        if COLAB_FORM_SYNTAX.search(cell.source) or "{" in title:
            problems.append(f"cell {index}: a check cell with Colab form syntax (a '# @param' or '# @markdown' "
                            "line, or '{' in its title), which Colab would show or misread; reword it")
    return problems


def visible_asserts(cells) -> int:
    """How many ``assert`` lines sit in code cells a reader of the site sees."""
    return sum(
        len(ASSERT.findall(cell.source))
        for cell in cells
        if cell.cell_type == "code" and not set(cell.get("metadata", {}).get("tags", [])) & HIDDEN_INPUT_TAGS
    )


def made_with_bundle(notebook) -> str | None:
    """The digest of the bundled models a notebook's unstable outputs were made with (None: not
    recorded)."""
    return notebook.metadata.get("course_utils", {}).get(BUNDLE_KEY)


def keep_committed_unstable_outputs(notebook, committed_path: Path, bundle: str | None = None) -> int:
    """Give unchanged unstable cells of ``notebook`` the outputs committed in ``committed_path``,
    if those were made with the bundle ``bundle`` (a digest, :func:`course_utils.bundle.digest`;
    None: whatever bundle). After ``make assets`` a cell's code may be unchanged while what it
    shows (a live run's loss curve) is not, so then every unstable output is this run's.

    Returns how many cells kept their committed output.
    """
    import nbformat

    if not committed_path.is_file():
        return 0
    committed = nbformat.read(committed_path, as_version=4)
    if bundle is not None and made_with_bundle(committed) != bundle:
        return 0
    previous = {c.source: c.outputs for c in committed.cells if c.cell_type == "code" and has_unstable_output(c)}
    kept = 0
    for cell in notebook.cells:
        if cell.cell_type == "code" and has_unstable_output(cell) and cell.source in previous:
            cell.outputs = previous[cell.source]
            kept += 1
    return kept


def run_lesson(path: Path, timeout: int = CELL_TIMEOUT_S):
    """Execute a lesson's markdown in a fresh kernel, offline; return ``(notebook, seconds)``.

    The notebook gets stable cell ids (``cell-0``, ``cell-1``, ...) and no execution timings, so
    the same lesson gives the same notebook every time. Raises on the first failing cell.
    """
    import jupytext
    from nbclient import NotebookClient

    if not path.is_file():
        raise FileNotFoundError(f"expected a lesson file such as lessons/01_rnn_recap.md, got {path}")
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    kernel_retry.install()  # a kernel that dies at start (another starting beside it) is started again
    notebook = jupytext.read(path)
    for index, cell in enumerate(notebook.cells):
        cell.id = f"cell-{index}"  # nbformat would draw random ids
    client = NotebookClient(
        notebook,
        timeout=timeout,
        kernel_name="python3",
        record_timing=False,
        resources={"metadata": {"path": str(path.parent)}},
    )
    start = time.perf_counter()
    client.execute()
    for cell in notebook.cells:
        if cell.cell_type == "code":
            cell.outputs = merge_streams(cell.outputs)
    return notebook, time.perf_counter() - start


def merge_streams(outputs: list) -> list:
    """Outputs with each run of consecutive same-name stream outputs merged into one.

    How a kernel cuts its stdout into messages depends on timing (a busy machine cuts more), so
    without this a lesson would not give the same notebook bytes on every run.
    """
    merged: list = []
    for output in outputs:
        previous = merged[-1] if merged else None
        if (output.get("output_type") == "stream" and previous is not None
                and previous.get("output_type") == "stream" and previous.get("name") == output.get("name")):
            previous["text"] = previous["text"] + output["text"]
        else:
            merged.append(output)
    return merged


def execute(path: Path, timeout: int = CELL_TIMEOUT_S, refresh_unstable: bool = False) -> float:
    """Execute a lesson (:func:`run_lesson`) and write its ``.ipynb`` twin with outputs.

    Unstable outputs (see :func:`keep_committed_unstable_outputs`) keep their committed version
    unless ``refresh_unstable``. Returns the execution time in seconds.
    """
    import jupytext
    import nbformat

    notebook, elapsed = run_lesson(path, timeout)
    notebook.metadata.pop("widgets", None)  # widget state carries random model ids
    notebook.metadata.get("language_info", {}).pop("version", None)  # 3.11.x: not the lesson's business
    out = path.with_suffix(".ipynb")
    bundle = bundle_digest()
    if not refresh_unstable:
        keep_committed_unstable_outputs(notebook, out, bundle)
    if any(c.cell_type == "code" and has_unstable_output(c) for c in notebook.cells):
        notebook.metadata.setdefault("course_utils", {})[BUNDLE_KEY] = bundle
    jupytext.write(notebook, out, fmt="ipynb")
    nbformat.validate(nbformat.read(out, as_version=4))
    return elapsed


def seed_execution_cache(cache_dir: Path, paths: list[Path] | None = None) -> int:
    """Cache each lesson's committed ``.ipynb`` as the executed notebook of its ``.md`` in the
    jupyter-cache at ``cache_dir`` (the one ``jupyter-book build`` uses). Valid only when nbval has
    just passed on those notebooks, which the current ``course_utils`` gave: the cache is marked as
    this code's (:func:`course_utils.book.mark_execution_cache`), so the build keeps it. Returns the
    number of lessons cached.

    A lesson re-executed with its code unchanged (new outputs, the same ``.md``) replaces its cached
    outputs, and its ``.md`` is touched: Sphinx rebuilds a page only when its source is newer than
    the last build, so the site would otherwise keep the old outputs."""
    import nbformat
    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn

    from ..book import mark_execution_cache, package_source_hash

    def outputs(notebook) -> list:
        return [cell.get("outputs") for cell in notebook.cells if cell.cell_type == "code"]

    cache = get_cache(str(cache_dir))
    paths = paths or page_sources()
    for path in paths:
        notebook = nbformat.read(path.with_suffix(".ipynb"), as_version=4)
        try:
            cached = cache.get_cache_bundle(cache.match_cache_notebook(notebook).pk).nb
        except KeyError:  # not cached, or its code changed: the .md changed with it, Sphinx rereads it
            cached = None
        bundle = CacheBundleIn(notebook, str(path), data={"validated_by": "nbval"})
        cache.cache_notebook_bundle(bundle, check_validity=False, overwrite=True)
        if cached is not None and outputs(cached) != outputs(notebook):
            os.utime(path)
    mark_execution_cache(cache_dir, package_source_hash())
    return len(paths)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m course_utils.authoring.lessons", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("sync", help="point badges and set-up cells at the repository of _config.yml")
    run = sub.add_parser("execute", help="execute lessons and write their .ipynb twins with outputs")
    run.add_argument("lessons", nargs="*", type=Path, help="lesson .md files (default: all)")
    run.add_argument("--refresh-unstable", action="store_true",
                     help="also replace the committed outputs of cells tagged nbval-ignore-output")
    seed = sub.add_parser("cache", help="cache the committed .ipynb as the book's executed lessons (after nbval)")
    seed.add_argument("cache_dir", type=Path, help="the book's jupyter-cache folder, e.g. _build/.jupyter_cache")
    args = parser.parse_args(argv)
    require_checkout()
    if args.command == "cache":
        print(f"{seed_execution_cache(args.cache_dir)} lessons cached in {args.cache_dir} from their committed .ipynb")
        return 0
    if args.command == "sync":
        changed = sync()
        print(f"{len(changed)} lesson file(s) updated" + "".join(f"\n  {p.relative_to(ROOT)}" for p in changed))
        return 0
    paths = [p.resolve() for p in args.lessons] or page_sources()
    sync(paths)
    for path in paths:
        print(f"executing {path.relative_to(ROOT)} ...", end=" ", flush=True)
        print(f"{execute(path, refresh_unstable=args.refresh_unstable):.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
