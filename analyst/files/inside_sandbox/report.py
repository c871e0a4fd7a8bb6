"""The report's shape (the file's, and each table's), the refusal every reader raises, the
words failures are said in, and the one line of JSON the report is printed as."""

import json

from .columns import clip
from .limits import MAX_REPORT


class Refused(Exception):
    """This file (or one table of it) cannot be described; the message is for people."""


def empty_report() -> dict:
    return {"format": None, "compression": None, "sheets": None, "tables": [], "notes": [], "error": None}


def empty_table(path: str, sheet: str | None = None) -> dict:
    return {
        "path": path,
        "sheet": sheet,
        "rows": None,
        "rows_exact": True,
        "sampled": False,
        "sample_rows": None,
        "columns": [],
        "column_count": 0,  # all of them: "columns" describes at most MAX_COLUMNS
        "detected": {},
        "load": None,
        "preview": {"columns": [], "rows": []},
        "values": {},  # column: distinct text values (columns.text_values)
        "error": None,
    }


def guarded(path: str, sheet: str | None, build, *args, **kwargs) -> dict:
    """The table ``build(*args, **kwargs)`` makes, or a table holding the reason it could not."""
    try:
        return build(*args, **kwargs)
    except Refused as refused:
        table = empty_table(path, sheet)
        table["error"] = str(refused)
        return table
    except MemoryError:
        table = empty_table(path, sheet)
        table["error"] = "it is too large to read in the sandbox's memory"
        return table
    except Exception as exc:  # noqa: BLE001 - one table's failure must not lose the others
        table = empty_table(path, sheet)
        table["error"] = reason(exc)  # whoever shows it says it could not be read
        return table


def reason(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text[:300]


def human_size(count: float) -> str:
    for unit in ("bytes", "KB", "MB", "GB"):
        if count < 1024 or unit == "GB":
            return f"{count:.0f} {unit}" if unit == "bytes" else f"{count:.1f} {unit}"
        count /= 1024
    return f"{count:.1f} GB"


def fit(report: dict) -> str:
    """The report as one line of JSON under MAX_REPORT bytes: previews, samples and columns are
    cut, most expendable first, until it fits (and a note says so)."""

    def dumps() -> str:
        return json.dumps(report, ensure_ascii=False, default=str)

    def fits(line: str) -> bool:
        return len(line.encode()) <= MAX_REPORT - 200

    def shorter_preview(table: dict) -> None:
        preview = table["preview"]
        preview["columns"] = preview["columns"][:20]
        preview["rows"] = [row[:20] for row in preview["rows"][:3]]

    def fewer_samples(table: dict) -> None:
        for column in table["columns"]:
            column["samples"] = column["samples"][:2]

    def no_preview(table: dict) -> None:
        table["preview"] = {"columns": [], "rows": []}

    def fifty_columns(table: dict) -> None:
        table["columns"] = table["columns"][:50]

    def no_samples(table: dict) -> None:
        for column in table["columns"]:
            column["samples"] = []

    def ten_columns(table: dict) -> None:
        table["columns"] = table["columns"][:10]

    def fewer_values(table: dict) -> None:  # last: the model is kept from what is kept here
        table["values"] = {name: values[:50] for name, values in list(table["values"].items())[:50]}

    line = dumps()
    if fits(line):
        return line
    report["notes"] = [clip(note, 300) for note in report["notes"][:50]]
    report["sheets"] = report["sheets"][:200] if report["sheets"] else report["sheets"]
    shortened = "the description was shortened to stay small"
    steps = (shorter_preview, fewer_samples, no_preview, fifty_columns, no_samples, ten_columns, fewer_values)
    for step in steps:
        for table in report["tables"][1:] + report["tables"][:1]:  # the first table last
            step(table)
            line = dumps()
            if fits(line):
                report["notes"].append(shortened)
                return dumps()
    report["notes"].append(shortened)
    while report["tables"] and not fits(dumps()):
        report["tables"].pop()
    return dumps()
