"""How long a lesson's main path takes, from what a learner meets on it; and how much of its prose
is about the course's own machinery rather than about attention.

``python -m course_utils.authoring.minutes [PAGE ...]`` (``make minutes``) prints, for every lesson
and lab page, what the content time model counts and the minutes it gives, beside the page's
stated ``**Time:**``.

The model (the instructor guide states it and its sources) counts only the **main path**, what a
reader of the site sees without opening anything:

- prose: the words of the markdown cells, at :data:`PROSE_WORDS_PER_MINUTE`;
- visible code: the words of code cells whose input the site shows, and of code blocks in the
  prose, at :data:`CODE_WORDS_PER_MINUTE`;
- printed output: each line of text a visible output prints, at :data:`SECONDS_PER_OUTPUT_LINE`;
- figures: each plotly figure (or widget drawn as one) of the executed notebook, at
  :data:`SECONDS_PER_FIGURE`;
- exercises: each ``{exercise}`` directive, at :data:`MINUTES_PER_EXERCISE` (writing, running the
  checker, perhaps a hint); its statement's words are prose as well.

Not counted: solutions, folded blocks (any directive shown as a dropdown: "Going further" blocks,
answers), cells or parts of cells the site hides (the ``remove-input``, ``remove-output`` and
``remove-cell`` tags, and the folded ``hide-input``/``hide-output``/``hide-cell`` ones), and the
front matter. The total is rounded up to a multiple of 5 minutes: a stated time is never less than
the model's (issue 60).

Machinery: a prose sentence is counted as **about the course's machinery** when it names the
machines and checks that make the course reproducible (processors, kernels, instruction sets, bit for
bit, threads, ``make`` targets, report.json, nbval, tests, tolerances, asserts) or the statistics of
the course's own runs (seeds, paired tests, spreads). :data:`MACHINERY` lists the words. The welcome
lesson's how-to-run steps (``make lab``, ``make book`` ...) are onboarding and do not count there;
on a lab page the statistics of the runs are the page's subject and do not count either
(:data:`LAB_MACHINERY`).
"""

from __future__ import annotations

import argparse
import math
import re
import sys
from dataclasses import dataclass
from pathlib import Path

PROSE_WORDS_PER_MINUTE = 120  # technical prose with formulas, read to be understood
CODE_WORDS_PER_MINUTE = 80  # code is read more slowly than prose, token by token
SECONDS_PER_OUTPUT_LINE = 5  # a printed line is read and compared with what the prose said
SECONDS_PER_FIGURE = 45  # a figure is looked at: title, axes, the pattern it shows
MINUTES_PER_EXERCISE = 8  # predict, write, run the checker, perhaps read a hint
MAIN_PATH_LIMIT = 75  # the most a lesson's main path may take (the course design)
MACHINERY_LIMIT = 0.05  # the largest share of a lesson's prose sentences about the machinery

TIME = re.compile(r"\*\*Time:\*\*\s+about\s+(\d+)\s+minutes")  # a page's stated Time line
WORD = re.compile(r"[A-Za-z]+(?:['’][a-z]+)?")
CODE_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\d+(?:\.\d+)?")
FRONT_MATTER = re.compile(r"\A---\n.*?^---\s*$", re.MULTILINE | re.DOTALL)
# A MyST directive fenced by 3 or more backticks or colons: ```{name} argument ... ```
DIRECTIVE = re.compile(
    r"^(?P<fence>`{3,}|:{3,})\{(?P<name>[\w:-]+)\}(?P<argument>[^\n]*)\n(?P<body>.*?)^(?P=fence)[ \t]*$\n?",
    re.MULTILINE | re.DOTALL,
)
CODE_BLOCK = re.compile(r"^(?P<fence>`{3,}|~{3,})(?!\{)[^\n]*\n(?P<code>.*?)^(?P=fence)[ \t]*$\n?", re.MULTILINE | re.DOTALL)
HTML_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
HTML_TAG = re.compile(r"<[^>]+>")
LINK_TARGET = re.compile(r"\]\([^)]*\)|^\([\w-]+\)=\s*$|\{(\w+)\}`([^`<]*)(?:<[^>]*>)?`", re.MULTILINE)
SENTENCE_END = re.compile(r"(?<=[.!?:])\s+(?=[A-Z`*(\[\"“])|\n\s*\n|\n(?=\s*[-*+] |\s*\d+\. |#)")

HIDDEN_INPUT = {"remove-input", "remove-cell", "hide-input", "hide-cell"}
HIDDEN_OUTPUT = {"remove-output", "remove-cell", "hide-output", "hide-cell"}
FIGURE_MIME = ("application/vnd.plotly.v1+json", "application/vnd.jupyter.widget-view+json", "image/png", "image/svg+xml")

