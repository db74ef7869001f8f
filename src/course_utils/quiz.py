"""Self-check quizzes: a few questions at the end of a lesson, answered and checked in the page.

A lesson ends with a cell such as::

    quiz.show(
        quiz.Choice("How many steps does an RNN need for T tokens?", right="T", wrong=["1", "T squared"],
                    explanation="...", hint="...", section="The sequential bottleneck"),
        quiz.Number("How many parameters has the LSTM?", answer=counts["LSTM"],
                    explanation="...", hint="...", section="How many parameters?"),
    )

Its output is one self-contained piece of HTML (a ``<style>``, one ``<form>`` per question and a
small script, no external file), so the same quiz works on the static site with no kernel, in
JupyterLab and in Colab. Numeric answers are the values the lesson computed, passed in by the cell,
so a quiz cannot drift from the lesson. Each question is a ``<fieldset>`` with a ``<legend>``;
choices are labelled radio buttons, a number has a labelled input; the Check button writes the
feedback into an ``aria-live="polite"`` region: the explanation when right, a hint when wrong, and
always a link back to the section that teaches it. Everything works with the keyboard alone.

The HTML is deterministic (ids derive from the questions' text), as nbval compares it.
"""

from __future__ import annotations

import hashlib
import html
import math
import random
import re
import unicodedata
from dataclasses import dataclass
from numbers import Real
from typing import Sequence


def section_anchor(section: str) -> str:
    """The ``id`` of a lesson heading on the site, as docutils writes it (``docutils.nodes.make_id``).

    ``"Causal masks: the decoder's view"`` -> ``"causal-masks-the-decoder-s-view"``. Written out
    here, as docutils is not installed in Colab.
    """
    text = unicodedata.normalize("NFKD", section.lower()).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"[^a-z0-9]+", "-", " ".join(text.split()))
    return re.sub(r"^[-0-9]+|-+$", "", text)


def _text(value, what: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"expected {what} to be a non-empty string, got {value!r}")
    return value.strip()


def _inline(text: str) -> str:
    """Escaped text, with `backquoted` spans as ``<code>``."""
    parts = text.split("`")
    if len(parts) % 2 == 0:
        raise ValueError(f"expected backquotes in pairs (`code`), got an odd number in {text!r}")
    return "".join(f"<code>{html.escape(p)}</code>" if i % 2 else html.escape(p) for i, p in enumerate(parts))


@dataclass(frozen=True)
class Choice:
    """A multiple-choice question: the ``right`` answer and 1 to 5 ``wrong`` ones.

    The choices are shown in an order shuffled by the prompt (the same at every run), so the
    right answer is not always first. ``explanation`` is shown when the reader picks the right
    answer, ``hint`` otherwise; both send the reader to ``section``, the title of the lesson
    heading that teaches it.
    """

    prompt: str
    right: str
    wrong: Sequence[str]
    explanation: str
    hint: str
    section: str

    def __post_init__(self) -> None:
        _text(self.prompt, "the prompt")
        for what in ("right", "explanation", "hint", "section"):
            _text(getattr(self, what), f"the {what} answer of {self.prompt!r}" if what == "right"
                  else f"the {what} of {self.prompt!r}")
        if isinstance(self.wrong, str) or not isinstance(self.wrong, Sequence):
            raise ValueError(f"expected the wrong answers of {self.prompt!r} to be a list of strings, "
                             f"got {self.wrong!r}")
        wrong = [_text(w, f"every wrong answer of {self.prompt!r}") for w in self.wrong]
        if not 1 <= len(wrong) <= 5:
            raise ValueError(f"expected 1 to 5 wrong answers for {self.prompt!r}, got {len(wrong)}")
        if len(set(wrong + [self.right.strip()])) != len(wrong) + 1:
            raise ValueError(f"expected distinct answers for {self.prompt!r}, got right {self.right!r} "
                             f"and wrong {wrong}")

    @property
    def choices(self) -> list[str]:
        """The right and wrong answers in the order shown: shuffled by a generator seeded with the prompt."""
        choices = [self.right.strip()] + [w.strip() for w in self.wrong]
        random.Random(self.prompt).shuffle(choices)
        return choices


