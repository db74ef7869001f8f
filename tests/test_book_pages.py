"""The pages around the lessons: table of contents, glossary, references, notebook pages, strictness.

The book build (``make book``, ``-W``) is the final judge of every cross-reference; these tests
check, without building the book, what it would otherwise only report late: that every glossary
term and every citation a page uses exists, that the glossary and the bibliography are well
formed, and that a dangling term does fail a strict build.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import jupytext
import pytest
import yaml

from course_utils.authoring import lessons

ROOT = lessons.ROOT
BOOK = ROOT / "book"
GLOSSARY = BOOK / "glossary.md"
BIBLIOGRAPHY = BOOK / "references.bib"
TOC = yaml.safe_load((ROOT / "_toc.yml").read_text())
SOURCES = lessons.lesson_sources()
PAGES = sorted(BOOK.glob("*.md"))
NOTEBOOK_PAGES = ["intro", "cheat_sheet", "status"]

TERM = re.compile(r"\{term\}`([^`]+)`")
CITE = re.compile(r"\{cite(?::[a-z]+)?\}`([^`]+)`")
BIB_KEY = re.compile(r"^@\w+\{([^,\s]+),", re.MULTILINE)

# Terms the glossary must define (the list and the course design's vocabulary).
REQUIRED_TERMS = [
    "query", "key", "value", "attention weights", "score", "scaled dot-product attention", "head",
    "multi-head attention", "mask", "padding", "padding mask", "causal mask", "attention mask", "logits",
    "softmax", "temperature", "soft targets", "distillation", "teacher", "student", "WordPiece", "token",
    "token id", "vocabulary", "special token", "[CLS]", "[SEP]", "[MASK]", "embedding", "positional encoding",
    "sinusoidal encoding", "learned position embedding", "LayerNorm", "residual connection",
    "feed-forward network", "GELU", "encoder", "decoder", "post-LN", "pre-LN", "masked language modelling",
    "dynamic masking", "fine-tuning", "RNN", "LSTM", "vanishing gradient", "hidden state",
    "permutation equivariance",
]  # fmt: skip

# Works the issue requires in the bibliography.
REQUIRED_WORKS = [
    "vaswani2017attention", "devlin2019bert", "sanh2019distilbert", "hinton2015distilling", "bahdanau2015neural",
    "hochreiter1997long", "schuster1997bidirectional", "ba2016layer", "hendrycks2016gaussian", "liu2019roberta",
]  # fmt: skip

# Lessons whose prose does not link the glossary yet. The test below fails as soon as one of them
# does (remove it from this set then), so the set can only shrink.
NOT_YET_LINKED: set[str] = set()


# ---------------------------------------------------------------------------------- helpers


def glossary_entries(text: str | None = None) -> dict[str, str]:
    """The glossary's ``{term: definition}`` from the ``{glossary}`` directive of book/glossary.md."""
    text = GLOSSARY.read_text(encoding="utf-8") if text is None else text
    match = re.search(r"^```\{glossary\}\n(.*?)^```$", text, re.MULTILINE | re.DOTALL)
    assert match, "book/glossary.md has no ```{glossary} directive"
    entries: dict[str, list[str]] = {}
    term = None
    for line in match.group(1).splitlines():
        if not line.strip() or line.startswith(":"):
            continue
        if line[0].isspace():
            assert term is not None, f"a definition line comes before any term: {line!r}"
            entries[term].append(line.strip())
        else:
            term = line.strip()
            assert term not in entries, f"glossary term {term!r} is defined twice"
            entries[term] = []
    return {term: " ".join(lines) for term, lines in entries.items()}


def glossary_terms() -> set[str]:
    """The glossary's terms, lower-cased: Sphinx resolves ``{term}`` case-insensitively."""
    return {term.lower() for term in glossary_entries()}


