"""Secrets kept out of outputs: a Redactor replaces every value of a session's secrets, and the forms
code most often turns one into, by ``«secret:NAME»``: in text, in bytes, in nested values (an event's
payload, a MIME bundle, an Execution), and in a stream cut into chunks anywhere.

Forms: the value itself; URL-encoded (quote, quote_plus); JSON- and repr-escaped; HTML-escaped;
base64 (standard and URL-safe, whole, and the part that depends on the value alone at each of the
three alignments, so the value is found inside a longer encoding such as a Basic-auth header).
What it cannot see: a value transformed otherwise (reversed, hex, split over two prints with
something between, compressed in a file, drawn in an image). It keeps a secret from being shown
by accident or by a curious model; it does not prove that nothing of a secret gets out.
"""

from __future__ import annotations

import base64
import dataclasses
import html
import json
import re
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from functools import cached_property
from typing import Any, Generic, TypeVar
from urllib.parse import quote, quote_plus

from analyst.lib.word_trie import word_trie

PLACEHOLDER = "«secret:{name}»"
# A value shorter than this is not redacted: a secret of 1-3 characters would be "found" in
# nearly every output (in numbers, words, base64 images), garbling them and hiding nothing, as
# such a value can be guessed anyway.
MIN_LENGTH = 4
# A base64 form shorter than this is not looked for: the core of a short value's encoding at an
# odd alignment is a few characters that any long base64 text (an image) holds by chance.
MIN_BASE64_FORM = 8
# Parts of a value that are images (a MIME bundle's, a Result's fields): left as they are.
IMAGE_PARTS = frozenset({"image/png", "image/jpeg", "png", "jpeg"})
_PLACED = r"«secret:[A-Za-z0-9_]+»"  # already redacted: kept as it is, so redacting twice is a no-op

S = TypeVar("S", str, bytes)
T = TypeVar("T")


def forms(value: str) -> set[str]:
    """The texts that show ``value``: itself and its escaped and encoded forms."""
    found = {
        value,
        quote(value, safe=""),
        quote(value),
        quote_plus(value),
        json.dumps(value)[1:-1],
        json.dumps(value, ensure_ascii=False)[1:-1],
        repr(value)[1:-1],
        html.escape(value),
    }
    raw = value.encode()
    for encode in (base64.b64encode, base64.urlsafe_b64encode):
        encoded = [encode(raw).decode()] + [_aligned_core(raw, skip, encode) for skip in range(3)]
        found.update(form for form in encoded if len(form) >= MIN_BASE64_FORM)
    return found


