"""What the user decides about an upload's columns: "sensitive" (its values never reach the model,
analyst.trust.privacy) or "ordinary" (a proposal dismissed); a decided column is proposed no more.

Marks are DataFile.column_marks, ``{"<table>": {"<column>": "sensitive" | "ordinary"}}``, tables
named as analyst.trust.tables names them. A change is merged into the marks: a column given
None loses its mark.
"""

from __future__ import annotations

from typing import Any

from analyst.models import DataFile
from analyst.trust.tables import known_columns

MARKS = ("sensitive", "ordinary")


class BadMarks(ValueError):
    """The marks are malformed, or name a table or column the file does not have."""


def do_mark(*, data_file: DataFile, marks: object) -> DataFile:
    """Merge ``marks`` (checked: BadMarks) into the file's, and drop what they decide from its
    proposals."""
    changes = check(data_file, marks)
    merged = {table: dict(columns) for table, columns in data_file.column_marks.items()}
    proposed = {table: dict(columns) for table, columns in data_file.proposed_marks.items()}
    for table, columns in changes.items():
        for column, mark in columns.items():
            if mark is None:
                merged.get(table, {}).pop(column, None)
            else:
                merged.setdefault(table, {})[column] = mark
            proposed.get(table, {}).pop(column, None)
    data_file.column_marks = {table: columns for table, columns in merged.items() if columns}
    data_file.proposed_marks = {table: columns for table, columns in proposed.items() if columns}
    # Only these fields: a reading of the file may be saving its description meanwhile.
    DataFile.objects.filter(id=data_file.id).update(
        column_marks=data_file.column_marks, proposed_marks=data_file.proposed_marks
    )
    return data_file


def check(data_file: DataFile, marks: object) -> dict[str, dict[str, Any]]:
    if not isinstance(marks, dict):
        raise BadMarks('the column marks must be an object: {"<table>": {"<column>": "sensitive"}}')
    known = known_columns(data_file)
    for table, columns in marks.items():
        if table not in known:
            named = ", ".join(repr(k) for k in known) or "none (it has not been read)"
            raise BadMarks(f"{data_file.name} has no table {table!r}; its tables: {named}")
        if not isinstance(columns, dict):
            raise BadMarks(f"the marks of table {table!r} must be an object of marks by column name")
        for column, mark in columns.items():
            if column not in known[table]:
                raise BadMarks(f"table {table!r} of {data_file.name} has no column {column!r}")
            if mark is not None and mark not in MARKS:
                raise BadMarks(
                    f'the mark of {column!r} must be "sensitive", "ordinary" or null, not {mark!r}'
                )
    return marks
