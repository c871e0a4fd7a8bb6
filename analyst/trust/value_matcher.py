"""Finding known values in text: a set of values (each with the column it came from) compiled into
one regular expression shaped like a trie, so text is scanned once however many values there are.

A value matches as a whole word, ignoring case: "Ann" is found in "ann, 31" but not in "Annual".
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from functools import lru_cache

from analyst.lib.word_trie import word_trie

MIN_CHARS = 3  # shorter values would match all over any text
# pandas prints a longer text cut to its first COLUMN_WIDTH - 3 characters and "..." (its
# display.max_colwidth, 50 unless the code changes it): the cut form is found too.
COLUMN_WIDTH = 50


class ValueMatcher:
    """Replaces each known value found in a text by ``«col:NAME»`` (NAME: the column it is from)."""

    def __init__(self, values: Mapping[str, str]) -> None:
        """``values``: value -> column. Values shorter than MIN_CHARS are left out; a value in
        several columns (case aside) is named by the first."""
        self.columns: dict[str, str] = {}
        for value, column in values.items():
            key = value.strip().lower()
            if len(key) >= MIN_CHARS:
                self.columns.setdefault(key, column)
            if len(key) > COLUMN_WIDTH:
                self.columns.setdefault(key[: COLUMN_WIDTH - 3] + "...", column)
        self.pattern = _compiled(tuple(sorted(self.columns))) if self.columns else None

    def __bool__(self) -> bool:
        return self.pattern is not None

    def redact(self, text: str) -> tuple[str, Counter[str]]:
        """``text`` with every known value replaced, and how many were replaced, by column."""
        found: Counter[str] = Counter()
        if self.pattern is None or not text:
            return text, found

        def replace(match: re.Match[str]) -> str:
            column = self.columns.get(match.group(0).lower(), "?")
            found[column] += 1
            return f"«col:{column}»"

        return self.pattern.sub(replace, text), found


@lru_cache(maxsize=8)
def _compiled(keys: tuple[str, ...]) -> re.Pattern[str]:
    """One pattern for all ``keys`` (lower-cased), as whole words. Cached: a turn asks for the same
    session's set at every round."""
    return re.compile(rf"(?<!\w)(?:{_alternatives(word_trie(keys))})(?!\w)", re.IGNORECASE)


def _alternatives(node: dict[str, dict]) -> str:
    """The regex for the trie below ``node``: longest match first (a branch before the end)."""
    branches = [re.escape(char) + _group(child) for char, child in node.items() if char]
    ends = "" in node
    if not branches:
        return ""
    body = "|".join(branches)
    return f"(?:{body})?" if ends else body


def _group(child: dict[str, dict]) -> str:
    inner = _alternatives(child)
    if not inner or (inner.startswith("(?:") and inner.endswith(")?")):
        return inner
    return f"(?:{inner})" if "|" in inner or "" in child else inner
