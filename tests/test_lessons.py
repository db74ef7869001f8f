"""Lessons as files: pairing with their .ipynb, Colab badge and set-up cell, the template.

nbval (``make notebooks``) checks that the committed outputs match a fresh run; these tests check
everything about the lesson files that needs no kernel.
"""

from __future__ import annotations

import re
from pathlib import Path

import jupytext
import nbformat
import pytest
import yaml

from course_utils.authoring import lessons
from course_utils.authoring.lessons import ROOT, Repository

PAGES = lessons.page_sources()  # every executed page: the lessons and their lab pages
SOURCES = lessons.lesson_sources()
NOTEBOOKS = sorted((ROOT / "lessons").glob("*.ipynb"))
TOC = yaml.safe_load((ROOT / "_toc.yml").read_text())
REPO = lessons.repository()


def code_cells(cells):
    return [c for c in cells if c.cell_type == "code"]


def test_there_are_lessons():
    assert [p.stem for p in SOURCES][:2] == ["00_welcome", "01_rnn_recap"]


def test_every_lesson_and_notebook_has_its_twin():
    assert {p.stem for p in PAGES} == {p.stem for p in NOTEBOOKS}, "a lesson lacks its .md or its .ipynb twin"


def test_every_lesson_is_in_the_toc_in_order():
    files = [c["file"] for part in TOC["parts"] for c in part["chapters"]]
    listed = [f for f in files if f.startswith("lessons/")]
    assert listed == [f"lessons/{p.stem}" for p in SOURCES]


def lab_entries(toc: dict) -> dict[str, list[str]]:
    """Each chapter of the toc with the files of its sections."""
    return {c["file"]: [s["file"] for s in c.get("sections", [])] for part in toc["parts"] for c in part["chapters"]}


def test_every_lab_page_sits_under_its_lesson_in_the_toc_and_nothing_else_does():
    sections = lab_entries(TOC)
    for lab in lessons.lab_sources():
        lesson = lessons.lesson_of(lab)
        assert lesson.is_file(), f"{lab.name}: a lab page needs its lesson, {lesson.name}"
        assert sections.get(f"lessons/{lesson.stem}") == [f"lessons/{lab.stem}"], (
            f"_toc.yml: expected lessons/{lab.stem} as the one section of lessons/{lesson.stem}"
        )
    labs = {f"lessons/{p.stem}" for p in lessons.lab_sources()}
    assert {f for files in sections.values() for f in files} == labs, "only lab pages are sections of a lesson"


def test_a_lab_page_links_back_to_its_lesson_and_its_lesson_links_to_it():
    for lab in lessons.lab_sources():
        lesson = lessons.lesson_of(lab)
        assert f"{{doc}}`{lesson.stem}`" in lab.read_text(encoding="utf-8"), f"{lab.name}: link its lesson"
        assert f"{{doc}}`{lab.stem}`" in lesson.read_text(encoding="utf-8"), f"{lesson.name}: link its lab page"


def test_page_kinds_split_the_pages_with_nothing_left_over(tmp_path):
    for stem in ("00_welcome", "07_distillation", "07_distillation_lab", "08_using_distilbert", "notes"):
        (tmp_path / f"{stem}.md").write_text("x")
    assert [p.stem for p in lessons.page_sources(tmp_path)] == [
        "00_welcome", "07_distillation", "07_distillation_lab", "08_using_distilbert"
    ]
    assert [p.stem for p in lessons.lesson_sources(tmp_path)] == ["00_welcome", "07_distillation", "08_using_distilbert"]
    assert [p.stem for p in lessons.lab_sources(tmp_path)] == ["07_distillation_lab"]


def test_the_book_numbers_lessons_01_on_as_their_files():
    """Lesson NN is chapter NN of the numbered part, so its exercises read 'Exercise NN.k'."""
    numbered = [c["file"] for part in TOC["parts"] if part.get("numbered") for c in part["chapters"]]
    expected = [f"lessons/{p.stem}" for p in SOURCES if p.stem != "00_welcome"]
    assert numbered == expected
    assert [int(Path(f).stem[:2]) for f in numbered] == list(range(1, len(numbered) + 1))


