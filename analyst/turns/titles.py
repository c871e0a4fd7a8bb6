"""A session's name from a question: its words, without markup, cut to a title's length.

A session still called UNTITLED takes the words of the next question asked in it, as that
question is stored; a branch is named after its edited question. The model is not asked for a
title: the question's words are there at once (the page shows the name before any answer, and
when the model fails or none is configured), cost nothing, read the same under every provider,
and are the user's own, where a title the model wrote would be one more piece of its hostile
output to guard. A name the user gave (at creation or by renaming) is never replaced: only
UNTITLED is, and in one conditional UPDATE, so a rename at the same moment wins. The question's
``user_message`` event carries the name it gave (``session_title``), so a page shows it live.
"""

from __future__ import annotations

import re
import unicodedata

from analyst.models import AnalysisSession

UNTITLED = "Untitled analysis"
LENGTH = 60  # characters, the ellipsis included; the sidebar and the header show the rest on hover

FENCED_CODE = re.compile(r"(```|~~~).*?(\1|$)", re.DOTALL)
LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
TAG = re.compile(r"</?[A-Za-z][^>]*>")
LINE_MARK = re.compile(r"^\s*(#{1,6}|>|[-+*]|\d+[.)])\s+", re.MULTILINE)
EMPHASIS = re.compile(r"[*`~]+|(?<!\w)_+|_+(?!\w)")
SPACE_BEFORE_MARK = re.compile(r" ([?!.,;:])")
UNSHOWN = ("Cc", "Cf", "Co", "Cs", "Cn", "Zl", "Zp")  # controls, bidi overrides, unassigned
TRAILING = " ,;:-–—(["


def from_question(text: str) -> str:
    """``text``'s words as a title of at most LENGTH characters, cut between words and ended by
    "…" when cut; "" when it holds no word (only code, markup or punctuation)."""
    text = FENCED_CODE.sub(" ", text)
    text = LINK.sub(r"\1", text)
    text = TAG.sub(" ", text)
    text = LINE_MARK.sub("", text)
    text = EMPHASIS.sub("", text)
    text = "".join(" " if unicodedata.category(char) in UNSHOWN else char for char in text)
    text = SPACE_BEFORE_MARK.sub(r"\1", " ".join(text.split()))  # "<i>Denver</i>?" is "Denver?"
    if not any(char.isalnum() for char in text):
        return ""
    text = text[0].upper() + text[1:]
    if len(text) <= LENGTH:
        return text
    cut = text[: LENGTH - 1]
    space = cut.rfind(" ")
    if space >= LENGTH // 2:
        cut = cut[:space]
    return cut.rstrip(TRAILING) + "…"


def do_name_after_question(session: AnalysisSession, text: str) -> str:
    """Name ``session`` after ``text``, a question asked in it, if it is still UNTITLED: the name
    given, or "" (its question's ``user_message`` carries it, for the page)."""
    title = from_question(text)
    if not title or session.title != UNTITLED:
        return ""
    if not AnalysisSession.objects.filter(id=session.id, title=UNTITLED).update(title=title):
        return ""  # renamed meanwhile
    session.title = title
    return title