def outside_code_blocks(markdown: str) -> str:
    """``markdown`` without its fenced code (code cells, ```python) and fence lines; a directive's
    content (```{exercise}) is kept, since Sphinx parses it."""
    kept, fences = [], []  # fences: the open fences, (backticks, is_code)
    for line in markdown.splitlines():
        fence = re.match(r"^(`{3,})(.*)$", line.strip())
        if fence and fences and fence.group(1) == fences[-1][0] and not fence.group(2).strip():
            fences.pop()
        elif fence:
            info = fence.group(2).strip()
            fences.append((fence.group(1), not info.startswith("{") or info.startswith("{code-cell}")))
        elif not any(is_code for _, is_code in fences):
            kept.append(line)
    return "\n".join(kept)


def without_code_spans(text: str) -> str:
    """``text`` without its code: fenced code blocks (code cells, ```python; a directive's fence such
    as ```{exercise} is kept, since Sphinx parses its content) and inline code that shows roles
    rather than using them (`` `{cite}` ``, ``` `` {term}`softmax` `` ```): Sphinx resolves no role in code."""
    prose = outside_code_blocks(text)
    return re.sub(r"`\{[a-z:]+\}`", "", re.sub(r"``[^`\n]+?``", "", prose))


def term_targets(text: str) -> list[str]:
    """The target of every ``{term}`` role in ``text``: ``{term}`text <target>``` -> ``target``."""
    targets = []
    for content in TERM.findall(without_code_spans(text)):
        explicit = re.fullmatch(r"(?s).*<([^<>]+)>\s*", content)
        targets.append((explicit.group(1) if explicit else content).strip())
    return targets


def cite_keys(text: str) -> list[str]:
    """Every key of every ``{cite}`` role in ``text`` (a role may cite several, comma-separated)."""
    return [key.strip() for keys in CITE.findall(without_code_spans(text)) for key in keys.split(",")]


def bib_keys() -> list[str]:
    return BIB_KEY.findall(BIBLIOGRAPHY.read_text(encoding="utf-8"))


def prose(path: Path) -> str:
    """The markdown cells of a MyST notebook (a plain page is all prose)."""
    return "\n".join(c.source for c in jupytext.read(path).cells if c.cell_type == "markdown")


def sentences(definition: str) -> int:
    """How many sentences a definition has (math, code and "et al." are left out)."""
    text = re.sub(r"\$[^$]*\$|`[^`]*`|\{cite\}`[^`]*`|\bet al\.", "X", definition)
    return len(re.findall(r"[.!?](?:\s|$)", text))


def toc_files() -> list[str]:
    """Every file of the toc: the root, each chapter, and each chapter's sections (lab pages)."""
    return [TOC["root"]] + [
        f for part in TOC["parts"] for c in part["chapters"] for f in [c["file"]] + [s["file"] for s in c.get("sections", [])]
    ]


# ---------------------------------------------------------------------------------- contents


def test_the_toc_lists_the_pages_around_the_lessons():
    parts = {part["caption"]: [c["file"] for c in part["chapters"]] for part in TOC["parts"]}
    assert TOC["root"] == "book/intro"
    assert parts["Start here"] == ["lessons/00_welcome", "book/how_to_use"]
    assert parts["Reference"] == [
        "book/cheat_sheet",
        "book/glossary",
        "book/references",
        "book/further_reading",
        "book/instructor_guide",
        "book/status",
    ]


def test_every_toc_entry_is_a_file_and_every_page_is_listed():
    for entry in toc_files():
        assert (ROOT / f"{entry}.md").is_file(), f"_toc.yml lists {entry}, which does not exist"
    listed = set(toc_files())
    unlisted = [p.name for p in PAGES if f"book/{p.stem}" not in listed]
    assert not unlisted, f"pages of book/ missing from _toc.yml (only_build_toc_files skips them): {unlisted}"


