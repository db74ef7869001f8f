"""The course's map: its lessons in order, what each does to the running example, and how long each takes.

The introduction of the book draws it. The plan (:data:`PLAN`) is the progression of the course
design; everything else is read from the lesson files as they are: a lesson's title from its
``# Title``, the time a learner needs from its ``**Time:** about N minutes`` line, and the time it
takes to execute from its budget in :data:`course_utils.authoring.bench.LESSON_BUDGET_S`, which
``make bench`` checks. A planned lesson with no file yet is shown as coming.

Two kinds of page are executed from ``lessons/``: a **lesson** (``NN_slug.md``, one of the ten
numbered steps of the plan) and its optional **lab page** (``NN_slug_lab.md``: the measured
experiments, seed tables and ablations of lesson NN, which a curious reader opens from the lesson).
A lab page has no number of its own: the map lists it with its lesson (:mod:`course_utils.pages`).

The **Time:** line is not a guess typed once: :func:`study_minutes` computes it from the lesson
as a learner meets it (the content time model of :mod:`course_utils.authoring.minutes`: prose,
visible code, printed lines, figures and exercises of the main path), and a test keeps every
lesson's line equal to it, so a lesson that grows says so.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from pathlib import Path

import plotly.graph_objects as go

from . import plots
from .authoring.minutes import TIME, content
from .pages import LAB_SUFFIX, is_lab, lab_of, lesson_of  # noqa: F401  (the page kinds, used here and re-exported)

LESSONS_DIR = Path(__file__).resolve().parents[2] / "lessons"
TITLE = re.compile(r"^# (.+)$", re.MULTILINE)

@dataclass(frozen=True)
class Planned:
    """One lesson of the plan: its number, a short name, what a learner will be able to do, and
    what happens to the running example (``{T}``, ``{D}``, ``{H}``, ``{L}`` are its sizes)."""

    number: int
    name: str
    outcome: str
    example: str


PLAN = (
    Planned(0, "Welcome", "set up, and meet the running example", "meet [CLS] I love NLP [SEP]"),
    Planned(
        1,
        "RNN recap",
        "run an RNN, an LSTM and a BiLSTM by hand, and see why they are slow and forgetful",
        "one token per step: {T} hidden states",
    ),
    Planned(2, "Tokens & embeddings", "turn text into ids and ids into vectors", "text → {T} ids → {T}×{D} vectors"),
    Planned(3, "Positional encoding", "give order back to an order-blind model", "+ one position vector per token"),
    Planned(
        4,
        "Self-attention",
        "compute queries, keys, values and multi-head attention",
        "{T}×{T} attention weights, {H} heads",
    ),
    Planned(5, "Masking", "hide padding and the future; mask words to learn from", "padded in a batch, then masked"),
    Planned(6, "The encoder", "build DistilBERT from scratch and match Hugging Face", "{L} layers: attention + FFN"),
    Planned(
        7,
        "Distillation",
        "train a small student from a larger teacher, and measure it",
        "soft targets: teacher → student",
    ),
    Planned(8, "Using DistilBERT", "fine-tune, extract features, save and load", "classify it, or use its vectors"),
    Planned(
        9,
        "Bonus: since DistilBERT",
        "carry attention forward: pre-LN, a decoder and its KV cache, RoPE, grouped-query attention, blocks",
        "written one token at a time",
    ),
)


@dataclass(frozen=True)
class LessonEntry:
    """A lesson of the plan, with what its file says (``path`` None while the lesson is coming)."""

    planned: Planned
    path: Path | None
    title: str
    minutes: int | None
    budget_s: int | None
    lab: Path | None = None

    @property
    def stem(self) -> str | None:
        return self.path.stem if self.path else None


def read_lesson(path: Path) -> tuple[str, int]:
    """A lesson file's title and the minutes of its ``**Time:** about N minutes`` line."""
    text = Path(path).read_text(encoding="utf-8")
    titles, times = TITLE.findall(text), TIME.findall(text)
    if not titles:
        raise ValueError(f"{path}: expected a title line '# ...'")
    if len(times) != 1:
        raise ValueError(f"{path}: expected one '**Time:** about N minutes', found {len(times)}")
    return titles[0].strip(), int(times[0])


def study_minutes(path: Path) -> int:
    """The study time a lesson's main path takes, in minutes rounded to 5, by the content time model
    of :mod:`course_utils.authoring.minutes` (its MyST markdown and its executed ``.ipynb``)."""
    return content(Path(path)).minutes


def lessons(lessons_dir: Path = LESSONS_DIR) -> list[LessonEntry]:
    """The plan, lesson by lesson, with the title, time and budget of each lesson written so far.

    Lessons beyond the plan (added with ``make new-lesson``) come after it, named by their title.
    """
    from .authoring.bench import DEFAULT_LESSON_BUDGET_S, LESSON_BUDGET_S

    files = {}
    for path in sorted(Path(lessons_dir).glob("[0-9][0-9]_*.md")):
        if is_lab(path):
            continue
        if int(path.stem[:2]) in files:
            raise ValueError(f"two lessons numbered {path.stem[:2]}: {files[int(path.stem[:2])].name} and {path.name}")
        files[int(path.stem[:2])] = path
    plan = {p.number: p for p in PLAN}
    for number in sorted(set(files) - set(plan)):
        plan[number] = Planned(number, read_lesson(files[number])[0], "", "")
    entries = []
    for number, planned in sorted(plan.items()):
        path = files.get(number)
        if path is None:
            entries.append(LessonEntry(planned, None, planned.name, None, None))
            continue
        title, minutes = read_lesson(path)
        entries.append(
            LessonEntry(planned, path, title, minutes, LESSON_BUDGET_S.get(path.stem, DEFAULT_LESSON_BUDGET_S),
                        lab_of(path))
        )
    return entries


