"""A page of a table's rows, sorted and filtered over the whole frame, or the whole of it written
as CSV. This file runs *inside* the kernel.

sandboxd sends it as a silent cell in a namespace of its own, as in_kernel.py. The request (the
variable's name, the sort column, the filter text...) arrives as base64 of JSON and is decoded
here: none of it is ever part of the code. Each call prints one line, ``REPORT_PREFIX`` and a
JSON report, which sandboxd checks (rows_report.py).

Bounded: at most MAX_LIMIT rows and MAX_PAGE_CHARS of JSON a page, each text cut to MAX_CHARS,
the work under a timer of SECONDS (checked between columns and chunks: one C loop is not cut
short). A query's order (the filtered rows' positions, sorted) is kept for the next page while
no cell has run and the frame is the same object, so paging costs only the page.
"""

import base64
import datetime
import json
import math
import os
import re
import signal
import sys
import types
import weakref

REPORT_PREFIX = "@@sandbox-rows@@ "
SHOWN_TABLES = "__sandbox_shown_tables__"  # sys.modules' key of the tables shown as results (data_tables.py)
CACHE = "__sandbox_rows_cache__"
MAX_LIMIT = 500
MAX_COLUMNS = 200
MAX_CHARS = 1000
MAX_NAME_CHARS = 200
MAX_PAGE_CHARS = 512 * 1024  # under sandboxd's 1 MiB of a silent cell's output
CSV_CHUNK_ROWS = 50_000
EXACT = 2**53
NUMBER_TEXT = re.compile(r"^[0-9.eE+\-]*$|^-?(nan|inf)")
DATE_TEXT = re.compile(r"^[0-9:\-. T]*$|^nat$")
CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


class _Late(Exception):
    pass


class _Refused(Exception):
    def __init__(self, error, message):
        super().__init__(message)
        self.error = error


def _report(**fields):
    print(REPORT_PREFIX + json.dumps(fields, allow_nan=False), flush=True)


def _request(encoded):
    return json.loads(base64.b64decode(encoded))


def rows(encoded):
    """Report {"total_rows", "all_rows", "offset", "columns": [{"name", "type"}], "rows": [[...]]}:
    the page at ``offset`` of the named table, filtered and sorted; or {"error", "message"}."""
    _answer(_page, _request(encoded))


def csv(encoded):
    """Write the named table, filtered and sorted, as CSV to the request's ``path`` (at most
    ``max_bytes``), and report {"rows", "bytes"}; or {"error", "message"}."""
    _answer(_write_csv, _request(encoded))


def _answer(work, request):
    previous = signal.signal(signal.SIGALRM, _raise_late)
    left = signal.setitimer(signal.ITIMER_REAL, float(request["seconds"]))
    try:
        _report(**work(request))
    except _Refused as refused:
        _report(error=refused.error, message=str(refused)[:300])
    except _Late:
        _report(error="late", message=f"the table took longer than {request['seconds']:g} s")
    except Exception as exc:  # their data broke pandas: said, never raised into the kernel's log
        _report(error="failed", message=CONTROL.sub(" ", f"{type(exc).__name__}: {exc}")[:300])
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if left[0]:
            signal.setitimer(signal.ITIMER_REAL, *left)


def _raise_late(signum, frame):
    raise _Late


def _table(request):
    """The DataFrame the request names (a Series as a one-column frame); _Refused when the name
    holds none, or, given a result's token, no longer the table that result showed."""
    pandas = sys.modules.get("pandas")
    value = get_ipython().user_ns.get(request["name"])  # noqa: F821 (the kernel's builtin)
    kinds = (pandas.DataFrame, pandas.Series) if pandas else ()
    if not issubclass(type(value), kinds):  # type(), not isinstance: no __class__ of theirs runs
        raise _Refused("not_found", "no DataFrame or Series of that name")
    token = request.get("token")
    if token is not None:
        shown = getattr(sys.modules.get(SHOWN_TABLES), "tables", None)
        if shown is None or shown.get(token) is not value:
            raise _Refused("not_found", "that name no longer holds the table shown")
    if issubclass(type(value), pandas.Series):
        return value, value.to_frame(name="values" if value.name is None else value.name)
    return value, value


