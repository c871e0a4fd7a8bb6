"""A question's words as a session's title: never empty when it holds a word, at most LENGTH
characters cut between words, without markup, controls or code."""

from __future__ import annotations

import pytest

from analyst.turns.titles import LENGTH, from_question


@pytest.mark.parametrize(
    ("question", "title"),
    [
        ("which airports have the worst delays?", "Which airports have the worst delays?"),
        ("  Average delay\n\n  by   airline  ", "Average delay by airline"),
        ("## Delays by **month**", "Delays by month"),
        ("Plot `dep_delay` per [carrier](https://example.com/x)", "Plot dep_delay per carrier"),
        ("<b>Bold</b> <script>alert(1)</script>claims", "Bold alert(1) claims"),
        ("Fix this:\n```python\ndf.plot()\n```\nplease", "Fix this: please"),
        ("Sales\u202e by region\u200b\x00", "Sales by region"),
        ("> quoted\n- listed item", "Quoted listed item"),
        ("And <i>Denver</i>?", "And Denver?"),
    ],
)
def test_a_title_is_the_questions_words(question, title):
    assert from_question(question) == title


def test_a_long_question_is_cut_between_words():
    question = "Compare the monthly departure delays of every carrier at the ten busiest airports in 2023"
    title = from_question(question)
    assert len(title) <= LENGTH and title.endswith("…")
    assert question.startswith(title.removesuffix("…"))
    assert question[len(title) - 1] == " ", "cut where a word ends"


def test_one_long_word_is_cut_too():
    title = from_question("x" * 500)
    assert title == "X" + "x" * (LENGTH - 2) + "…"


@pytest.mark.parametrize("question", ["", "   ", "```\nprint(1)\n```", "???", "<br><hr>", "\u200b\u202e"])
def test_a_question_without_words_gives_no_title(question):
    assert from_question(question) == ""
