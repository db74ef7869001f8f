"""The self-check quiz at the end of every lesson, answered in headless Chromium with no kernel.

On every lesson page, at laptop and at phone width: a multiple-choice question answered wrongly
(with the mouse, or a tap) and then rightly, and a numeric question answered wrongly and then
rightly with the keyboard alone. The feedback must say which it is, explain or hint, and link to a
section of the page; axe-core must find no violation in the quiz; the quiz must fit a phone.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from course_utils import pages
from tests.site import phone
from tests.site.test_site import LESSON_PAGES

# lessons 01-09 end with a quiz; 00, the welcome, teaches nothing to check, and a lab page measures
QUIZ_PAGES = [p for p in LESSON_PAGES if not Path(p).name.startswith("00_") and not pages.is_lab(Path(p))]
VIEWPORTS = {"laptop": (phone.LAPTOP, False), "phone": (phone.PHONE, True)}


def _feedback(form) -> dict:
    """The text of a question's feedback, and whether its section link names an element of the page."""
    return form.evaluate("""form => {
      const out = form.querySelector('[role=status]');
      const link = out.querySelector('a[data-section]');
      return {text: out.textContent.trim(), live: out.getAttribute('aria-live'),
              target: link ? link.getAttribute('href') : null,
              resolves: !!link && !!document.getElementById(link.getAttribute('href').slice(1))};
    }""")


@pytest.mark.parametrize("viewport", VIEWPORTS)
@pytest.mark.parametrize("page", QUIZ_PAGES)
def test_the_quiz_checks_answers_without_a_kernel(browser, base_url, page, viewport):
    size, is_phone = VIEWPORTS[viewport]
    context, tab = phone.open_page(browser, f"{base_url}/{page}", size, phone=is_phone)
    errors = []
    tab.on("pageerror", lambda error: errors.append(str(error)))
    try:
        quizzes = tab.locator("div.course-quiz")
        assert quizzes.count() == 1, f"{page}: expected one quiz, found {quizzes.count()}"
        quiz = quizzes.first
        assert 4 <= quiz.locator("form").count() <= 6, f"{page}: expected 4 to 6 questions"
        quiz.scroll_into_view_if_needed()

        # multiple choice: nothing picked, a wrong answer, then the right one
        choice = quiz.locator("form[data-kind=choice]").first
        right = int(choice.get_attribute("data-answer"))
        radios = choice.locator("input[type=radio]")
        wrong = next(i for i in range(radios.count()) if i != right)
        choice.get_by_role("button", name="Check").click()
        assert _feedback(choice)["text"] == "Pick one answer first."
        (radios.nth(wrong).tap() if is_phone else radios.nth(wrong).check())
        choice.get_by_role("button", name="Check").click()
        said = _feedback(choice)
        assert said["text"].startswith("Not yet."), f"{page}: a wrong answer got {said['text']!r}"
        assert said["live"] == "polite" and said["resolves"], f"{page}: the hint's link {said['target']} leads nowhere"
        (radios.nth(right).tap() if is_phone else radios.nth(right).check())
        choice.get_by_role("button", name="Check").click()
        said = _feedback(choice)
        assert said["text"].startswith("Right."), f"{page}: the right answer got {said['text']!r}"
        assert said["resolves"], f"{page}: the explanation's link {said['target']} leads nowhere"

        # a number, by keyboard alone: focus the input, type, press Enter
        number = quiz.locator("form[data-kind=number]").first
        answer, decimals = float(number.get_attribute("data-answer")), int(number.get_attribute("data-decimals"))
        field = number.get_by_label("Your answer", exact=False)
        field.focus()
        tab.keyboard.type(f"{answer + 10 ** -decimals * 3:.{decimals}f}")
        tab.keyboard.press("Enter")
        said = _feedback(number)
        assert said["text"].startswith("Not yet."), f"{page}: a wrong number got {said['text']!r}"
        field.fill("")
        field.focus()
        tab.keyboard.type(f"{answer:.{decimals}f}")
        tab.keyboard.press("Enter")
        said = _feedback(number)
        assert said["text"].startswith("Right."), f"{page}: the number {answer:.{decimals}f} got {said['text']!r}"
        assert said["resolves"], f"{page}: the explanation's link {said['target']} leads nowhere"

        width = quiz.evaluate("q => [q.scrollWidth, q.clientWidth, q.getBoundingClientRect().right]")
        assert width[0] <= width[1] and width[2] <= size["width"], f"{page}: the quiz is wider than the page: {width}"
        from axe_playwright_python.sync_playwright import Axe

        violations = Axe().run(tab, context="div.course-quiz").response["violations"]
        found = [{"id": v["id"], "impact": v["impact"], "nodes": [n["target"] for n in v["nodes"]][:3]} for v in violations]
        assert not found, f"{page} ({viewport}): axe-core violations in the quiz: {found}"
        assert not errors, f"{page}: JavaScript errors: {errors}"
    finally:
        context.close()
