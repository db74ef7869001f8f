"""The self-check quizzes: the spec is validated, the HTML is labelled, deterministic and self-contained."""

from __future__ import annotations

import html.parser
import re
from pathlib import Path

import numpy as np
import pytest

from course_utils import quiz
from course_utils.authoring.lessons import lesson_sources


def _choice(**changes):
    spec = dict(prompt="How many steps does an RNN take for `T` tokens?", right="T", wrong=["1", "T squared"],
                explanation="One step per token.", hint="Count the loop.",
                section="The sequential bottleneck")
    spec.update(changes)
    return quiz.Choice(**spec)


def _number(**changes):
    spec = dict(prompt="How many parameters has the LSTM?", answer=np.int64(144), explanation="4 gates.",
                hint="Four gates, each like an RNN.", section="How many parameters?")
    spec.update(changes)
    return quiz.Number(**spec)


class _Page(html.parser.HTMLParser):
    """The elements of a quiz's HTML: tags with their attributes, and label texts."""

    def __init__(self):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []
        self.stack: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag not in ("input", "br"):
            self.stack.append(tag)

    def handle_endtag(self, tag):
        assert self.stack and self.stack[-1] == tag, f"</{tag}> closes <{self.stack[-1] if self.stack else None}>"
        self.stack.pop()


def _parse(text: str) -> _Page:
    page = _Page()
    page.feed(text)
    assert not page.stack, f"unclosed tags: {page.stack}"
    return page


LESSONS = lesson_sources()  # lab pages have no quiz
HEADING = re.compile(r"^#{1,6} (.+)$", re.MULTILINE)


def _headings(lesson: Path) -> list[str]:
    text = re.sub(r"^(`{3,}).*?^\1", "", lesson.read_text(encoding="utf-8"), flags=re.MULTILINE | re.DOTALL)
    return HEADING.findall(text)


def test_section_anchor_is_the_id_docutils_gives_every_lesson_heading():
    from docutils.nodes import make_id

    headings = [h for lesson in LESSONS for h in _headings(lesson)]
    assert len(headings) > 50
    for heading in headings + ["Why divide by √d_k?", "Causal masks: the decoder's view", "Ünïcode — dashes"]:
        assert quiz.section_anchor(heading) == make_id(heading), heading


@pytest.mark.parametrize("lesson", LESSONS[1:], ids=lambda p: p.stem)
def test_every_lesson_quiz_sends_the_reader_to_a_heading_of_its_lesson(lesson):
    text = lesson.read_text(encoding="utf-8")
    sections = re.findall(r'^\s+section="((?:[^"\\]|\\.)*)",$', text, re.MULTILINE)
    assert sections, f"{lesson.name}: no quiz"
    headings = _headings(lesson)
    for section in sections:
        section = section.replace('\\"', '"')
        assert section in headings, f"{lesson.name}: the quiz names a section {section!r} that is not a heading"
        assert [quiz.section_anchor(h) for h in headings].count(quiz.section_anchor(section)) == 1