def _labelled(frame):
    """[(field name, values)] of the index levels then the first MAX_COLUMNS columns, with the
    names the result's grid has (data_tables.py)."""
    index = frame.index
    names, columns = [], []
    for level in range(index.nlevels):
        name = index.names[level]
        names.append(_text(name) if name is not None else "index" if index.nlevels == 1 else f"level_{level}")
        columns.append(index.get_level_values(level))
    for position in range(min(frame.shape[1], MAX_COLUMNS)):
        label = frame.columns[position]
        names.append(" / ".join(map(_text, label)) if isinstance(label, tuple) else _text(label))
        columns.append(frame.iloc[:, position])
    return list(zip(_unique(names), columns, strict=True))


def _order(request, value, labelled):
    """The positions of the rows that match the filter, in the sort's order; kept for the next
    page of the same query while the frame and the kernel's execution count are unchanged."""
    import numpy

    shell = get_ipython()  # noqa: F821
    key = (request.get("sort"), bool(request.get("desc")), request.get("filter") or "")
    cache = sys.modules.get(CACHE)
    if cache is None:
        cache = sys.modules[CACHE] = types.ModuleType(CACHE)
        cache.entry = None
    entry = cache.entry
    now = (shell.execution_count, value.shape, key)
    if entry and entry[0]() is value and entry[1] == now:
        return entry[2]
    cache.entry = None  # a frame no longer shown is not kept alive by its order
    sort, desc, wanted = key
    length = len(labelled[0][1]) if labelled else 0
    positions = numpy.arange(length)
    if wanted:
        positions = numpy.flatnonzero(_matches(labelled, wanted.lower(), length))
    if sort is not None:
        found = [values for name, values in labelled if name == sort]
        if not found:
            raise _Refused("bad_request", "sort names no column of the table")
        positions = positions[_sorted(found[0], positions, desc)]
    cache.entry = (weakref.ref(value), now, positions)
    return positions


def _matches(labelled, wanted, length):
    """Rows where any column's shown text holds ``wanted`` (lower case): numbers and dates are
    looked at only when the text could be part of one."""
    import numpy
    from pandas.api import types as kinds

    found = numpy.zeros(length, dtype=bool)
    for _, values in labelled:
        dtype = values.dtype
        if kinds.is_bool_dtype(dtype):
            if wanted in "true" or wanted in "false":
                found |= _text_holds(values.astype(str), wanted)
        elif kinds.is_numeric_dtype(dtype):
            if NUMBER_TEXT.match(wanted):
                found |= _text_holds(values.astype(str), wanted)
        elif kinds.is_datetime64_any_dtype(dtype) or kinds.is_timedelta64_dtype(dtype):
            if DATE_TEXT.match(wanted):
                found |= _text_holds(values.astype(str), wanted)
        elif kinds.is_string_dtype(dtype) and not kinds.is_object_dtype(dtype):
            found |= _text_holds(values, wanted)
        else:
            found |= _object_holds(values, wanted)
    return found


def _text_holds(texts, wanted):
    import numpy

    return numpy.asarray(texts.str.lower().str.contains(wanted, regex=False, na=False), dtype=bool)


def _object_holds(values, wanted):
    """Each distinct value's text tested once (a column of a few cities costs a few tests)."""
    import numpy
    import pandas

    try:
        codes, uniques = pandas.factorize(values, use_na_sentinel=True)
    except TypeError:  # unhashable values (lists, dicts): each one's text
        texts = pandas.Series([_cell_text(v) for v in values])
        return _text_holds(texts, wanted)
    texts = pandas.Series([_cell_text(v) for v in uniques], dtype=object)
    hits = numpy.append(_text_holds(texts, wanted), wanted in "none" or wanted in "nan")
    return hits[numpy.where(codes < 0, len(uniques), codes)]


def _sorted(values, positions, desc):
    """The order (positions into ``positions``) of ``values`` at ``positions``: stable, missing
    values last either way; text by its distinct values' order, mixed types by their text."""
    import numpy
    import pandas
    from pandas.api import types as kinds

    picked = pandas.Series(values.take(positions)).reset_index(drop=True)
    dtype = picked.dtype
    if (
        kinds.is_numeric_dtype(dtype)
        or kinds.is_datetime64_any_dtype(dtype)
        or kinds.is_timedelta64_dtype(dtype)
    ):
        ordered = picked.sort_values(ascending=not desc, kind="stable", na_position="last")
        return ordered.index.to_numpy()
    try:
        codes, uniques = pandas.factorize(picked, sort=True, use_na_sentinel=True)
    except TypeError:  # values that do not compare (text beside numbers): by their text
        codes, uniques = pandas.factorize(picked.map(_cell_text), sort=True, use_na_sentinel=True)
    key = codes if not desc else len(uniques) - 1 - codes
    key = numpy.where(codes < 0, len(uniques), key)
    return numpy.argsort(key, kind="stable")