@pytest.mark.parametrize("source", PAGES, ids=lambda p: p.stem)
def test_md_and_ipynb_hold_the_same_cells(source):
    text = jupytext.read(source)
    notebook = nbformat.read(source.with_suffix(".ipynb"), as_version=4)
    stale = f"lessons/{source.stem}.ipynb is out of date with lessons/{source.name}"
    assert [c.cell_type for c in notebook.cells] == [c.cell_type for c in text.cells], (
        f"{stale}: their cells differ; run `make lessons` (it rebuilds the .ipynb from the .md)"
    )
    for index, (md_cell, nb_cell) in enumerate(zip(text.cells, notebook.cells)):
        assert nb_cell.source == md_cell.source, f"{stale}: cell {index} differs; run `make lessons`"


@pytest.mark.parametrize("source", PAGES, ids=lambda p: p.stem)
def test_lesson_is_a_paired_myst_notebook_with_a_python_kernel(source):
    text = source.read_text(encoding="utf-8")
    front = yaml.safe_load(text.split("---", 2)[1])
    assert front["jupytext"]["formats"] == "ipynb,md:myst"
    assert front["kernelspec"]["name"] == "python3"
    assert re.fullmatch(r"\d\d_[a-z0-9_]+", source.stem)


@pytest.mark.parametrize("source", PAGES, ids=lambda p: p.stem)
def test_committed_notebook_has_outputs_and_no_errors(source):
    notebook = nbformat.read(source.with_suffix(".ipynb"), as_version=4)
    cells = code_cells(notebook.cells)
    assert all(c.execution_count for c in cells), f"{source.name}: not every code cell was executed: run `make lessons`"
    for index, cell in enumerate(cells):
        for output in cell.outputs:
            assert output.output_type != "error", f"{source.name}: code cell {index} raised"
            assert not (output.output_type == "stream" and output.name == "stderr"), (
                f"{source.name}: code cell {index} wrote to stderr: {output.text[:200]!r}"
            )
    assert "widgets" not in notebook.metadata, "widget state holds random ids; `make lessons` strips it"


# ---------------------------------------------------------------------------------- Colab


@pytest.mark.parametrize("source", PAGES, ids=lambda p: p.stem)
@pytest.mark.parametrize("suffix", [".md", ".ipynb"])
def test_colab_badge_opens_this_lessons_notebook_at_the_configured_repository(source, suffix):
    notebook = jupytext.read(source.with_suffix(suffix))
    markdown = "\n".join(c.source for c in notebook.cells if c.cell_type == "markdown")
    badges = lessons.BADGE_LINE.findall(markdown)
    expected = REPO.colab_url(f"lessons/{source.stem}.ipynb")
    assert badges == [(lessons.BADGE_IMAGE, expected)], f"{source.name}: expected one Colab badge linking {expected}"
    assert (ROOT / "lessons" / f"{source.stem}.ipynb").is_file()


@pytest.mark.parametrize("source", PAGES, ids=lambda p: p.stem)
@pytest.mark.parametrize("suffix", [".md", ".ipynb"])
def test_first_code_cell_is_the_setup_cell(source, suffix):
    first = code_cells(jupytext.read(source.with_suffix(suffix)).cells)[0].source
    assert first == setup_cell(REPO), f"{source.name}: the first code cell must be the course's set-up cell"


def test_the_setup_cell_says_what_it_does_for_a_learner_and_sync_writes_it():
    """The set-up cell's comment says, in a learner's words, what running it does; `sync` writes
    the current comment into a page whose set-up cell still holds an older one."""
    assert lessons.setup_cell(REPO) == setup_cell(REPO)
    text = (ROOT / "lessons" / "00_welcome.md").read_text()
    old = text.replace(lessons.SETUP_COMMENT, "# Setup: an older comment,\n# on two lines.", 1)
    assert old != text
    assert lessons.sync_text(old, REPO, "lessons/00_welcome.ipynb") == text


def setup_cell(repo: Repository) -> str:
    return (
        "# Run this cell first: in Colab it installs the course's package, and everywhere\n"
        "# it prepares the figures.\n"
        "import sys\n"
        "\n"
        'if "google.colab" in sys.modules:\n'
        f'    %pip install --quiet "{repo.pip_spec()}"\n'
        "\n"
        "from course_utils.env import setup_notebook\n"
        "\n"
        "setup_notebook()"
    )