@pytest.mark.parametrize("name", NOTEBOOK_PAGES)
def test_computed_pages_are_myst_notebooks_with_a_python_kernel(name):
    text = (BOOK / f"{name}.md").read_text(encoding="utf-8")
    front = yaml.safe_load(text.split("---", 2)[1])
    assert front["jupytext"]["text_representation"]["format_name"] == "myst"
    assert front["kernelspec"]["name"] == "python3"
    notebook = jupytext.read(BOOK / f"{name}.md")
    assert any(c.cell_type == "code" for c in notebook.cells)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.stem)
def test_pages_code_fits_the_page(page):
    long_lines = [
        line
        for cell in jupytext.read(page).cells
        if cell.cell_type == "code"
        for line in cell.source.splitlines()
        if len(line) > 88
    ]
    assert not long_lines, f"{page.name}: code lines longer than 88 characters: {long_lines}"


def test_plain_pages_hold_no_code_cells():
    for page in PAGES:
        if page.stem not in NOTEBOOK_PAGES:
            assert "{code-cell}" not in page.read_text(encoding="utf-8"), f"{page.name} is not a notebook page"


def test_status_shows_the_execution_table_and_the_versions():
    text = (BOOK / "status.md").read_text(encoding="utf-8")
    assert "```{nb-exec-table}" in text
    code = "\n".join(c.source for c in jupytext.read(BOOK / "status.md").cells if c.cell_type == "code")
    for package in ["torch", "transformers", "tokenizers", "jupyter-book", "myst-nb", "plotly", "numpy"]:
        assert f'"{package}"' in code, f"status.md does not print the version of {package}"
    assert "platform.python_version()" in code


def test_intro_links_the_other_pages():
    text = (BOOK / "intro.md").read_text(encoding="utf-8")
    for page in ["how_to_use", "cheat_sheet", "glossary", "references", "status"]:
        assert f"{{doc}}`{page}`" in text, f"the introduction does not link {page}"


def test_pages_computed_from_unwatched_files_are_executed_at_every_build():
    """The introduction reads the lesson files and the status page the installed versions: Sphinx
    reads them again at every build (course_utils.book) and myst-nb executes them without cache."""
    from types import SimpleNamespace

    from course_utils import book

    env = SimpleNamespace(found_docs={"book/intro", "book/status", "book/glossary", "lessons/01_rnn_recap"})
    assert sorted(book._reread_computed_pages(None, env, set(), set(), set())) == ["book/intro", "book/status"]
    for docname in book.ALWAYS_REREAD:
        front = yaml.safe_load((ROOT / f"{docname}.md").read_text(encoding="utf-8").split("---", 2)[1])
        assert front["mystnb"]["execution_mode"] == "force", docname


@pytest.mark.parametrize("name", NOTEBOOK_PAGES)
def test_notebook_pages_execute_without_errors_or_stderr(name):
    """The book executes these pages; an error or a warning there would fail the strict build."""
    notebook, _ = lessons.run_lesson(BOOK / f"{name}.md")
    for index, cell in enumerate(c for c in notebook.cells if c.cell_type == "code"):
        for output in cell.outputs:
            assert output.output_type != "error", f"{name}: code cell {index} raised"
            assert not (output.output_type == "stream" and output.name == "stderr"), (
                f"{name}: code cell {index} wrote to stderr: {output.text[:300]!r}"
            )


# ---------------------------------------------------------------------------------- glossary


def test_the_glossary_defines_enough_terms_including_the_required_ones():
    entries = glossary_entries()
    assert len(entries) >= 45, f"the glossary defines {len(entries)} terms, expected at least 45"
    missing = sorted({t.lower() for t in REQUIRED_TERMS} - glossary_terms())
    assert not missing, f"terms missing from the glossary: {missing}"


def test_glossary_terms_are_unique_whatever_their_case():
    lowered = [term.lower() for term in glossary_entries()]
    assert len(lowered) == len(set(lowered)), "a glossary term is defined twice (Sphinx warns: duplicate term)"