def _aligned_core(raw: bytes, skip: int, encode: Callable[[bytes], bytes]) -> str:
    """The characters of base64 that ``raw`` alone decides when ``skip`` bytes come before it."""
    encoded = encode(b"\0" * skip + raw).decode()
    return encoded[(8 * skip + 5) // 6 : (8 * (skip + len(raw))) // 6]


def _trie_pattern(words: Iterable[str], *, partial: bool) -> str:
    """One regex matching any of ``words``, the longest where several start at one place; or,
    ``partial``, a prefix of one of them that ends the text (empty at the text's end). Built as a
    trie, so a match costs about the length of the text, not the number of words."""

    def build(node: dict[str, Any]) -> str:
        branches = [re.escape(char) + build(child) for char, child in node.items() if char]
        if partial:
            branches.insert(0, r"\Z")
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        return f"(?:{body})?" if "" in node and not partial else body

    return build(word_trie(words))


class _Matcher(Generic[S]):
    """One Redactor's regexes, for str or for bytes, each compiled when first used (a request that
    redacts text never compiles the bytes' ones). For bytes, the regexes are built over UTF-8
    bytes read as Latin-1 characters (one per byte), then made bytes again."""

    def __init__(self, names_by_form: Mapping[S, str], *, binary: bool) -> None:
        self.names_by_form = names_by_form
        self.binary = binary
        self.longest = max(len(form) for form in names_by_form)
        self.words = [form.decode("latin-1") if isinstance(form, bytes) else form for form in names_by_form]

    def _compiled(self, regex: str) -> re.Pattern[S]:
        return re.compile(regex.encode("latin-1") if self.binary else regex)  # type: ignore[return-value]

    @cached_property
    def pattern(self) -> re.Pattern[S]:
        """Group 1: a placeholder already there (kept as it is); else a form."""
        placed = _PLACED.encode().decode("latin-1") if self.binary else _PLACED
        return self._compiled(f"({placed})|" + _trie_pattern(self.words, partial=False))

    @cached_property
    def partial(self) -> re.Pattern[S]:
        return self._compiled(_trie_pattern(self.words, partial=True))

    def replace(self, match: re.Match[S]) -> S:
        if match.group(1) is not None:
            return match.group(1)
        placeholder = PLACEHOLDER.format(name=self.names_by_form[match.group(0)])
        return placeholder.encode() if self.binary else placeholder  # type: ignore[return-value]

    def sub(self, text: S) -> S:
        return self.pattern.sub(self.replace, text)


class Redactor:
    """Built once per turn or request from ``{name: value}`` (every secret of a session): unseals
    nothing itself, and replaces each value's forms by ``«secret:NAME»``. A value two names share is
    shown as the first name's (in sorted order); where two values' forms overlap, the longest
    match wins."""

    def __init__(self, secrets: Mapping[str, str]) -> None:
        by_form: dict[str, str] = {}
        for name in sorted(secrets):
            value = secrets[name]
            if len(value) >= MIN_LENGTH:
                for form in forms(value):
                    by_form.setdefault(form, name)
        self._text = _Matcher(by_form, binary=False) if by_form else None
        self._bytes = _Matcher({f.encode(): n for f, n in by_form.items()}, binary=True) if by_form else None

    def __bool__(self) -> bool:
        return self._text is not None

    def text(self, text: str) -> str:
        return self._text.sub(text) if self._text else text

    def data(self, data: bytes) -> bytes:
        return self._bytes.sub(data) if self._bytes else data

    def value(self, value: T) -> T:
        """``value`` with every string in it redacted: through dicts (keys too), lists, tuples and
        dataclasses (an Execution, a Result: a copy); images (IMAGE_PARTS) and the rest left."""
        if self._text is None:
            return value
        return self._walk(value)

    def _walk(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self._walk(key): self._item(key, item) for key, item in value.items()}
        if type(value) in (list, tuple):
            return type(value)(self._walk(item) for item in value)
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            changed = {
                field.name: self._walk(getattr(value, field.name))
                for field in dataclasses.fields(value)
                if field.init and field.name not in IMAGE_PARTS
            }
            return dataclasses.replace(value, **changed)
        return value

    def _item(self, key: object, item: Any) -> Any:
        return item if key in IMAGE_PARTS else self._walk(item)

    def stream(self) -> StreamRedactor[str]:
        """For text that comes in pieces (a cell's stdout)."""
        return StreamRedactor(self._text)

    def byte_stream(self) -> StreamRedactor[bytes]:
        """For bytes that come in chunks (a file downloaded)."""
        return StreamRedactor(self._bytes)


class StreamRedactor(Generic[S]):
    """Redacts a stream piece by piece, as if whole: a form cut across two pieces is still found.
    Each ``feed`` gives back what is safe to pass on now, holding back only a tail that could be
    the start of a form (so a progress line with no secret in it goes on at once); ``end`` gives
    what was held back."""

    def __init__(self, matcher: _Matcher[S] | None) -> None:
        self.matcher = matcher
        self.held: S | None = None

    def feed(self, piece: S) -> S:
        if self.matcher is None:
            return piece
        text = piece if self.held is None else self.held + piece
        tail = self.matcher.partial.search(text, max(0, len(text) - self.matcher.longest))
        cut = tail.start() if tail else len(text)
        out: list[S] = []
        last = 0
        for match in self.matcher.pattern.finditer(text):
            if match.end() > cut:  # it may go on in the next piece, or cross the held tail
                cut = min(cut, match.start())
                break
            out += [text[last : match.start()], self.matcher.replace(match)]
            last = match.end()
        out.append(text[last:cut])
        self.held = text[cut:]
        return text[:0].join(out)

    def end(self) -> S | None:
        """What is still held back, redacted (None when nothing is)."""
        held, self.held = self.held, None
        if not held or self.matcher is None:
            return None
        return self.matcher.sub(held)


def redacted_chunks(chunks: AsyncIterator[bytes], redactor: Redactor) -> AsyncIterator[bytes]:
    """``chunks`` redacted as one stream (a download; its size changes); ``chunks`` itself when
    there is no secret. Closing the result closes ``chunks``."""
    return _redacted_chunks(chunks, redactor.byte_stream()) if redactor else chunks


async def _redacted_chunks(
    chunks: AsyncIterator[bytes], stream: StreamRedactor[bytes]
) -> AsyncIterator[bytes]:
    try:
        async for chunk in chunks:
            if out := stream.feed(chunk):
                yield out
        if rest := stream.end():
            yield rest
    finally:
        close = getattr(chunks, "aclose", None)
        if close is not None:
            await close()