NARROW_LAYOUT_KEYS = ("shapes", "annotations", "height", "xaxis", "yaxis")


def learning_path(entries: list[LessonEntry], columns: int = 3, narrow_columns: int = 1) -> go.Figure:
    """The learning path as a figure: one box per lesson, in reading order, joined by arrows.

    Each box names the lesson and what it does to the running example; lessons not written yet
    are outlined and marked "coming" (readable without colour). Rows read left to right.
    On narrow screens the site draws the boxes in ``narrow_columns`` columns instead: that layout
    rides along as ``layout.meta["narrow_layout"]`` (read by the site's ``course-figures.js``).
    """
    if not entries:
        raise ValueError("expected at least one lesson, got none")
    fig = _learning_path(entries, columns)
    narrow = _learning_path(entries, narrow_columns).to_plotly_json()["layout"]
    fig.update_layout(meta=dict(narrow_layout={key: narrow[key] for key in NARROW_LAYOUT_KEYS}))
    return fig


def _learning_path(entries: list[LessonEntry], columns: int) -> go.Figure:
    from .data import running_example

    example = running_example()
    sizes = dict(T=example.seq_len, D=example.d_model, H=example.n_heads, L=example.n_layers)
    rows = -(-len(entries) // columns)
    width, height = 0.8, 0.62
    fig = go.Figure()
    centres = []
    for index, entry in enumerate(entries):
        x, y = index % columns, rows - 1 - index // columns
        centres.append((x, y))
        written = entry.path is not None
        fig.add_shape(
            type="rect",
            x0=x - width / 2,
            x1=x + width / 2,
            y0=y - height / 2,
            y1=y + height / 2,
            line=dict(color=plots.color(0), width=2, dash="solid" if written else "dash"),
            fillcolor=plots.color(0) if written else "white",
            layer="below",
        )
        name = html.escape(f"{entry.planned.number:02d} {entry.planned.name}")
        stage = html.escape(entry.planned.example.format(**sizes)) if entry.planned.example else ""
        status = "" if written else "<br><i>coming</i>"
        fig.add_annotation(
            x=x,
            y=y,
            text=f"<b>{name}</b><br>{stage}{status}",
            showarrow=False,
            font=dict(size=12, color="white" if written else "black"),
        )
    for (x0, y0), (x1, y1) in zip(centres, centres[1:]):
        same_row = y0 == y1
        fig.add_annotation(
            x=x1 - width / 2 if same_row else x1,
            y=y1 if same_row else y1 + height / 2,
            ax=x0 + width / 2 if same_row else x0,
            ay=y0 if same_row else y0 - height / 2,
            xref="x",
            yref="y",
            axref="x",
            ayref="y",
            text="",
            showarrow=True,
            arrowhead=2,
            arrowsize=1.2,
            arrowwidth=1.5,
            arrowcolor="black",
        )
    fig.update_xaxes(visible=False, range=[-0.5, columns - 0.5], fixedrange=True)
    fig.update_yaxes(visible=False, range=[-0.5, rows - 0.5], fixedrange=True)
    fig.update_layout(
        title=dict(text="The learning path: one idea per lesson, one sentence all the way", x=0.02, xanchor="left"),
        template=plots.TEMPLATE,
        height=130 * rows + 80,
        margin=dict(l=10, r=10, t=50, b=10),
        showlegend=False,
    )
    return fig


def lesson_table_html(entries: list[LessonEntry], link_prefix: str = "../lessons/") -> str:
    """The lessons as an HTML table: number, title (a link when written, and to its lab page when it
    has one), outcome, study time, run time."""
    rows = []
    for entry in entries:
        number = f"{entry.planned.number:02d}"
        title = html.escape(entry.title)
        if entry.path is not None:
            title = f'<a href="{link_prefix}{entry.stem}.html">{title}</a>'
            if entry.lab is not None:
                title += f' (<a href="{link_prefix}{entry.lab.stem}.html">its lab</a>)'
        else:
            title = f"{title} <i>(coming)</i>"
        minutes = f"{entry.minutes}" if entry.minutes is not None else "–"
        budget = f"{entry.budget_s}" if entry.budget_s is not None else "–"
        cells = [number, title, html.escape(entry.planned.outcome), minutes, budget]
        aligns = ["right", "left", "left", "right", "right"]
        rows.append("<tr>" + "".join(f'<td style="text-align: {a}">{c}</td>' for a, c in zip(aligns, cells)) + "</tr>")
    head = "".join(
        f'<th scope="col">{h}</th>'
        for h in ["#", "lesson", "you will be able to", "study time (min)", "runs in under (s)"]
    )
    return f'<table class="table course-lessons"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'