def test_repository_url_is_written_in_config_only():
    """Outside the lessons (derived by `make lessons`), no file names the repository."""
    offenders = []
    for path in ROOT.rglob("*"):
        if any(part in {".venv", "_build", ".git", "lessons", "__pycache__", ".jupyter_cache"} for part in path.parts):
            continue
        if path.is_file() and path.suffix in {".md", ".py", ".yml", ".toml", ".cfg", ".txt"} and path.name != "_config.yml":
            if REPO.url in path.read_text(encoding="utf-8", errors="ignore"):
                offenders.append(path.relative_to(ROOT).as_posix())
    assert not offenders, f"the repository URL is written outside _config.yml in: {offenders}"


def test_sync_points_badge_and_setup_cell_at_another_repository():
    text = (ROOT / "lessons" / "00_welcome.md").read_text()
    other = Repository(url="https://github.com/someone/fork", branch="dev")
    synced = lessons.sync_text(text, other, "lessons/00_welcome.ipynb")
    assert "https://colab.research.google.com/github/someone/fork/blob/dev/lessons/00_welcome.ipynb" in synced
    assert '"course_utils @ git+https://github.com/someone/fork@dev"' in synced
    assert REPO.url not in synced
    assert lessons.sync_text(synced, REPO, "lessons/00_welcome.ipynb") == text


def test_sync_to_another_branch_keeps_every_md_and_ipynb_paired(tmp_path, monkeypatch):
    """A fork or branch: `sync` rewrites the .md and the inputs of its .ipynb, outputs kept."""
    monkeypatch.setattr(lessons, "ROOT", tmp_path)
    (tmp_path / "lessons").mkdir()
    copies = []
    for source in SOURCES:
        for suffix in (".md", ".ipynb"):
            (tmp_path / "lessons" / f"{source.stem}{suffix}").write_bytes(source.with_suffix(suffix).read_bytes())
        copies.append(tmp_path / "lessons" / source.name)
    other = Repository(url="https://github.com/someone/fork", branch="dev")
    changed = lessons.sync(copies, repo=other)
    assert len(changed) == 2 * len(copies)  # every .md and every .ipynb
    for copy, source in zip(copies, SOURCES):
        text, notebook = jupytext.read(copy), nbformat.read(copy.with_suffix(".ipynb"), as_version=4)
        assert [c.source for c in notebook.cells] == [c.source for c in text.cells], copy.name
        assert other.colab_url(f"lessons/{copy.stem}.ipynb") in copy.with_suffix(".ipynb").read_text()
        original = nbformat.read(source.with_suffix(".ipynb"), as_version=4)
        assert [c.get("outputs") for c in notebook.cells] == [c.get("outputs") for c in original.cells]
    assert lessons.sync(copies, repo=other) == []  # once is enough
    lessons.sync(copies, repo=REPO)
    for copy, source in zip(copies, SOURCES):  # and back, byte for byte
        assert copy.with_suffix(".ipynb").read_bytes() == source.with_suffix(".ipynb").read_bytes()
        assert copy.read_bytes() == source.read_bytes()


def test_a_stale_ipynb_is_named_as_the_stale_file(tmp_path):
    source = SOURCES[0]
    notebook = nbformat.read(source.with_suffix(".ipynb"), as_version=4)
    notebook.cells[-1].source += "\n# edited in the .md, not yet executed"
    nbformat.write(notebook, tmp_path / f"{source.stem}.ipynb")
    (tmp_path / source.name).write_bytes(source.read_bytes())
    with pytest.raises(AssertionError, match=rf"lessons/{source.stem}\.ipynb is out of date with lessons/{source.name}"):
        test_md_and_ipynb_hold_the_same_cells(tmp_path / source.name)


def test_sync_refuses_a_lesson_without_badge_or_setup_cell():
    with pytest.raises(ValueError, match="no Colab badge line found"):
        lessons.sync_text("# Title\n", REPO, "lessons/99_x.ipynb")
    with pytest.raises(ValueError, match="no set-up cell"):
        lessons.sync_text(lessons.badge_markdown(REPO, "lessons/99_x.ipynb") + "\n", REPO, "lessons/99_x.ipynb")


@pytest.mark.parametrize("url", ["https://gitlab.com/a/b", "github.com/a/b", "https://github.com/a"])
def test_repository_must_be_on_github(url):
    with pytest.raises(ValueError, match="expected repository.url in _config.yml to be https://github.com/OWNER/NAME"):
        _ = Repository(url=url, branch="main").github_path


