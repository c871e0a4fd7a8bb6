"""The figures of an answer traced to the outputs that hold them: what counts as a figure, the
model's ``[[cell N]]`` markers, numbers compared as a reader would, and answers marked for export.

The convention: every cell the model runs is numbered in its session (1, 2, 3, in the order the
model ran them, carried by the ``tool_call`` event as ``cell`` and shown in the cell's header),
and the tool result the model reads begins with that label, ``[cell 3]``. The model cites a
figure by writing ``[[cell 3]]`` after it. A per-session number rather than the kernel's
execution count, because the count starts again at 1 with every restart, replay or restored
snapshot (so ``In [3]`` may name several cells of one session), while the session's number names
one cell for good (a fork keeps its cells' numbers); and a label the model reads verbatim at the
top of each result is the one models repeat most reliably. Double brackets, as in wiki links,
never occur in an analyst's prose or in markdown, so the marker is found and hidden without
ambiguity. Whatever the model cites, a figure counts as traced only when an output holds it.

Pure functions: no database here (see analyst.trust.tracing for the session's outputs).
"""

from __future__ import annotations

import bisect
import html
import json
import re
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

CELL_LABEL = "[cell {number}]"
MARKER = re.compile(r"\[\[\s*cells?\s+(\d{1,6}(?:\s*(?:,|and)\s*\d{1,6})*)\s*\]\]", re.IGNORECASE)
UNTRACED = "not found in any output"
DAGGER = "†"
# The outputs read when tracing, newest first, at most this many characters in all (a second's
# reading or so; a long session's oldest outputs past it are not searched).
MAX_OUTPUT_CHARS = 4 << 20
MAX_ANSWER_CHARS = 200_000

SCALES = {
    "thousand": 1e3,
    "k": 1e3,
    "million": 1e6,
    "mn": 1e6,
    "m": 1e6,
    "billion": 1e9,
    "bn": 1e9,
    "b": 1e9,
    "trillion": 1e12,
    "tn": 1e12,
}
# Digits bounded: a longer run (an id, a hash) is no figure, and int() refuses 4,300 digits.
_NUMBER = r"(?:\d{1,3}(?:,\d{3}){1,10}(?:\.\d{1,20})?|\d{1,30}(?:\.\d{1,20})?|\.\d{1,20})"
FIGURE = re.compile(
    r"(?<![\w.])(?<!\d,)"
    r"(?P<sign>[-+\u2212](?=[$€£¥\d.]))?"
    r"(?P<currency>[$€£¥])?"
    rf"(?P<number>{_NUMBER})"
    r"(?:\s?(?P<word>thousand|million|billion|trillion)\b|(?P<letter>k|K|M|mn|bn|B|tn)(?![\w]))?"
    r"(?:\s?(?P<percent>%|percent\b|per\s+cent\b|pp\b|percentage\s+points?\b))?"
    r"(?![\w])",
)
_MONTH = (
    r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?"
    r"|Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)\.?"
)
# Spans whose numbers are not figures, blanked before figures are looked for.
NOT_FIGURES = [
    re.compile(r"^(?P<fence>`{3,}|~{3,}).*?^(?P=fence)", re.MULTILINE | re.DOTALL),  # code blocks
    re.compile(r"`[^`\n]*`"),  # inline code: names and calls, not figures
    MARKER,
    re.compile(r"\]\([^)\s]*\)"),  # a link's target
    re.compile(r"https?://\S+"),
    re.compile(r"^[ \t]*(?:#{1,6}[ \t]+)?(?:[-*+][ \t]+)?\d{1,3}[.)](?=\s)", re.MULTILINE),  # list numbers
    re.compile(r"\b\d{4}-\d{1,2}(?:-\d{1,2})?(?:[T ]\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?\b"),  # ISO dates
    re.compile(r"\b\d{1,2}[/.]\d{1,2}[/.]\d{2,4}\b"),  # 05/01/2024
    re.compile(r"\b\d{1,2}:\d{2}(?::\d{2})?\b"),  # times
    re.compile(rf"\b{_MONTH}\s+\d{{1,2}}(?:st|nd|rd|th)?\b(?:,?\s+\d{{4}}\b)?", re.IGNORECASE),  # Jan 5, 2024
    re.compile(rf"\b\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH}(?:\s+\d{{4}})?\b", re.IGNORECASE),
    re.compile(rf"\b{_MONTH}\s+\d{{4}}\b", re.IGNORECASE),  # March 2024
    re.compile(r"\b(?:Q[1-4]|H[12]|FY)\s*'?\d{2,4}\b"),  # Q3 2024, FY2023
    re.compile(r"(?:[<>≤≥]=?|&[lg]t;)\s*[-\u2212]?[\d.,]*\d"),  # a bound ("p < 0.001"), not a value
    # A number that names a thing rather than measures it: "step 2", "cell 3", "top 10", "#1".
    re.compile(
        r"(?:\b(?:cells?|steps?|figures?|fig\.|tables?|sections?|chapters?|pages?|lines?|versions?|"
        r"python|top|bottom|rank(?:ed)?|no\.|number)\s*|#)\d+(?:\.\d+)*",
        re.IGNORECASE,
    ),
]