# The machines and checks that make the course reproducible: machinery on every page.
SETUP_WORDS = (
    r"processors?|CPUs?|kernels?|instruction sets?|AVX\w*|SIMD|MKL|oneDNN|bit for bit|bit-identical|"
    r"last bits?|threads?\b(?! through)|thread counts?|make (?:assets|test|book|lessons|portability|compat|bench|"
    r"measure|minutes|lab|serve|pdf|handouts|notebooks|site|unit)|`make [a-z-]+`|report\.json|nbval|"
    r"(?:unit |site |the |our |course.s )tests?|tested|pytest|tolerances?|asserts?|assertions?"
)
# The statistics of the course's own runs: machinery on a lesson's main path, the subject of a lab page.
RUN_STATISTICS_WORDS = (
    r"seed(?:s|ed|ing)?|paired (?:t-)?tests?|paired differences?|t-tests?|spreads?|standard deviations?|"
    r"confidence intervals?|CI"
)
MACHINERY = re.compile(rf"\b({SETUP_WORDS}|{RUN_STATISTICS_WORDS})\b", re.IGNORECASE)
LAB_MACHINERY = re.compile(rf"\b({SETUP_WORDS})\b", re.IGNORECASE)
ONBOARDING = re.compile(r"`?make (?:lab|book|serve|test|install)`?|\bkernel\b", re.IGNORECASE)


@dataclass(frozen=True)
class Content:
    """What the main path of one page holds, and the minutes the model gives it."""

    page: str
    prose_words: int
    code_words: int
    output_lines: int
    figures: int
    exercises: int
    sentences: int
    machinery_sentences: list[str]
    stated: int | None

    @property
    def exact_minutes(self) -> float:
        return (
            self.prose_words / PROSE_WORDS_PER_MINUTE
            + self.code_words / CODE_WORDS_PER_MINUTE
            + (self.output_lines * SECONDS_PER_OUTPUT_LINE + self.figures * SECONDS_PER_FIGURE) / 60
            + self.exercises * MINUTES_PER_EXERCISE
        )

    @property
    def minutes(self) -> int:
        """The model's minutes rounded up to a multiple of 5 (never "about 0 minutes"); to the
        microminute first, so that float noise does not round 75.0000001 up to 80."""
        return max(5, 5 * math.ceil(round(self.exact_minutes, 6) / 5))

    @property
    def machinery_share(self) -> float:
        return len(self.machinery_sentences) / self.sentences if self.sentences else 0.0


def _folded(name: str, body: str) -> bool:
    """A directive the site shows folded: a solution, or anything with ``:class: dropdown``."""
    options = re.findall(r"^:(\w+):[ \t]*(.*)$", body.split("\n\n", 1)[0], re.MULTILINE)
    return name == "solution" or any(key == "class" and "dropdown" in value.split() for key, value in options)


def main_path_markdown(markdown: str) -> str:
    """A markdown cell's text as the site shows it unfolded: folded directives (solutions,
    dropdowns) removed, other directives' options removed and their bodies kept."""

    def keep(match: re.Match) -> str:
        if _folded(match["name"], match["body"]):
            return ""
        body = re.sub(r"\A(?::\w[\w-]*:[^\n]*\n)+", "", match["body"])
        argument = match["argument"].strip()
        return (argument + "\n\n" if match["name"] in {"exercise", "admonition"} and argument else "") + main_path_markdown(body)

    return DIRECTIVE.sub(keep, HTML_COMMENT.sub("", markdown))


def count_exercises(markdown: str) -> int:
    """The ``{exercise}`` directives of a markdown text that are not folded away."""
    count = 0
    for match in DIRECTIVE.finditer(markdown):
        if _folded(match["name"], match["body"]):
            continue
        count += match["name"] == "exercise"
        count += count_exercises(match["body"])
    return count


def prose_and_code(markdown: str) -> tuple[str, str]:
    """The prose of a main-path markdown text and the code blocks it shows."""
    code = "\n".join(m["code"] for m in CODE_BLOCK.finditer(markdown))
    prose = CODE_BLOCK.sub("\n\n", markdown)
    prose = LINK_TARGET.sub(lambda m: " " + (m.group(2) or m.group(1) or "") if m.group(0).startswith("{") else " ", prose)
    prose = re.sub(r"\$\$.*?\$\$", " ", prose, flags=re.DOTALL)
    return HTML_TAG.sub(" ", prose), code


def sentences(prose: str) -> list[str]:
    """The prose cut into sentences (and list items, and headings), each with at least one word."""
    pieces = (" ".join(piece.split()) for piece in SENTENCE_END.split(prose))
    return [p for p in pieces if WORD.search(p) and len(WORD.findall(p)) >= 3]


def is_machinery(sentence: str, onboarding: bool = False, lab: bool = False) -> bool:
    """Whether a sentence is about the course's machinery (see :data:`MACHINERY`; on a lab page,
    :data:`LAB_MACHINERY`: the statistics of the course's runs are what a lab page is about)."""
    if onboarding:
        sentence = ONBOARDING.sub(" ", sentence)
    return bool((LAB_MACHINERY if lab else MACHINERY).search(sentence))