def test_config_names_the_repository_and_colab():
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    assert isinstance(config["repository"]["branch"], str) and config["repository"]["branch"]  # any branch
    assert config["launch_buttons"]["colab_url"] == "https://colab.research.google.com"
    assert config["only_build_toc_files"] is True
    assert "lessons/*.ipynb" in config["exclude_patterns"]
    assert config["execute"]["execute_notebooks"] == "cache" and config["execute"]["timeout"] > 0


# ---------------------------------------------------------------------------------- template


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_lesson_follows_the_template(source):
    text = source.read_text(encoding="utf-8")
    markdown = "\n".join(c.source for c in jupytext.read(source).cells if c.cell_type == "markdown")
    titles = re.findall(r"^# (.+)$", markdown, re.MULTILINE)
    assert len(titles) == 1, f"{source.name}: expected one title '# ...', found {titles}"
    assert not re.match(r"\d", titles[0]), f"{source.name}: the book numbers lessons itself; drop the number from the title"
    for heading in ("What you will learn", "Before you start", "Key takeaways"):
        assert heading in text, f"{source.name}: the template's '{heading}' is missing"
    assert re.search(r"\*\*Time:\*\*|Time:", text), f"{source.name}: no estimated time"


# ---------------------------------------------------------------------------------- make lessons


def test_unstable_cells_are_recognised_by_their_tag_only():
    tagged = nbformat.v4.new_code_cell("x = 1", metadata={"tags": ["remove-input", "nbval-ignore-output"]})
    assert lessons.has_unstable_output(tagged)
    assert not lessons.has_unstable_output(nbformat.v4.new_code_cell("# NBVAL_IGNORE_OUTPUT\nx = 1"))
    assert not lessons.has_unstable_output(nbformat.v4.new_code_cell("x = 1"))


def cell(source, *tags):
    return nbformat.v4.new_code_cell(source, metadata={"tags": list(tags)} if tags else {})


def folded(source, *tags):
    """A check cell as `lessons sync` leaves it: a Colab form, collapsed in JupyterLab."""
    result = cell(source, *tags)
    result.metadata.update({"cellView": "form", "jupyter": {"source_hidden": True}})
    return result


def test_markers_and_checks_that_break_the_rules_are_named():
    cells = [
        nbformat.v4.new_markdown_cell("# NBVAL_IGNORE_OUTPUT is fine in prose"),
        folded("# @title check: the weights sum to 1\nassert ok", "remove-input"),  # fine
        folded("# @title check: nothing printed\nassert ok", "remove-cell"),  # fine
        cell("x = 1", "nbval-ignore-output"),  # fine
        cell("# NBVAL_IGNORE_OUTPUT\nt = time()"),
        cell("  # NBVAL_SKIP\nslow()"),
        folded("# @title check: the weights sum to 1\nassert ok"),
        cell("assert ok", "remove-input"),
        cell("print(x)\nassert x == 1"),  # a visible assert: counted, not a rule of its own yet
        cell("# check: the weights sum to 1\nassert ok", "remove-input"),  # as an author writes it
        cell("# @title check: the weights sum to 1\nassert ok", "remove-input"),  # titled, not folded
        folded("# @title check: a form\nn = 3  # @param {type: 'integer'}\nassert n", "remove-cell"),
        folded("# @title check: a set {1, 2}\nassert ok", "remove-cell"),
    ]
    problems = lessons.check_cell_problems(cells)
    assert [p.split(":")[0] for p in problems] == [
        "cell 4", "cell 5", "cell 6", "cell 7", "cell 9", "cell 9", "cell 10", "cell 11", "cell 12"
    ]
    assert "nbval marker as a visible comment" in problems[0] and "tag it remove-input" in problems[2]
    assert "'# @title check: ...'" in problems[3]
    assert "not '# @title check: ...'" in problems[4] and "opens unfolded" in problems[5]
    assert "opens unfolded" in problems[6] and "lessons sync" in problems[6]
    assert "Colab form syntax" in problems[7] and "Colab form syntax" in problems[8]
    assert lessons.visible_asserts(cells) == 2  # cells 6 and 8; the hidden ones do not count


