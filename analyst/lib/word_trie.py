"""Many words as one trie, the shape of a regular expression that scans text once however many
words there are (each character a key; ``""`` marks where a word ends)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

Trie = dict[str, Any]


def word_trie(words: Iterable[str]) -> Trie:
    trie: Trie = {}
    for word in words:
        node = trie
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}  # a word ends here
    return trie