@dataclass(frozen=True)
class Number:
    """A numeric question: the reader types a number, right when within ``tolerance`` of ``answer``.

    ``answer`` is a value the lesson computed (an int, a float, a numpy or torch scalar); the
    default tolerance accepts it rounded to ``decimals`` decimals (0 for integers: exact).
    """

    prompt: str
    answer: Real
    explanation: str
    hint: str
    section: str
    decimals: int = 0

    def __post_init__(self) -> None:
        _text(self.prompt, "the prompt")
        for what in ("explanation", "hint", "section"):
            _text(getattr(self, what), f"the {what} of {self.prompt!r}")
        answer = self.answer.item() if hasattr(self.answer, "item") else self.answer
        if isinstance(answer, bool) or not isinstance(answer, Real) or not math.isfinite(float(answer)):
            raise ValueError(f"expected the answer of {self.prompt!r} to be a finite number, got {self.answer!r}")
        if isinstance(self.decimals, bool) or not isinstance(self.decimals, int) or not 0 <= self.decimals <= 6:
            raise ValueError(f"expected decimals of {self.prompt!r} to be an integer from 0 to 6, got {self.decimals!r}")
        object.__setattr__(self, "answer", answer)

    @property
    def shown(self) -> str:
        """The answer as the reader is expected to type it."""
        return f"{float(self.answer):.{self.decimals}f}"

    @property
    def tolerance(self) -> float:
        """Half a unit of the last decimal asked for (plus rounding slack): any correct rounding passes."""
        return 0.5 * 10.0 ** -self.decimals + 1e-9


Question = Choice | Number

STYLE = """<style>
.course-quiz{margin:1em 0}
.course-quiz form{margin:0 0 1em}
.course-quiz fieldset{border:1px solid currentColor;border-radius:.4em;padding:.6em .9em;margin:0;min-width:0}
.course-quiz legend{font-weight:600;padding:0 .3em;max-width:100%;white-space:normal}
.course-quiz label{display:block;margin:.3em 0;cursor:pointer}
.course-quiz input[type=radio]{margin-right:.5em}
.course-quiz input[type=text]{font:inherit;padding:.2em .4em;max-width:12em;margin-left:.3em}
.course-quiz button{font:inherit;margin-top:.5em;padding:.2em .9em;cursor:pointer}
.course-quiz [role=status]:not(:empty){margin:.5em 0 0;padding:.4em .6em;border-left:4px solid currentColor}
.course-quiz [data-verdict=right]{border-left-style:solid}
.course-quiz [data-verdict=wrong]{border-left-style:dashed}
</style>"""

# Checks a question's form on submit; a link to a section goes to the heading of that title when
# the page has no element with its anchor (JupyterLab and Colab name headings their own way).
SCRIPT = r"""<script>
(function(){
  var quiz=document.getElementById("%s");
  if(!quiz||quiz.dataset.ready)return;quiz.dataset.ready="1";
  function go(e){
    var a=e.target.closest("a[data-section]");if(!a||document.getElementById(a.hash.slice(1)))return;
    var hs=document.querySelectorAll("h1,h2,h3,h4");
    for(var i=0;i<hs.length;i++){if(hs[i].textContent.replace(/[\u00b6#]/g,"").trim()===a.dataset.section){
      e.preventDefault();hs[i].scrollIntoView();return;}}
  }
  quiz.addEventListener("click",go);
  quiz.querySelectorAll("form").forEach(function(form){
    form.addEventListener("submit",function(e){
      e.preventDefault();
      var out=form.querySelector("[role=status]"),ok=false,given=true,q=form.dataset;
      if(q.kind==="choice"){var c=form.querySelector("input:checked");given=!!c;ok=given&&c.value===q.answer;}
      else{var t=form.querySelector("input").value.replace(/[\s_\u2009]/g,"");
        t=/^[-+]?\d{1,3}(,\d{3})+(\.\d*)?$/.test(t)?t.replace(/,/g,""):t.replace(",",".");
        given=t!==""&&isFinite(Number(t));ok=given&&Math.abs(Number(t)-Number(q.answer))<=Number(q.tolerance);}
      var tpl=form.querySelector("template[data-verdict="+(ok?"right":"wrong")+"]");
      out.dataset.verdict=ok?"right":"wrong";
      out.innerHTML=given?tpl.innerHTML:(q.kind==="choice"?"Pick one answer first.":"Type a number first.");
    });
  });
})();
</script>"""