def test_sync_folds_a_check_cell_as_an_author_writes_it():
    """An author writes `# check: ...` and the asserts; sync makes the cell a titled Colab form,
    collapsed in JupyterLab, and cuts a title line made too long onto the next comment line."""
    written = cell("# check: every row sums to 1\nassert ok", "remove-input")
    assert lessons.fold_check_cell(written)
    assert written.source == "# @title check: every row sums to 1\nassert ok"
    assert written.metadata == {"cellView": "form", "jupyter": {"source_hidden": True}, "tags": ["remove-input"]}
    assert list(written.metadata) == ["cellView", "jupyter", "tags"]  # sorted, as in the .ipynb
    assert lessons.check_cell_problems([written]) == []
    assert not lessons.fold_check_cell(written)  # once is enough
    assert not lessons.fold_check_cell(cell("x = 1  # check: not a check cell"))
    long_label = "# check: " + "word " * 17 + "end\n# of the label\nassert ok"
    other = cell(long_label, "remove-cell")
    other.metadata["jupyter"] = {"outputs_hidden": False}  # other JupyterLab settings are kept
    lessons.fold_check_cell(other)
    lines = other.source.split("\n")
    assert all(len(line) <= 88 for line in lines), lines
    assert lines[0].startswith("# @title check: word") and lines[-2].endswith("end of the label")
    assert " ".join(line.lstrip("# ") for line in lines[:-1]) == " ".join(
        ["@title check:"] + ["word"] * 17 + ["end of the label"])
    assert other.metadata["jupyter"] == {"outputs_hidden": False, "source_hidden": True}


def test_sync_folds_the_check_cells_of_a_page_in_its_md_and_its_ipynb(tmp_path, monkeypatch):
    """A page whose check cells were written unfolded: sync folds them in both files, which stay
    paired, with the outputs kept; the .md then reads back with the same cells."""
    monkeypatch.setattr(lessons, "ROOT", tmp_path)
    (tmp_path / "lessons").mkdir()
    source = ROOT / "lessons" / "04_self_attention.md"
    copy = tmp_path / "lessons" / source.name
    text = source.read_text(encoding="utf-8")
    unfolded = re.sub(r"---\ncellView: form\njupyter:\n  source_hidden: true\n(tags: \[[^]]*\])\n---\n# @title check: ",
                      r":\1\n\n# check: ", text)
    assert unfolded.count("# check: ") == text.count("# @title check: ") > 0
    copy.write_text(unfolded, encoding="utf-8")
    notebook = nbformat.read(source.with_suffix(".ipynb"), as_version=4)
    for nb_cell in notebook.cells:
        if nb_cell.cell_type == "code":
            nb_cell.metadata.pop("cellView", None)
            nb_cell.metadata.pop("jupyter", None)
    nbformat.write(notebook, copy.with_suffix(".ipynb"))
    assert lessons.sync([copy], repo=REPO) == [copy, copy.with_suffix(".ipynb")]
    synced, original = jupytext.read(copy), jupytext.read(source)
    assert [(c.source, c.metadata) for c in synced.cells] == [(c.source, c.metadata) for c in original.cells]
    assert colab_view_problems(copy.with_suffix(".ipynb")) == []
    assert [c.get("outputs") for c in nbformat.read(copy.with_suffix(".ipynb"), as_version=4).cells] == [
        c.get("outputs") for c in nbformat.read(source.with_suffix(".ipynb"), as_version=4).cells]


# What Colab makes of a cell's metadata: a form (cellView) titled by its first '#@title' line.
COLAB_TITLE = re.compile(r"^[ \t]*#[ \t]*@title[ \t]+(?P<title>.*?)[ \t]*$")


def colab_view_problems(path: Path) -> list[str]:
    """The cells of an .ipynb, read as Colab and JupyterLab read its JSON, that guard the prose
    (hidden on the site, asserting or labelled 'check:') and open expanded or untitled."""
    import json

    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    problems = []
    for index, nb_cell in enumerate(cells):
        source = "".join(nb_cell["source"])
        metadata = nb_cell.get("metadata", {})
        hidden_on_site = set(metadata.get("tags", [])) & {"remove-input", "remove-cell"}
        first = source.split("\n", 1)[0]
        if nb_cell["cell_type"] != "code" or not (
            hidden_on_site and re.search(r"^[ \t]*assert\b", source, re.MULTILINE) or "check:" in first
        ):
            continue
        title = COLAB_TITLE.match(first)
        if metadata.get("cellView") != "form":
            problems.append(f"cell {index}: Colab shows its code (no cellView: form)")
        if not title or not title["title"].startswith("check: "):
            problems.append(f"cell {index}: Colab titles it {title['title'] if title else None!r}, not 'check: ...'")
        if metadata.get("jupyter", {}).get("source_hidden") is not True:
            problems.append(f"cell {index}: JupyterLab shows its code (no jupyter.source_hidden)")
    return problems


