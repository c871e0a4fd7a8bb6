"""Excel workbooks (.xlsx, .xlsm, .xls): one table per sheet, each with its header row found, the
rows of a large sheet estimated from its recorded size or its XML."""

import re
import zipfile

import pandas as pd

from .columns import fill_from_frame
from .headers import header_position
from .limits import EXCEL_SAMPLE_CELLS, MAX_SHEET_NAMES, Budget
from .report import Refused, empty_table, guarded, reason
from .sources import binary_source, gzip_load_call

PROTECTED_WORKBOOK = "the workbook is password-protected; save it without a password and upload it again"


def excel_tables(path, compression, *, options, limits, budget, report) -> None:
    notes = report["notes"]
    source = binary_source(path, compression, limits)
    try:
        workbook = pd.ExcelFile(source)
    except zipfile.BadZipFile as exc:
        raise Refused(f"{path} is a damaged Excel workbook ({reason(exc)})") from None
    except Exception as exc:  # noqa: BLE001 - openpyxl and xlrd raise many kinds
        if "encrypt" in str(exc).lower() or "password" in str(exc).lower():
            raise Refused(PROTECTED_WORKBOOK) from None
        raise Refused(f"it is not an Excel workbook that can be opened ({reason(exc)})") from None
    with workbook:
        names = [str(name) for name in workbook.sheet_names]
        report["sheets"] = names[:MAX_SHEET_NAMES]
        if len(names) > MAX_SHEET_NAMES:
            notes.append(
                f"the workbook has {len(names)} sheets; only the first {MAX_SHEET_NAMES} names are listed"
            )
        if not names:
            raise Refused(f"{path} holds no sheets")
        chosen = options.get("sheet")
        if chosen not in (None, ""):
            if str(chosen) not in names:
                listed = ", ".join(repr(n) for n in names[:20])
                raise Refused(f"{path} has no sheet {str(chosen)!r}; its sheets are {listed}")
            order = [str(chosen)] + [name for name in names if name != str(chosen)]
        else:
            order = names
        for index, name in enumerate(order):
            if index >= limits["max_sheets"]:
                notes.append(f"only the first {limits['max_sheets']} of {len(names)} sheets were described")
                break
            if budget.over():
                notes.append(f"only {index} of {len(names)} sheets were described: the time budget ran out")
                break
            header_option = options.get("header_row") if index == 0 else None
            report["tables"].append(
                guarded(
                    path,
                    name,
                    _sheet_table,
                    workbook,
                    path,
                    name,
                    compression=compression,
                    header_option=header_option,
                    sheet_count=len(names),
                    limits=limits,
                    budget=budget,
                    notes=notes,
                )
            )


def _sheet_table(
    workbook, path, name, *, compression, header_option, sheet_count, limits, budget, notes
) -> dict:
    table = empty_table(path, name)
    rows_head, width, total = _sheet_head(workbook, name)
    if rows_head is None:
        raise Refused(f"sheet {name!r} is a chart, not a table")
    if not rows_head:
        table["rows"] = 0
        table["detected"] = {"sheet": name, "header_row": "none"}
        table["load"] = gzip_load_call("pd.read_excel", path, {"sheet_name": name}, compression)
        notes.append(f"sheet {name!r} of {path} is empty")
        return table
    records = list(enumerate(rows_head))
    start, header = header_position(records, lambda value: value, header_option)
    kwargs = {"sheet_name": name} if sheet_count > 1 else {}
    if header:
        if start:
            kwargs["header"] = start
    else:
        kwargs["header"] = None
        if start:
            kwargs["skiprows"] = start
    nrows = max(100, min(limits["sample_rows"], EXCEL_SAMPLE_CELLS // max(1, width)))
    frame = workbook.parse(name, nrows=nrows, **{k: v for k, v in kwargs.items() if k != "sheet_name"})
    table["load"] = gzip_load_call("pd.read_excel", path, kwargs, compression)
    table["detected"] = {"sheet": name, "header_row": start if header else "none"}
    fill_from_frame(table, frame, limits, notes)
    if len(frame) < nrows:
        table["rows"] = len(frame)
        return table
    table["sampled"], table["sample_rows"] = True, nrows
    how = "the sheet's recorded size"
    if total is None or total < start + len(frame):  # no dimension recorded, or a wrong one
        total, how = _xlsx_last_row(workbook.book, name, budget), "the last row in the sheet's file"
    data_rows = (total or 0) - start - (1 if header else 0)
    table["rows"] = max(data_rows, len(frame))
    table["rows_exact"] = False
    notes.append(f"rows of sheet {name!r} of {path} are estimated from {how}")
    return table


def _xlsx_last_row(book, name: str, budget: Budget) -> int | None:
    """The number of the last row element in an .xlsx sheet's XML (read as a zlib stream, no
    parsing), for a sheet whose dimension says nothing; None when it cannot be had in time."""
    if hasattr(book, "sheet_by_name"):
        return None
    sheet = book[name]
    archive, part = getattr(book, "_archive", None), getattr(sheet, "_worksheet_path", None)
    if archive is None or part is None:
        return None
    last, tail = None, b""
    with archive.open(part) as stream:
        while chunk := stream.read(4 << 20):
            window = tail + chunk
            found = re.findall(rb'<row[^>]*?\sr="(\d+)"', window[-65536:])
            if found:
                last = int(found[-1])
            tail = window[-256:]
            if budget.over():
                return None
    return last


def _sheet_head(workbook, name: str) -> tuple[list | None, int, int | None]:
    """A sheet's first rows (cell values), its width, and its recorded row count: None rows for
    a chart sheet."""
    book = workbook.book
    wanted = 300
    if hasattr(book, "sheet_by_name"):  # xlrd: an old .xls
        sheet = book.sheet_by_name(name)
        rows = [sheet.row_values(i) for i in range(min(wanted, sheet.nrows))]
        return rows, sheet.ncols, sheet.nrows
    sheet = book[name]
    if not hasattr(sheet, "iter_rows"):
        return None, 0, None
    rows = []
    for values in sheet.iter_rows(max_row=wanted, values_only=True):
        rows.append(list(values))
    while rows and not any(v is not None and str(v).strip() for v in rows[-1]):
        rows.pop()
    width = max((len(r) for r in rows), default=0)
    total = sheet.max_row if isinstance(getattr(sheet, "max_row", None), int) else None
    return rows, width, total
