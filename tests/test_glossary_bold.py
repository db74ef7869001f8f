"""Every term a lesson introduces has a glossary entry.

The lessons introduce a term by setting it in **bold** where they first explain it; the glossary
must then define it. The rule, precise enough to test without building the book: every bold
phrase in a lesson's prose (code blocks and inline code left out) is one of

1. a glossary link: it holds a ``{term}`` role (``**{term}`tokens <token>`**``), whose target
   ``test_book_pages.test_every_term_role_names_a_glossary_term`` resolves;
2. a glossary term in plain text: its words, case-folded, hyphens read as spaces, contain the
   words of a glossary term, each possibly with a plural "s" (``**forget gate**`` names "gate",
   ``**token-type embeddings**`` names "embedding");
3. a label, not a term: it ends with ":", "?" or "." (``**Time:**``, ``**In Google Colab.**``),
   or is a heading of the lesson template;
4. emphasis, not a term: listed in ``EMPHASIS`` below, with the lesson that bolds it.

A new bold phrase that is none of these fails with the phrase, the lesson and the two fixes: add
the term to book/glossary.md, or list the phrase as emphasis here.
"""

from __future__ import annotations

import re

import pytest

from tests.test_book_pages import SOURCES, glossary_terms, outside_code_blocks, prose

TEMPLATE_LABELS = {"what you will learn", "exercises", "key takeaways"}
# The steps of an exercise that teaches ("**Predict** ..., **Write** ..., **Measure** ..."), in any lesson.
EXERCISE_STEPS = {"predict", "write", "run", "change", "measure"}

# Words bolded for stress, not terms: {lesson number: phrases, lower-cased}.
EMPHASIS = {
    "01": {"bidirectional", "exponentially", "left", "measures", "one", "one after the other", "rows"},
    "03": {"added", "adds", "position"},
    "04": {"every", "saturates", "weighted average of the values"},
    "05": {"alone", "blocked", "boolean", "left", "may attend", "no key at all", "replaces"},
    "06": {"last"},
    "07": {"energy", "latency", "memory", "one layer out of two", "erases"},
    "08": {"features", "foundation", "frozen features", "bfloat16 autocast", "forward", "backward", "step",
           "schedule", "words first, then composition"},
}  # fmt: skip

ROLE_OR_CODE = re.compile(r"\{[a-z:]+\}`[^`]*`|``.+?``|`[^`\n]*`", re.DOTALL)  # scanned left to right
BOLD = re.compile(r"\*\*(.+?)\*\*", re.DOTALL)


def bold_phrases(markdown: str) -> list[str]:
    """The bold phrases of ``markdown``, outside code blocks and inline code."""
    text = ROLE_OR_CODE.sub(
        lambda m: m.group(0) if m.group(0).startswith("{") else "CODE", outside_code_blocks(markdown)
    )
    return [" ".join(m.group(1).split()) for m in BOLD.finditer(text)]


def words(phrase: str) -> list[str]:
    """Case-folded words, hyphens and dashes read as spaces, a final plural "s" dropped."""
    tokens = re.findall(r"[\w\[\]&]+", phrase.casefold().replace("-", " ").replace("–", " "))
    return [t[:-1] if len(t) > 3 and t.endswith("s") and not t.endswith("ss") else t for t in tokens]


def names_a_term(phrase: str, terms: set[str]) -> bool:
    """Whether the words of ``phrase`` contain, in a row, the words of one of ``terms``."""
    said = words(phrase)
    for term in terms:
        wanted = words(term)
        if wanted and any(said[i : i + len(wanted)] == wanted for i in range(len(said) - len(wanted) + 1)):
            return True
    return False


def unexplained_bold(markdown: str, lesson: str, terms: set[str]) -> list[str]:
    """The bold phrases of ``markdown`` that break the rule of this module's docstring."""
    unexplained = []
    for phrase in bold_phrases(markdown):
        if "{term}`" in phrase or phrase.endswith((":", "?", ".")):
            continue
        lowered = phrase.casefold()
        if lowered in TEMPLATE_LABELS | EXERCISE_STEPS or lowered in EMPHASIS.get(lesson, set()):
            continue
        if not names_a_term(phrase, terms):
            unexplained.append(phrase)
    return unexplained


def test_the_rule_on_examples():
    terms = {"gate", "embedding", "[CLS]", "add & norm", "padding mask"}
    text = (
        "A **forget gate**, **token-type embeddings**, **Padding masks**, the **{term}`query`**,"
        " **Time:** and **left**, then **dark knowledge** and **Add & Norm**.\n"
        "```python\nx = y**2 + z**2\n```\n"
        "Code `t**2` is not bold, and **[CLS]** is a term."
    )
    assert bold_phrases(text) == [
        "forget gate", "token-type embeddings", "Padding masks", "{term}`query`", "Time:", "left",
        "dark knowledge", "Add & Norm", "[CLS]",
    ]  # fmt: skip
    assert unexplained_bold(text, "01", terms) == ["dark knowledge"]
    assert unexplained_bold(text, "02", terms) == ["left", "dark knowledge"]
    assert not names_a_term("gated", {"gate"}) and not names_a_term("mask", {"padding mask"})


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_each_bold_first_use_has_a_glossary_entry(source):
    unexplained = unexplained_bold(prose(source), source.stem[:2], glossary_terms())
    assert not unexplained, (
        f"{source.name} sets in bold {unexplained}, which the glossary does not define. Bold marks a "
        "term where a lesson introduces it: add each to book/glossary.md (or link it with {term}), or, "
        f"if it is only emphasis, list it under {source.stem[:2]!r} in EMPHASIS in {__name__}."
    )


def test_emphasis_lists_only_phrases_the_lessons_bold():
    """An EMPHASIS entry that no lesson bolds any more is stale: remove it."""
    bolded = {
        source.stem[:2]: {p.casefold() for p in bold_phrases(prose(source))} for source in SOURCES
    }
    stale = {lesson: sorted(phrases - bolded.get(lesson, set())) for lesson, phrases in EMPHASIS.items()}
    stale = {lesson: phrases for lesson, phrases in stale.items() if phrases}
    assert not stale, f"EMPHASIS lists phrases no lesson bolds any more: {stale}"