def count_check_cells(path: Path) -> int:
    return sum(1 for c in nbformat.read(path, as_version=4).cells if lessons.is_check_cell(c))


def test_a_notebook_with_an_unfolded_check_is_caught_as_colab_would_show_it(tmp_path):
    source = ROOT / "lessons" / "04_self_attention.ipynb"
    notebook = nbformat.read(source, as_version=4)
    checks = [c for c in notebook.cells if lessons.is_check_cell(c)]
    checks[0].metadata.pop("cellView")
    checks[1].metadata["jupyter"]["source_hidden"] = False
    checks[2].source = checks[2].source.replace("# @title check: ", "# check: ", 1)
    checks[3].source = checks[3].source.replace("# @title check: ", "# @title ", 1)
    nbformat.write(notebook, tmp_path / source.name)
    problems = colab_view_problems(tmp_path / source.name)
    assert [p.split(": ", 1)[1] for p in problems] == [
        "Colab shows its code (no cellView: form)",
        "JupyterLab shows its code (no jupyter.source_hidden)",
        "Colab titles it None, not 'check: ...'",
        f"Colab titles it {checks[3].source.split(chr(10))[0][len('# @title '):]!r}, not 'check: ...'",
    ]


@pytest.mark.parametrize("source", PAGES, ids=lambda p: p.stem)
def test_every_check_cell_opens_folded_in_colab_and_jupyterlab(source):
    """Colab ignores Jupyter Book's tags: a check cell is folded there only by its own metadata."""
    notebook = source.with_suffix(".ipynb")
    assert colab_view_problems(notebook) == [], f"{notebook.name}: run `make lessons`"
    assert count_check_cells(notebook) == len(re.findall(r"^# @title check: ", source.read_text(), re.MULTILINE))


@pytest.mark.parametrize("source", PAGES, ids=lambda p: p.stem)
def test_no_nbval_comment_and_every_check_cell_labelled_and_hidden(source):
    problems = lessons.check_cell_problems(jupytext.read(source).cells)
    assert not problems, f"{source.name}:\n" + "\n".join(problems)


@pytest.mark.parametrize("source", PAGES, ids=lambda p: p.stem)
def test_checks_that_guard_the_prose_sit_in_check_cells_not_in_the_cells_a_learner_reads(source):
    visible = lessons.visible_asserts(jupytext.read(source).cells)
    assert visible == 0, (
        f"{source.name}: {visible} asserts in cells the site shows: move each check into a "
        "check cell tagged remove-input whose first line is '# check: <what it checks>' (`make lessons` folds it)"
    )


def test_unchanged_unstable_cells_keep_their_committed_output(tmp_path):
    def notebook(timing_output, stable_output, timing_source="t = time()"):
        cells = [
            nbformat.v4.new_code_cell(timing_source, outputs=[nbformat.v4.new_output("stream", text=timing_output)],
                                      metadata={"tags": ["nbval-ignore-output"]}),
            nbformat.v4.new_code_cell("x", outputs=[nbformat.v4.new_output("stream", text=stable_output)]),
        ]
        return nbformat.v4.new_notebook(cells=cells)

    committed = tmp_path / "lesson.ipynb"
    nbformat.write(notebook("1.0 s", "old"), committed)
    fresh = notebook("2.0 s", "new")
    assert lessons.keep_committed_unstable_outputs(fresh, committed) == 1
    assert [c.outputs[0].text for c in fresh.cells] == ["1.0 s", "new"]  # stable outputs are this run's

    edited = notebook("3.0 s", "new", timing_source="t = time() * 2")
    assert lessons.keep_committed_unstable_outputs(edited, committed) == 0
    assert edited.cells[0].outputs[0].text == "3.0 s"
    assert lessons.keep_committed_unstable_outputs(notebook("4.0 s", "x"), tmp_path / "missing.ipynb") == 0

    # made with other bundled models (make assets ran since): nothing is kept, however unchanged the code
    assert lessons.keep_committed_unstable_outputs(notebook("5.0 s", "x"), committed, bundle="new") == 0
    recorded = notebook("1.0 s", "old")
    recorded.metadata["course_utils"] = {lessons.BUNDLE_KEY: "new"}
    nbformat.write(recorded, committed)
    assert lessons.keep_committed_unstable_outputs(notebook("6.0 s", "x"), committed, bundle="new") == 1
    assert lessons.keep_committed_unstable_outputs(notebook("7.0 s", "x"), committed, bundle="newer") == 0


