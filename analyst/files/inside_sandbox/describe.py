"""Describe one uploaded file from inside its sandbox: the tables it holds, how they were read,
and the pandas call that loads each one. The entry point: ``main``, which finds what the file is
(formats) and hands it to the reader of its format.

The worker sends this module and those it imports, made a package of their own
(analyst.files.describer_cell.describer_source), to a fresh code context and runs
``main(json.loads('{"path": "data/x.csv", "options": {...}, "limits": {...}}'))``; ``main``
prints exactly one line, the JSON report of issue 11's contract, and never raises: every failure
becomes the report's (or one table's) ``error``, written for people. These modules may import
only the stdlib, the sandbox template's packages and one another (relatively): tests/files/inside_sandbox
holds them to it.
"""

import contextlib
import io
import json
import os
import warnings

from .archives import unpacked
from .columnar import feather_table, parquet_table
from .delimited import csv_table
from .formats import FORMATS, file_format
from .json_files import json_table, jsonl_table
from .limits import Budget, limits_from
from .report import Refused, empty_report, empty_table, fit, guarded, reason
from .workbooks import excel_tables


def main(request) -> None:
    """Print the report for ``request`` ({"path", "options", "limits"}, or its JSON text) as one
    line of JSON. Library chatter on stdout is swallowed, warnings are silenced."""
    report = empty_report()
    try:
        if isinstance(request, str):
            request = json.loads(request)
        with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            report = _describe(request)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # noqa: BLE001 - the report is the only way out
        report["error"] = f"the file could not be described: {reason(exc)}"
    print(fit(report))


def _describe(request: dict) -> dict:
    report = empty_report()
    path = str(request.get("path") or "")
    options = dict(request.get("options") or {})
    limits = limits_from(request.get("limits"))
    budget = Budget(limits["time_budget"])
    if not path or not os.path.isfile(path):
        report["error"] = f"{path or 'the file'} is not in the sandbox"
        return report
    try:
        _describe_path(path, options, limits, budget, report)
    except Refused as refused:
        report["error"] = str(refused)
    tables = report["tables"]
    if report["error"] is None and report["format"] not in ("zip", "excel") and len(tables) == 1:
        error = tables[0]["error"]  # the file's only table failed: so did the file
        report["error"] = error  # a reason: whoever shows it names the file and says it failed
    return report


def _describe_path(
    path: str, options: dict, limits: dict, budget: Budget, report: dict, *, in_zip: bool = False
) -> None:
    """Fill ``report`` (format, compression, sheets, tables, notes) for one file; raise Refused
    when the file as a whole cannot be read."""
    notes = report["notes"]
    fmt, kind, compression, load_compression = file_format(path, notes)
    if fmt == "zip" and in_zip:
        raise Refused("a zip inside the zip is not unpacked; upload it on its own")
    report["format"] = fmt
    report["compression"] = "zip" if fmt == "zip" else compression
    tables = report["tables"]
    if fmt in ("csv", "jsonl"):  # text read line by line: the same inputs
        reader = csv_table if fmt == "csv" else jsonl_table
        tables.append(
            guarded(
                path,
                None,
                reader,
                path,
                compression,
                load_compression,
                options=options,
                limits=limits,
                budget=budget,
                notes=notes,
            )
        )
    elif fmt == "json":
        tables.append(
            guarded(path, None, json_table, path, compression, load_compression, limits=limits, notes=notes)
        )
    elif fmt == "parquet":
        tables.append(guarded(path, None, parquet_table, path, compression, limits))
    elif fmt == "feather":
        tables.append(guarded(path, None, feather_table, path, compression, kind, limits))
    elif fmt == "excel":
        excel_tables(path, compression, options=options, limits=limits, budget=budget, report=report)
    elif fmt == "zip":
        for target in unpacked(path, limits):
            _describe_member(target, options, limits, budget, report)


def _describe_member(target: str, options: dict, limits: dict, budget: Budget, report: dict) -> None:
    """Add the tables (and notes) of one unpacked member to the zip's ``report``."""
    notes = report["notes"]
    if budget.over():
        table = empty_table(target)
        table["error"] = "it was unpacked but not described: the time budget ran out"
        report["tables"].append(table)
        return
    name = os.path.basename(target).lower()
    inner = name[:-3] if name.endswith(".gz") else name
    if os.path.splitext(inner)[1] not in FORMATS:
        notes.append(f"{target} was unpacked but is not a kind of file read as a table")
        return
    if os.path.splitext(inner)[1] == ".zip":
        notes.append(f"{target} is a zip inside the zip; it is not unpacked further (upload it on its own)")
        return
    member_report = empty_report()
    try:
        _describe_path(target, options, limits, budget, member_report, in_zip=True)
    except Refused as refused:
        table = empty_table(target)
        table["error"] = str(refused)
        member_report["tables"] = [table]
    report["tables"].extend(member_report["tables"])
    notes.extend(member_report["notes"])