@dataclass(frozen=True)
class Figure:
    """A figure as the answer shows it: ``value`` within ``tolerance`` of what it stands for
    (half its last shown digit), a percentage when ``percent``."""

    text: str
    start: int
    end: int
    value: float
    tolerance: float
    percent: bool


def figures(answer: str) -> list[Figure]:
    """The figures of ``answer`` in order: numbers that measure something. Not list numbering,
    headings' numbers, the ``[[cell N]]`` markers, code, links, dates and times, years (a bare
    integer from 1900 to 2100), ordinals, numbers naming a step, cell or table, nor a bare
    integer below 10 ("the 3 regions", "top 5": counts of the prose, and digits any table's
    index holds, so tracing them would prove nothing)."""
    text = _blanked(answer[:MAX_ANSWER_CHARS])
    found = []
    for match in FIGURE.finditer(text):
        figure = _figure(match)
        if figure is not None:
            found.append(figure)
    return found


def _blanked(text: str) -> str:
    """``text`` with every span in NOT_FIGURES replaced by spaces (offsets kept)."""
    for pattern in NOT_FIGURES:
        text = pattern.sub(lambda m: re.sub(r"\S", " ", m.group()), text)
    return text


def _figure(match: re.Match[str]) -> Figure | None:
    number = match["number"]
    digits = number.replace(",", "")
    named = match["word"] or match["letter"]
    scale = SCALES[named.lower()] if named else 1.0
    plain = not (match["sign"] or match["currency"] or match["percent"] or scale != 1.0)
    if plain and "," not in number and "." not in number:
        if int(digits) < 10 or (len(digits) == 4 and 1900 <= int(digits) <= 2100):
            return None  # a count of the prose, or a year
    value = float(digits)
    return Figure(
        text=match.group().strip(),
        start=match.start(),
        end=match.end(),
        value=value * scale,
        tolerance=_unit(digits) * scale / 2,
        percent=bool(match["percent"]),
    )


def _unit(digits: str) -> float:
    """The last shown digit's place: 0.01 for "12.34"; for an integer its trailing zeros, keeping
    two significant digits ("1,200" may be 1,213 rounded; "100" is not 140)."""
    if "." in digits:
        return 10.0 ** -len(digits.split(".")[1])
    significant = digits.lstrip("0") or "0"
    zeros = len(significant) - len(significant.rstrip("0"))
    return 10.0 ** max(min(zeros, len(significant) - 2), 0)


def cited_cells(answer: str) -> list[tuple[int, tuple[int, ...]]]:
    """Each ``[[cell N]]`` marker: where it ends, and the cell numbers it names."""
    return [(m.end(), tuple(int(n) for n in re.findall(r"\d+", m[1]))) for m in MARKER.finditer(answer)]


def strip_markers(answer: str) -> str:
    """The answer without its ``[[cell N]]`` markers (and the space before each)."""
    return re.sub(r"[ \t]*" + MARKER.pattern, "", answer, flags=re.IGNORECASE)


# Numbers in outputs: also "1.2e+06" and "12.3%"; a "1,234" is also read as 1 and 234 (a list
# printed "[1,234]"), and a scale after a number is applied as well as not.
OUTPUT_NUMBER = re.compile(
    r"(?<![\w.])(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|\.\d+)"
    r"(?:\s?(thousand|million|billion|trillion)\b|(k|K|M|mn|bn|B|tn)(?![\w]))?"
)


def output_numbers(text: str) -> Iterator[float]:
    """Every number in an output's text, as absolute values (signs are not compared: "fell by
    12%" quotes a -0.12)."""
    for match in OUTPUT_NUMBER.finditer(text):
        number, scale = match[1], match[2] or match[3]
        try:
            value = float(number.replace(",", ""))
        except ValueError:
            continue
        yield value
        if scale:
            yield value * SCALES[scale.lower()]
        if "," in number:
            yield from (float(part) for part in re.split(r"[,.]", number) if part)


def output_text(type: str, payload: Mapping[str, Any]) -> str:
    """What an output event shows as text: a stream's text, an error's name, value and
    traceback, a result's inline text/plain, markdown, HTML table (its text) and table data."""
    if type in ("stdout", "stderr"):
        return str(payload.get("text") or "")
    if type == "error":
        traceback = payload.get("traceback") or ""
        traceback = "\n".join(map(str, traceback)) if isinstance(traceback, list) else str(traceback)
        return "\n".join([str(payload.get("name") or ""), str(payload.get("value") or ""), traceback])
    if type != "result":
        return ""
    data = payload.get("data") or {}
    if not isinstance(data, dict):
        return ""
    pieces = [data.get("text/plain"), data.get("text/markdown")]
    if isinstance(data.get("text/html"), str):
        pieces.append(html.unescape(re.sub(r"<[^>]*>", " ", data["text/html"])))
    table = data.get("application/vnd.dataresource+json")
    if table is not None:
        pieces.append(json.dumps(table.get("data") if isinstance(table, dict) else table))
    return "\n".join(p for p in pieces if isinstance(p, str))