@pytest.mark.parametrize("source", PAGES, ids=lambda p: p.stem)
def test_unstable_outputs_come_from_the_bundled_models(source):
    """A cell whose output cannot repeat (a live run, a timing) keeps its committed output while
    its code is unchanged; the notebook records which bundled models made that output, so that
    after `make assets` a page still showing the old models' run fails here, not on a reader."""
    from course_utils import bundle

    notebook = nbformat.read(source.with_suffix(".ipynb"), as_version=4)
    if not any(c.cell_type == "code" and lessons.has_unstable_output(c) for c in notebook.cells):
        assert lessons.made_with_bundle(notebook) is None, f"{source.name}: records a bundle but has no unstable cell"
        return
    assert lessons.made_with_bundle(notebook) == bundle.digest(), (
        f"{source.name}: its machine-dependent outputs were made with other bundled models; re-execute it "
        f"(`python -m course_utils.authoring.lessons execute {source.relative_to(ROOT)}`)"
    )


@pytest.mark.parametrize("source", PAGES, ids=lambda p: p.stem)
def test_code_lines_fit_the_page(source):
    """Code is formatted to 88 columns (the site's code font is sized for that); the set-up
    cell's install line, which holds the repository URL, is the one exception."""
    long_lines = [
        f"cell {index}: {line[:60]}..."
        for index, cell in enumerate(jupytext.read(source).cells)
        if cell.cell_type == "code"
        for line in cell.source.splitlines()
        if len(line) > 88 and not lessons.INSTALL_LINE.match(line)
    ]
    assert not long_lines, f"{source.name}: code lines longer than 88 characters:\n" + "\n".join(long_lines)


def test_the_validated_notebooks_are_what_the_book_build_finds_in_its_cache(tmp_path):
    """`make test` caches the committed .ipynb after nbval (`lessons cache`); the book build reads each
    lesson's .md with myst-nb's reader and looks it up by its code cells: every lesson must be found,
    with the committed outputs, so no lesson runs a second time (and an edit to a lesson's code,
    which changes the key, makes the build execute it again rather than show stale outputs)."""
    from jupyter_cache import get_cache
    from myst_nb.core.read import read_myst_markdown_notebook

    from course_utils import book

    assert lessons.seed_execution_cache(tmp_path) == len(PAGES)
    assert book.execution_cache_is_current(tmp_path), "the book build would drop the validated notebooks"
    cache = get_cache(str(tmp_path))
    for source in PAGES:
        read_by_the_book = read_myst_markdown_notebook(source.read_text(encoding="utf-8"))
        _, merged = cache.merge_match_into_notebook(read_by_the_book)
        committed = nbformat.read(source.with_suffix(".ipynb"), as_version=4)
        assert [c.get("outputs") for c in code_cells(merged.cells)] == [c.outputs for c in code_cells(committed.cells)]
    edited = read_by_the_book
    code_cells(edited.cells)[-1].source += "\n"
    with pytest.raises(KeyError):
        cache.match_cache_notebook(edited)


FIGURE_CODE = re.compile(r"\bgo\.[A-Z]\w*\(|make_subplots\(|\.add_trace\(|\.update_layout\(|\.add_annotation\(")
FIGURE_CELL_MAX_LINES = 30


@pytest.mark.parametrize("source", PAGES, ids=lambda p: p.stem)
def test_figure_code_in_a_lesson_stays_short(source):
    """A cell that draws a figure with plotly itself stays within 30 lines: longer drawing code is a
    builder of course_utils.figures (or plots), and the lesson keeps what teaches."""
    long_cells = [
        f"cell {index}: {len(cell.source.splitlines())} lines"
        for index, cell in enumerate(jupytext.read(source).cells)
        if cell.cell_type == "code" and FIGURE_CODE.search(cell.source)
        and len(cell.source.splitlines()) > FIGURE_CELL_MAX_LINES
    ]
    assert not long_cells, f"{source.name}: figure code over {FIGURE_CELL_MAX_LINES} lines: {long_cells}"