@pytest.mark.parametrize("term, definition", sorted(glossary_entries().items()))
def test_each_definition_is_one_or_two_sentences(term, definition):
    assert definition, f"{term!r} has no definition"
    assert 1 <= sentences(definition) <= 2, f"{term!r}: expected one or two sentences, got: {definition}"


def test_leaves_ln_2_is_defined_with_the_numbers_the_code_uses():
    from course_utils import training

    definition = " ".join(glossary_entries()["leaves ln 2"].split())
    assert f"the last {training.PLATEAU_WINDOW} steps, is below {training.PLATEAU_EXIT}" in definition


def test_glossary_helpers_read_terms_and_targets():
    text = "```{glossary}\n:sorted:\n\nkey\n  What a token offers.\n\n[CLS]\n  First token.\n  More.\n```\n"
    assert glossary_entries(text) == {"key": "What a token offers.", "[CLS]": "First token. More."}
    assert term_targets("a {term}`query`, {term}`keys <key>` and {term}`[CLS]`") == ["query", "key", "[CLS]"]
    assert cite_keys("{cite}`a2019,b2020` and {cite:p}`c`") == ["a2019", "b2020", "c"]
    assert sentences("One, with $x. y$ math. Two `a. b` code, Bahdanau et al. {cite}`b`.") == 2
    assert term_targets("show ``{term}`softmax` `` and `{term}` as code") == []
    assert cite_keys("each lesson cites with `{cite}` and links here.") == []


