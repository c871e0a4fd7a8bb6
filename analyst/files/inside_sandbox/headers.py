"""Where a table starts among its first rows (title and blank lines skipped), and whether that
row is a header: for delimited text and for sheets alike."""

import collections
import datetime
import re

from .report import Refused


def header_position(records, typed, option) -> tuple[int, bool]:
    """Where the table starts among ``records`` ((line, cells) pairs), and whether that first
    row is a header. Title lines and blank lines before it are skipped; the first row is a
    header unless it looks like the rows under it (numbers or dates where they have them).
    ``option`` (the user's header_row: a line index, "none", or None) overrides."""
    if option is not None and option != "":
        if str(option).lower() == "none":
            start, _ = header_position(records, typed, None)
            return start, False
        try:
            line = int(option)
        except (TypeError, ValueError):
            raise Refused(f'header row {option!r} is not a row number (or "none")') from None
        if line < 0:
            raise Refused(f"header row {line} is not a row number (rows count from 0)")
        for index, (at, _) in enumerate(records):
            if at >= line:
                return index, True
        raise Refused(f"header row {line} is beyond the rows read ({len(records)})")
    filled = [sum(1 for cell in cells if _text(cell).strip()) for _, cells in records]
    if not any(filled):
        return 0, True
    widths = [len(cells) for (_, cells), count in zip(records, filled, strict=True) if count]
    width = collections.Counter(widths).most_common(1)[0][0]
    full = sorted(
        count for (_, cells), count in zip(records, filled, strict=True) if count and len(cells) == width
    )
    typical = full[len(full) // 2] if full else max(filled)
    start = next(
        (
            i
            for i, count in enumerate(filled)
            if count and count >= max(1, (3 * typical) // 4) and len(records[i][1]) >= min(width, 2)
        ),
        0,
    )
    first = records[start][1]
    rest = [cells for _, cells in records[start + 1 : start + 201] if any(_text(c).strip() for c in cells)]
    if not rest:
        return start, True
    typed_columns = []
    for column in range(len(first)):
        values = [cells[column] for cells in rest if column < len(cells) and _text(cells[column]).strip()]
        if values and sum(1 for v in values if _is_typed(typed(v))) >= 0.8 * len(values):
            typed_columns.append(column)
    if not typed_columns:
        return start, True
    header = any(_text(first[c]).strip() and not _is_typed(typed(first[c])) for c in typed_columns)
    if not header and all(_text(cell).strip() for cell in first):
        # Years over columns of figures ("country, 2019, 2020"): a header, unless the rows
        # under them are years too.
        years = [c for c in typed_columns if _is_year(typed(first[c]))]
        header = bool(years) and any(
            not all(_is_year(typed(cells[c])) for cells in rest if c < len(cells)) for c in years
        )
    return start, header


def _is_year(value) -> bool:
    text = _text(value).strip()
    if text.endswith(".0"):
        text = text[:-2]
    return text.isdigit() and 1800 <= int(text) <= 2100


def _text(value) -> str:
    return "" if value is None else str(value)


def _is_typed(value) -> bool:
    """A number or a date (a cell's value, or text that reads as one)."""
    if isinstance(value, bool):
        return False
    if isinstance(value, (int, float, datetime.date, datetime.time, datetime.datetime)):
        return True
    text = _text(value).strip()
    if not text:
        return False
    number = r"[+-]?[$€£]?\s?(\d[\d.,'\u00a0\u202f ]*\d|\d)([eE][+-]?\d+)?\s?%?[$€£]?"
    date = r"\d{1,4}[-/.]\d{1,2}[-/.]\d{1,4}([ T]\d{1,2}:\d{2}(:\d{2})?)?.*"
    return bool(
        re.fullmatch(number, text) or re.fullmatch(r"[+-]?\d*[.,]\d+", text) or re.fullmatch(date, text)
    )