@pytest.mark.parametrize("changes, message", [
    ({"right": ""}, "the right answer of"),
    ({"wrong": []}, "1 to 5 wrong answers"),
    ({"wrong": ["1", "T"]}, "distinct answers"),
    ({"wrong": ["1", " 1 "]}, "distinct answers"),
    ({"wrong": "1 T"}, "list of strings"),
    ({"hint": ""}, "the hint of"),
    ({"section": None}, "the section of"),
    ({"prompt": "odd ` quote"}, "backquotes in pairs"),
])
def test_a_bad_choice_is_refused_with_what_was_expected(changes, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        q = _choice(**changes)
        quiz.show(q)._repr_html_()


@pytest.mark.parametrize("changes, message", [
    ({"answer": "144"}, "finite number"),
    ({"answer": float("nan")}, "finite number"),
    ({"answer": True}, "finite number"),
    ({"decimals": 9}, "integer from 0 to 6"),
    ({"explanation": "  "}, "the explanation of"),
])
def test_a_bad_number_is_refused_with_what_was_expected(changes, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        _number(**changes)


def test_a_quiz_needs_questions_of_the_quiz_types():
    with pytest.raises(ValueError, match="at least one question"):
        quiz.show()
    with pytest.raises(TypeError, match="question 2 to be a quiz.Choice or a quiz.Number, got dict"):
        quiz.show(_choice(), {"prompt": "?"})


def test_numbers_take_numpy_and_torch_scalars_and_round_to_their_decimals():
    import torch

    q = _number(answer=torch.tensor(0.123456), decimals=3)
    assert type(q.answer) is float and q.shown == "0.123"
    assert abs(0.1234 - q.answer) <= q.tolerance and abs(0.1225 - q.answer) > q.tolerance
    assert _number().answer == 144 and _number().tolerance < 1
    assert "Your answer (rounded to 0.001):" in quiz.show(q)._repr_html_()
    assert "Your answer:" in quiz.show(_number())._repr_html_()


def test_each_question_is_a_labelled_form_with_a_live_feedback_region():
    text = quiz.show(_choice(), _number())._repr_html_()
    page = _parse(text)
    forms = [a for tag, a in page.tags if tag == "form"]
    assert [f["data-kind"] for f in forms] == ["choice", "number"]
    shown = _choice().choices
    assert sorted(shown) == ["1", "T", "T squared"]
    assert forms[0]["data-answer"] == str(shown.index("T")) and forms[1]["data-answer"] == "144"
    assert sum(tag == "fieldset" for tag, _ in page.tags) == 2 and sum(tag == "legend" for tag, _ in page.tags) == 2
    radios = [a for tag, a in page.tags if tag == "input" and a.get("type") == "radio"]
    assert len(radios) == 3 and len({r["name"] for r in radios}) == 1
    # each radio inside its label (implicit label); the number's input named by its label's `for`
    assert re.findall(r'<label><input type="radio"[^>]*>([^<]*)</label>', text) == shown
    number_input = next(a for tag, a in page.tags if tag == "input" and a.get("type") == "text")
    assert any(tag == "label" and a.get("for") == number_input["id"] for tag, a in page.tags)
    statuses = [a for tag, a in page.tags if a.get("role") == "status"]
    assert len(statuses) == 2 and all(s["aria-live"] == "polite" for s in statuses)
    assert sum(tag == "button" and a.get("type") == "submit" for tag, a in page.tags) == 2
    ids = [a["id"] for _, a in page.tags if "id" in a]
    assert len(ids) == len(set(ids))


def test_feedback_explains_when_right_hints_when_wrong_and_links_to_the_section():
    text = quiz.show(_choice())._repr_html_()
    right, wrong = re.findall(r'<template data-verdict="(?:right|wrong)">(.*?)</template>', text)
    assert "One step per token." in right and "Count the loop." not in right
    assert "Count the loop." in wrong and "One step per token." not in wrong
    for feedback in (right, wrong):
        assert '<a href="#the-sequential-bottleneck" data-section="The sequential bottleneck">' in feedback


def test_the_html_is_self_contained_escaped_and_deterministic():
    q = _choice(prompt="Is `a < b` <b>bold</b>?", right="no", wrong=["yes"])
    first = quiz.show(q, _number())._repr_html_()
    assert first == quiz.show(q, _number())._repr_html_()
    assert "<code>a &lt; b</code> &lt;b&gt;bold&lt;/b&gt;" in first
    assert not re.search(r"\b(src|href)=\"(https?:)?//", first), "a quiz loads nothing from elsewhere"
    assert first.count("<script>") == 1 and first.count("<style>") == 1
    other = quiz.show(_number())._repr_html_()
    assert re.search(r'id="(course-quiz-\w+)"', first)[1] != re.search(r'id="(course-quiz-\w+)"', other)[1]


def test_the_plain_text_lists_the_questions():
    text = repr(quiz.show(_choice(), _number()))
    assert "1. How many steps does an RNN take for `T` tokens?" in text and "   ( ) T squared" in text
    assert "2. How many parameters has the LSTM?" in text


def test_choices_are_shuffled_by_the_prompt_the_same_at_every_run():
    orders = {tuple(_choice(prompt=f"Question {i}?", wrong=["1", "T squared", "log T"]).choices) for i in range(20)}
    assert len(orders) > 1, "the right answer is not always in the same place"
    assert all(sorted(order) == ["1", "T", "T squared", "log T"] for order in orders)
    assert _choice().choices == _choice().choices