@pytest.mark.parametrize("path", SOURCES + PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_term_role_names_a_glossary_term(path):
    known = glossary_terms()
    dangling = sorted({t for t in term_targets(path.read_text(encoding="utf-8")) if t.lower() not in known})
    assert not dangling, f"{path.name} links terms the glossary lacks (the strict build would fail): {dangling}"


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_every_lesson_links_the_glossary(source):
    linked = term_targets(prose(source))
    if source.stem in NOT_YET_LINKED:
        assert not linked, f"{source.stem} links the glossary now: remove it from NOT_YET_LINKED"
        pytest.skip(f"{source.stem} does not link the glossary yet")
    assert len(set(t.lower() for t in linked)) >= 3, f"{source.stem} links fewer than 3 glossary terms"


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_term_roles_are_in_prose_only(source):
    code = "\n".join(c.source for c in jupytext.read(source).cells if c.cell_type == "code")
    assert "{term}" not in code, f"{source.name}: a {{term}} role inside a code cell is not a link"


def test_the_book_build_turns_a_dangling_term_into_an_error():
    """`make book` builds with -W, and Sphinx warns about a term that is not in the glossary."""
    from sphinx.domains.std import StandardDomain

    book_command = re.search(r"^BOOK := (.*)$", (ROOT / "Makefile").read_text(), re.MULTILINE).group(1)
    assert " -W" in book_command and "--keep-going" in book_command
    assert StandardDomain.roles["term"].warn_dangling
    assert "term" in StandardDomain.dangling_warnings


def _sphinx_build(tmp_path: Path, index: str) -> subprocess.CompletedProcess:
    """A strict (-W) Sphinx build of the course's glossary and references with one extra page."""
    for name in ["glossary.md", "references.bib"]:
        (tmp_path / name).write_text((BOOK / name).read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "cheat_sheet.md").write_text("# Cheat sheet\n")  # the glossary links it
    (tmp_path / "conf.py").write_text(
        'extensions = ["myst_parser", "sphinxcontrib.bibtex"]\n'
        'myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist"]\n'
        'bibtex_bibfiles = ["references.bib"]\nbibtex_reference_style = "author_year"\n'
        'exclude_patterns = ["_out"]\n'
    )
    (tmp_path / "index.md").write_text(
        "# Index\n\n```{toctree}\nglossary\ncheat_sheet\n```\n\n" + index + "\n\n```{bibliography}\n:all:\n```\n"
    )
    command = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html", str(tmp_path)]
    return subprocess.run(command + [str(tmp_path / "_out")], capture_output=True, text=True)


def test_a_strict_build_accepts_the_glossary_and_every_term_the_lessons_use(tmp_path):
    used = sorted({t for path in SOURCES + PAGES for t in term_targets(path.read_text(encoding="utf-8"))})
    result = _sphinx_build(tmp_path, " ".join(f"{{term}}`{term}`" for term in used))
    assert result.returncode == 0, result.stderr[-3000:]


def test_a_strict_build_fails_on_a_dangling_term(tmp_path):
    result = _sphinx_build(tmp_path, "A {term}`query` and a {term}`flux capacitor`.")
    assert result.returncode != 0
    assert "term not in glossary: 'flux capacitor'" in result.stderr


# ---------------------------------------------------------------------------------- references


def test_the_bibliography_has_each_key_once_and_the_required_works():
    keys = bib_keys()
    duplicates = sorted({k for k in keys if keys.count(k) > 1})
    assert not duplicates, f"keys defined twice in references.bib: {duplicates}"
    missing = sorted(set(REQUIRED_WORKS) - set(keys))
    assert not missing, f"works missing from references.bib: {missing}"


def test_the_references_page_lists_the_whole_bibliography():
    text = (BOOK / "references.md").read_text(encoding="utf-8")
    assert re.search(r"```\{bibliography\}\n:all:\n```", text)


@pytest.mark.parametrize("path", SOURCES + PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_citation_is_in_the_bibliography(path):
    unknown = sorted(set(cite_keys(path.read_text(encoding="utf-8"))) - set(bib_keys()))
    assert not unknown, f"{path.name} cites keys missing from book/references.bib: {unknown}"


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_each_lesson_ends_with_its_references(source):
    """A lesson that cites lists every work it cites in a final 'References:' paragraph, which
    links the full list on the references page (the per-lesson bibliography)."""
    text = prose(source)
    cited = set(cite_keys(text))
    if not cited:
        pytest.skip(f"{source.stem} cites nothing")
    match = re.search(r"^References: (.*?)(?:\n\n|\Z)", text, re.MULTILINE | re.DOTALL)
    assert match, f"{source.stem} cites {sorted(cited)} but has no 'References:' paragraph"
    listed = set(cite_keys(match.group(1)))
    assert listed == cited, f"{source.stem}: 'References:' lists {sorted(listed)}, the lesson cites {sorted(cited)}"
    assert "{doc}`../book/references`" in match.group(1)
    assert text.rstrip().endswith(match.group(0).rstrip()) or "Key takeaways" in text[: match.start()]


TABLE_SEPARATOR = re.compile(r"^\|(?:\s*:?-+:?\s*\|)+\s*$")


def table_starts_without_a_header(text: str) -> list[str]:
    """Rows of a markdown table that open a table (after a line that is not a row, outside code
    fences) but are not followed by the ``|---|`` line of a header: a blank line inside a table
    splits it, and the rows after the blank render as a paragraph of pipes."""
    lines, found, fenced = text.splitlines(), [], False
    for i, line in enumerate(lines):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        if fenced or not line.startswith("|") or (i and lines[i - 1].startswith("|")):
            continue
        if i + 1 >= len(lines) or not TABLE_SEPARATOR.match(lines[i + 1]):
            found.append(line[:80])
    return found


def test_a_table_split_by_a_blank_line_is_found():
    good = "| a | b |\n|---|---|\n| 1 | 2 |\n"
    assert table_starts_without_a_header(good) == []
    split = good + "\n| 3 | 4 |\n"
    assert table_starts_without_a_header(split) == ["| 3 | 4 |"]
    assert table_starts_without_a_header("```\n| not | a table |\n```\n") == []


@pytest.mark.parametrize("page", PAGES + SOURCES + [ROOT / "README.md"], ids=lambda p: p.name)
def test_every_markdown_table_has_its_header(page):
    assert table_starts_without_a_header(page.read_text(encoding="utf-8")) == [], (
        f"{page.name}: a table row with no header line above it (a blank line inside a table?)")