def _ranges(figure: Figure) -> list[tuple[float, float]]:
    """The absolute values an output may print for ``figure``: itself give or take its rounding,
    and for a percentage also the fraction (12.3% is 0.123)."""
    value, tolerance = abs(figure.value), figure.tolerance * (1 + 1e-9) + 1e-12
    ranges = [(value - tolerance, value + tolerance)]
    if figure.percent:
        ranges.append(((value - tolerance) / 100, (value + tolerance) / 100))
    return ranges


class Holders:
    """Which outputs hold which of the answer's figures: each output's numbers are read once and
    kept only where they match a figure (most match none, and are rejected by one bisection)."""

    def __init__(self, found: Sequence[Figure], outputs: Sequence[tuple[int, str]]) -> None:
        ranges = sorted((low, high, index) for index, f in enumerate(found) for low, high in _ranges(f))
        self.seqs: list[set[int]] = [set() for _ in found]
        starts, ends = self._union(ranges)
        for seq, text in outputs:
            for value in output_numbers(text):
                at = bisect.bisect_right(starts, value) - 1
                if at < 0 or value > ends[at]:
                    continue
                for low, high, index in ranges:
                    if low <= value <= high:
                        self.seqs[index].add(seq)

    @staticmethod
    def _union(ranges: list[tuple[float, float, int]]) -> tuple[list[float], list[float]]:
        starts: list[float] = []
        ends: list[float] = []
        for low, high, _ in ranges:  # sorted by low
            if ends and low <= ends[-1]:
                ends[-1] = max(ends[-1], high)
            else:
                starts.append(low)
                ends.append(high)
        return starts, ends

    def newest(self, index: int, within: Collection[int] | None = None) -> int | None:
        """The seq of the newest output holding figure ``index`` (among ``within``, if given)."""
        seqs = self.seqs[index] if within is None else self.seqs[index] & set(within)
        return max(seqs, default=None)


def citations(
    answer: str, outputs: Sequence[tuple[int, str]], cells: Mapping[int, Collection[int]] | None = None
) -> list[dict[str, Any]]:
    """Each figure of ``answer``: ``{"text", "seq", "verified": True}`` with the seq of the output
    holding it (the newest), or ``{"text", "verified": False}``. ``cells`` maps a cell's number to
    its outputs' seqs: a figure cited with ``[[cell N]]`` after it (on its line) is looked for in
    that cell's outputs first, then, like any other, in all of them."""
    found = figures(answer)
    if not found:
        return []
    holders = Holders(found, outputs)
    markers = cited_cells(answer)
    cited = []
    for index, figure in enumerate(found):
        seq = None
        for number in _cited_for(answer, figure, markers):
            seq = holders.newest(index, within=(cells or {}).get(number, ()))
            if seq is not None:
                break
        if seq is None:
            seq = holders.newest(index)
        if seq is None:
            cited.append({"text": figure.text, "verified": False})
        else:
            cited.append({"text": figure.text, "seq": seq, "verified": True})
    return cited


def _cited_for(answer: str, figure: Figure, markers: list[tuple[int, tuple[int, ...]]]) -> tuple[int, ...]:
    """The cells named by the first marker after ``figure`` on its line ("rose 12% to 1,234
    [[cell 3]]" cites cell 3 for both)."""
    line_end = answer.find("\n", figure.end)
    line_end = len(answer) if line_end == -1 else line_end
    for end, numbers in markers:
        if figure.end <= end <= line_end:
            return numbers
    return ()


def marked(answer: str, cited: Sequence[Mapping[str, Any]] | None) -> str:
    """The answer for a reader of an export: markers gone, each unverified figure followed by a
    dagger, and a footnote saying what the dagger means. An answer stored before figures were
    traced (no ``cited``) is only stripped of its markers."""
    unverified = [c.get("text") for c in cited or () if isinstance(c, Mapping) and not c.get("verified")]
    if not unverified:
        return strip_markers(answer)
    pieces, at, pending = [], 0, list(unverified)
    for figure in figures(answer):
        if pending and figure.text == pending[0]:
            pending.pop(0)
            pieces += [answer[at : figure.end], DAGGER]
            at = figure.end
    pieces.append(answer[at:])
    text = strip_markers("".join(pieces))
    return f"{text}\n\n{DAGGER} {UNTRACED.capitalize()} of the session."