# ---------------------------------------------------------------------------------- counts the prose states

NUMBER_WORDS = dict(zip(
    "one two three four five six seven eight nine ten eleven twelve".split(), range(1, 13)))
COUNT = re.compile(r"\b(" + "|".join(NUMBER_WORDS) + r"|\d+) (questions|lessons)\b", re.IGNORECASE)


def quiz_questions(cells) -> int | None:
    """How many questions the page's quiz (its ``quiz.show(...)`` call) holds; None: no quiz."""
    import ast

    counts = [
        len(node.args)
        for cell in cells if cell.cell_type == "code" and "quiz.show(" in cell.source
        for node in ast.walk(ast.parse(cell.source))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "show"
        and isinstance(node.func.value, ast.Name) and node.func.value.id == "quiz"
    ]
    assert len(counts) <= 1, "expected one quiz a page"
    return counts[0] if counts else None


def stated_counts(text: str) -> list[tuple[int, str]]:
    """Each 'N questions' or 'N lessons' of a text, N as a number."""
    return [(int(n) if n.isdigit() else NUMBER_WORDS[n.lower()], what.lower()) for n, what in COUNT.findall(text)]


def test_stated_counts_are_read_as_numbers():
    assert stated_counts("Seven questions on this lesson; in 9 lessons, ten Lessons.") == [
        (7, "questions"), (9, "lessons"), (10, "lessons")]
    cells = jupytext.reads("```{code-cell} ipython3\nquiz.show(quiz.Choice(1), quiz.Number(2))\n```\n",
                           fmt="md:myst").cells
    assert quiz_questions(cells) == 2


@pytest.mark.parametrize("source", PAGES, ids=lambda p: p.stem)
def test_a_count_of_questions_is_the_quizs_and_no_page_counts_the_lessons(source):
    """'Six questions on this lesson' is true of its quiz; a count of lessons goes stale as the
    course grows (lesson 00 said nine while the sidebar showed ten), so no page states one."""
    cells = jupytext.read(source).cells
    markdown = "\n".join(c.source for c in cells if c.cell_type == "markdown")
    counts = stated_counts(markdown)
    questions = [n for n, what in counts if what == "questions"]
    assert questions in ([], [quiz_questions(cells)]), (
        f"{source.name}: the prose says {questions} questions; its quiz holds {quiz_questions(cells)}")
    assert not [n for n, what in counts if what == "lessons"], f"{source.name}: a count of lessons"


def test_the_welcome_pages_map_lists_every_lesson_of_the_course_in_order():
    from course_utils import course_map

    text = (ROOT / "lessons" / "00_welcome.md").read_text(encoding="utf-8")
    section = text.split("## The map", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| (\d\d) \| ([^|]+?) \|", section, re.MULTILINE)
    assert [int(n) for n, _ in rows] == [e.planned.number for e in course_map.lessons()]
    for (number, title), entry in zip(rows, course_map.lessons()):
        assert title in (entry.title, f"{{doc}}`{entry.stem}`"), f"map row {number}: link {entry.stem}"


def test_a_lesson_re_executed_with_the_same_code_is_rebuilt_by_the_book(tmp_path):
    """`make lessons` then `make book`: new outputs under unchanged code replace the cached ones, and the
    lesson's .md is touched (Sphinx rebuilds a page only when its source is newer than the build);
    a lesson whose outputs did not change is left alone."""
    import os
    import shutil

    source = tmp_path / "lesson.md"
    shutil.copy(PAGES[0], source)
    shutil.copy(PAGES[0].with_suffix(".ipynb"), source.with_suffix(".ipynb"))
    cache = tmp_path / "cache"
    lessons.seed_execution_cache(cache, [source])
    os.utime(source, (1_000_000_000, 1_000_000_000))
    lessons.seed_execution_cache(cache, [source])
    assert source.stat().st_mtime == 1_000_000_000  # the same outputs: nothing to rebuild
    notebook = nbformat.read(source.with_suffix(".ipynb"), as_version=4)
    code = next(cell for cell in notebook.cells if cell.cell_type == "code" and cell.outputs)
    code.outputs = [nbformat.v4.new_output("stream", name="stdout", text="a new output\n")]
    nbformat.write(notebook, source.with_suffix(".ipynb"))
    lessons.seed_execution_cache(cache, [source])
    assert source.stat().st_mtime > 1_000_000_000  # new outputs: the page is rebuilt