def output_lines_and_figures(outputs: list) -> tuple[int, int]:
    """Printed lines and figures of one code cell's outputs."""
    lines = figures = 0
    for output in outputs:
        if output.get("output_type") == "stream":
            lines += len(output.get("text", "").rstrip("\n").splitlines())
        elif output.get("output_type") in {"display_data", "execute_result"}:
            data = output.get("data", {})
            if any(mime in data for mime in FIGURE_MIME):
                figures += 1
            elif "text/html" in data:
                html = data["text/html"]
                lines += max(1, len(re.findall(r"<tr|<p\b|<li\b|<br|<h\d|<legend|<label", html)))
            elif "text/plain" in data:
                lines += len(data["text/plain"].rstrip("\n").splitlines())
        elif output.get("output_type") == "error":
            lines += len(output.get("traceback", []))
    return lines, figures


def content(path: Path) -> Content:
    """Count the main path of a lesson or lab page: its MyST markdown, and the outputs of its
    executed notebook (the paired ``.ipynb`` beside it; without it, no outputs are counted)."""
    import nbformat

    path = Path(path)
    if path.suffix != ".md" or not path.is_file():
        raise FileNotFoundError(f"expected a lesson's MyST markdown file such as lessons/01_rnn_recap.md, got {path}")
    executed = path.with_suffix(".ipynb")
    notebook = nbformat.read(executed, as_version=4) if executed.is_file() else None
    return content_of(path.read_text(encoding="utf-8"), notebook, path.stem)


def content_of(text: str, notebook=None, page: str = "page") -> Content:
    """Count the main path of a page's MyST markdown ``text``, with the outputs of its executed
    ``notebook`` (an nbformat notebook, its code cells matched to the page's by their source)."""
    import jupytext

    cells = jupytext.reads(text, fmt="md:myst").cells
    outputs = {}
    if notebook is not None:
        outputs = {c.source: c.get("outputs", []) for c in notebook.cells if c.cell_type == "code"}
    onboarding = page.startswith("00_")
    prose_words = code_words = lines = figures = exercises = 0
    all_sentences: list[str] = []
    for cell in cells:
        tags = set(cell.metadata.get("tags", []))
        if cell.cell_type == "markdown":
            shown = main_path_markdown(cell.source)
            prose, code = prose_and_code(shown)
            prose_words += len(WORD.findall(prose))
            code_words += len(CODE_WORD.findall(code))
            exercises += count_exercises(cell.source)
            all_sentences += sentences(prose)
        elif cell.cell_type == "code":
            if not tags & HIDDEN_INPUT:
                code_words += len(CODE_WORD.findall(cell.source))
            if not tags & HIDDEN_OUTPUT:
                more_lines, more_figures = output_lines_and_figures(outputs.get(cell.source, []))
                lines += more_lines
                figures += more_figures
    stated = TIME.findall(text)
    return Content(
        page=page,
        prose_words=prose_words,
        code_words=code_words,
        output_lines=lines,
        figures=figures,
        exercises=exercises,
        sentences=len(all_sentences),
        machinery_sentences=[s for s in all_sentences if is_machinery(s, onboarding, lab=page.endswith("_lab"))],
        stated=int(stated[0]) if len(stated) == 1 else None,
    )


HEADER = ("page", "prose words", "code words", "output lines", "figures", "exercises", "minutes", "stated",
          "machinery")


def table(rows: list[Content]) -> str:
    """The counts of each page as a markdown table, with a total row."""
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    for row in rows:
        stated = "–" if row.stated is None else str(row.stated)
        lines.append(
            f"| {row.page} | {row.prose_words:,} | {row.code_words:,} | {row.output_lines} | {row.figures} | "
            f"{row.exercises} | {row.minutes} ({row.exact_minutes:.0f}) | {stated} | "
            f"{row.machinery_share:.0%} ({len(row.machinery_sentences)}/{row.sentences}) |"
        )
    total = sum(r.minutes for r in rows)
    stated_total = sum(r.stated or 0 for r in rows)
    lines.append(f"| total | {sum(r.prose_words for r in rows):,} | {sum(r.code_words for r in rows):,} | "
                 f"{sum(r.output_lines for r in rows)} | {sum(r.figures for r in rows)} | "
                 f"{sum(r.exercises for r in rows)} | {total} | {stated_total} | |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    from .lessons import page_sources

    parser = argparse.ArgumentParser(prog="python -m course_utils.authoring.minutes", description=__doc__.split("\n")[0])
    parser.add_argument("pages", nargs="*", type=Path, help="lesson or lab .md files (default: all)")
    parser.add_argument("--sentences", action="store_true", help="also list each page's machinery sentences")
    args = parser.parse_args(argv)
    rows = [content(p) for p in (args.pages or page_sources())]
    print(table(rows))
    print(f"\nminutes: prose at {PROSE_WORDS_PER_MINUTE} words/min, code at {CODE_WORDS_PER_MINUTE} words/min, "
          f"{SECONDS_PER_OUTPUT_LINE} s a printed line, {SECONDS_PER_FIGURE} s a figure, {MINUTES_PER_EXERCISE} min an "
          f"exercise, rounded up to 5 (unrounded in brackets); machinery: share of prose sentences (count/sentences)")
    if args.sentences:
        for row in rows:
            for sentence in row.machinery_sentences:
                print(f"{row.page}: {sentence}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