def _page(request):
    value, frame = _table(request)
    labelled = _labelled(frame)
    positions = _order(request, value, labelled)
    offset, limit = int(request["offset"]), min(int(request["limit"]), MAX_LIMIT)
    picked = positions[offset : offset + limit]
    columns = [{"name": name, "type": _field_type(values.dtype)} for name, values in labelled]
    taken = [_values_at(values, picked) for _, values in labelled]
    page, used = [], 0
    for row in zip(*taken, strict=True) if taken else ():
        cells = [_cell(v) for v in row]
        used += len(json.dumps(cells, allow_nan=False)) + 1
        if used > MAX_PAGE_CHARS and page:
            break
        page.append(cells)
    return {
        "total_rows": len(positions),
        "all_rows": len(frame),
        "offset": offset,
        "columns": columns,
        "rows": page,
    }


def _values_at(values, positions):
    taken = values.take(positions) if hasattr(values, "take") else values[positions]
    return taken.tolist()


def _write_csv(request):
    """The whole table (every column, values as pandas writes them), filtered and sorted, in
    chunks; a file past ``max_bytes`` is removed and refused."""
    value, frame = _table(request)
    positions = _order(request, value, _labelled(frame))
    limit, path = int(request["max_bytes"]), request["path"]
    os.makedirs(os.path.dirname(path), exist_ok=True)
    names = [name for name, _ in _labelled(frame.iloc[:0, :0])]
    written = 0
    try:
        with open(path, "x", encoding="utf-8", newline="") as out:
            for start in range(0, max(len(positions), 1), CSV_CHUNK_ROWS):
                chunk = frame.iloc[positions[start : start + CSV_CHUNK_ROWS]]
                chunk.to_csv(out, header=start == 0, index=True, index_label=names)
                if out.tell() > limit:
                    raise _Refused("too_large", f"the table's CSV is larger than {limit} bytes")
            written = out.tell()
    except BaseException:
        if os.path.exists(path):
            os.remove(path)
        raise
    return {"rows": len(positions), "bytes": written}


def _field_type(dtype):
    """The Table Schema type of a pandas dtype, as data_tables.py says it."""
    from pandas.api import types as kinds

    if kinds.is_bool_dtype(dtype):
        return "boolean"
    if kinds.is_integer_dtype(dtype):
        return "integer"
    if kinds.is_float_dtype(dtype):
        return "number"
    if kinds.is_datetime64_any_dtype(dtype):
        return "datetime"
    if kinds.is_timedelta64_dtype(dtype):
        return "duration"
    if kinds.is_string_dtype(dtype) and not kinds.is_object_dtype(dtype):
        return "string"
    return "any"


def _cell(value):
    """One value as JSON holds it exactly, as data_tables.py writes it: null for what is
    missing, "Infinity", an integer past 2**53 as text, ISO 8601 times, anything else its text."""
    import numpy
    import pandas

    if value is None or value is pandas.NA or value is pandas.NaT:
        return None
    if isinstance(value, (bool, numpy.bool_)):
        return bool(value)
    if isinstance(value, (int, numpy.integer)):
        number = int(value)
        return number if -EXACT <= number <= EXACT else str(number)
    if isinstance(value, (float, numpy.floating)):
        number = float(value)
        if math.isnan(number):
            return None
        return number if math.isfinite(number) else ("Infinity" if number > 0 else "-Infinity")
    if isinstance(value, str):
        return _cut(value)
    if isinstance(value, (numpy.datetime64, numpy.timedelta64)) and numpy.isnat(value):
        return None
    if isinstance(value, numpy.datetime64):
        return pandas.Timestamp(value).isoformat()
    if isinstance(value, (datetime.date, datetime.time)):
        return value.isoformat()
    return _cut(_cell_text(value))


def _cell_text(value):
    if isinstance(value, (bytes, bytearray)):
        return repr(bytes(value))
    return _text(value)


def _text(value):
    try:
        return str(value)
    except Exception:
        try:
            return repr(value)
        except Exception:
            return f"<{type(value).__name__}>"


def _cut(text):
    return text if len(text) <= MAX_CHARS else text[: MAX_CHARS - 1] + "…"


def _unique(names):
    names = [CONTROL.sub(" ", name)[:MAX_NAME_CHARS] for name in names]
    seen, unique = set(), []
    for name in names:
        candidate, count = name, 1
        while candidate in seen:
            count += 1
            candidate = f"{name} ({count})"
        seen.add(candidate)
        unique.append(candidate)
    return unique