def _feedback(question: Question, verdict: str) -> str:
    anchor = section_anchor(question.section)
    link = (f'<a href="#{anchor}" data-section="{html.escape(question.section)}">'
            f'{html.escape(question.section)}</a>')
    if verdict == "right":
        return f"<strong>Right.</strong> {_inline(question.explanation)} See {link}."
    return f"<strong>Not yet.</strong> {_inline(question.hint)} Reread {link}."


def _question_html(question: Question, qid: str, number: int) -> str:
    legend = f"<legend>{number}. {_inline(question.prompt)}</legend>"
    if isinstance(question, Choice):
        data = f'data-kind="choice" data-answer="{question.choices.index(question.right.strip())}"'
        body = "".join(
            f'<label><input type="radio" name="{qid}" value="{i}">{_inline(choice)}</label>'
            for i, choice in enumerate(question.choices)
        )
    else:
        data = (f'data-kind="number" data-answer="{question.answer!r}" data-decimals="{question.decimals}" '
                f'data-tolerance="{question.tolerance!r}"')
        rounded = f" (rounded to {10.0 ** -question.decimals:.{question.decimals}f})" if question.decimals else ""
        body = (f'<label for="{qid}-answer">Your answer{rounded}:'
                f'<input type="text" inputmode="decimal" autocomplete="off" id="{qid}-answer" name="{qid}"></label>')
    templates = "".join(f'<template data-verdict="{v}">{_feedback(question, v)}</template>' for v in ("right", "wrong"))
    return (f'<form class="course-quiz-question" id="{qid}" {data}><fieldset>{legend}{body}'
            f'<button type="submit">Check</button><p role="status" aria-live="polite"></p>'
            f"{templates}</fieldset></form>")


class Quiz:
    """Questions shown as a self-contained HTML form (``_repr_html_``) and as plain text (``repr``)."""

    def __init__(self, questions: Sequence[Question]) -> None:
        questions = list(questions)
        if not questions:
            raise ValueError("expected at least one question (quiz.Choice or quiz.Number), got none")
        for index, question in enumerate(questions):
            if not isinstance(question, (Choice, Number)):
                raise TypeError(f"expected question {index + 1} to be a quiz.Choice or a quiz.Number, "
                                f"got {type(question).__name__}")
        self.questions = questions
        self.id = "course-quiz-" + hashlib.sha256(repr(questions).encode()).hexdigest()[:10]

    def _repr_html_(self) -> str:
        forms = "".join(_question_html(q, f"{self.id}-q{i + 1}", i + 1) for i, q in enumerate(self.questions))
        return (f'{STYLE}<div class="course-quiz" id="{self.id}">'
                f'<p>Check yourself: pick or type an answer, then press <em>Check</em> (or Enter).</p>'
                f"{forms}</div>{SCRIPT % self.id}")

    def __repr__(self) -> str:
        lines = ["Quiz (run the cell in Jupyter or Colab, or read the course site, to check your answers)"]
        for i, q in enumerate(self.questions, 1):
            lines.append(f"{i}. {q.prompt}")
            if isinstance(q, Choice):
                lines += [f"   ( ) {choice}" for choice in q.choices]
        return "\n".join(lines)


def show(*questions: Question) -> Quiz:
    """The quiz of ``questions`` (each a :class:`Choice` or a :class:`Number`), displayed by Jupyter."""
    return Quiz(questions)
