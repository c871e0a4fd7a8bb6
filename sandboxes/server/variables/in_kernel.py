"""List the user's variables and preview a table. This file runs *inside* the kernel.

sandboxd sends its source as a silent cell in a namespace of its own (see service.py): no
execution count, no history, no ``_`` or ``Out`` entry, and no name of the user's is bound or
changed. It imports nothing of this project. Each call prints one line: ``REPORT_PREFIX``
followed by a JSON report, which sandboxd checks (report.py) before anyone sees it.

Sizes are bounded in time: each object's under a timer (a slow ``__sizeof__`` is given up on),
all of them under one budget, and a large table's object columns measured on a sample.
"""

import json
import re
import signal
import sys
import time
import types

REPORT_PREFIX = "@@sandbox-variables@@ "
IPYTHON_NAMES = re.compile(r"^(_.*|__.*__)$")  # underscores: IPython's _, _1, _i1, _oh... and privates
IPYTHON_OBJECTS = frozenset({"In", "Out", "exit", "quit", "get_ipython"})
SKIPPED = (types.ModuleType, types.FunctionType, types.BuiltinFunctionType, types.MethodType, type)
LENGTHS = (list, tuple, dict, set, frozenset, str, bytes, bytearray, range)
# sandboxd refuses a report beyond these (report.py).
MAX_VARIABLES = 500
MAX_NAME_CHARS = 200
MAX_TYPE_CHARS = 100
BUDGET_SECONDS = 2.0  # every size together; past it, variables are listed without one
EACH_SECONDS = 0.5
SAMPLE_ROWS = 100_000  # a longer table's deep size is measured on this many rows, then scaled
PREVIEW_ROWS = 100
PREVIEW_COLUMNS = 50
PREVIEW_CHARS = 100
CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


class _Late(Exception):
    pass


def _report(**fields):
    print(REPORT_PREFIX + json.dumps(fields), flush=True)


def _user_names(shell):
    namespace, hidden = shell.user_ns, shell.user_ns_hidden
    for name, value in list(namespace.items()):
        if not isinstance(name, str) or not name.isidentifier() or len(name) > MAX_NAME_CHARS:
            continue
        if IPYTHON_NAMES.match(name) or name in IPYTHON_OBJECTS:
            continue
        if name in hidden and hidden[name] is value:
            continue
        if issubclass(type(value), SKIPPED):  # type(), not isinstance: no __class__ of theirs runs
            continue
        yield name, value


def _classes():
    """pandas' and numpy's table types, where the user imported them (nothing is imported here)."""
    pandas, numpy = sys.modules.get("pandas"), sys.modules.get("numpy")
    frames = (pandas.DataFrame,) if pandas else ()
    series = (pandas.Series, pandas.Index) if pandas else ()
    arrays = (numpy.ndarray,) if numpy else ()
    return frames, series, arrays


def _type_name(cls):
    try:
        name = type.__dict__["__qualname__"].__get__(cls)
    except Exception:
        name = "object"
    return CONTROL.sub(" ", str(name))[:MAX_TYPE_CHARS]


def _frame_size(frame):
    """(bytes, approximate) of a DataFrame, Series or Index: a long one's deep size from a sample."""
    rows = len(frame)
    shallow = int(_total(frame.memory_usage(deep=False)))
    if rows <= SAMPLE_ROWS:
        return int(_total(frame.memory_usage(deep=True))), False
    sample = frame.iloc[:SAMPLE_ROWS] if hasattr(frame, "iloc") else frame[:SAMPLE_ROWS]
    extra = int(_total(sample.memory_usage(deep=True))) - int(_total(sample.memory_usage(deep=False)))
    return shallow + extra * rows // SAMPLE_ROWS, extra > 0


def _total(usage):
    return usage.sum() if hasattr(usage, "sum") else usage


def _describe(value, frames, series, arrays, timed):
    cls = type(value)
    entry = {"type": _type_name(cls), "shape": None, "length": None, "size": None, "table": False}
    if issubclass(cls, frames):
        entry.update(shape=[len(value.index), len(value.columns)], table=True)
    elif issubclass(cls, series):
        entry.update(shape=[len(value)], table=True)
    elif issubclass(cls, arrays):
        entry["shape"] = [int(n) for n in value.shape]
    elif cls in LENGTHS:  # exactly: a subclass's __len__ is their code
        entry["length"] = len(value)
    if timed:
        try:
            entry["size"], approximate = _timed(_size, value, cls, frames, series, arrays)
            if approximate:
                entry["approximate"] = True
        except Exception:  # slow, or its __sizeof__ raised: no size
            entry["size"] = None
    return entry


def _size(value, cls, frames, series, arrays):
    if issubclass(cls, frames + series):
        return _frame_size(value)
    if issubclass(cls, arrays):
        return int(value.nbytes), False
    return int(sys.getsizeof(value)), False


def _timed(function, *args):
    """``function(*args)``, or _Late once EACH_SECONDS have passed (between bytecodes: a C loop is
    not cut short, which is why long tables are sampled). The user's own timer is put back."""
    previous = signal.signal(signal.SIGALRM, _raise_late)
    left = signal.setitimer(signal.ITIMER_REAL, EACH_SECONDS)
    try:
        return function(*args)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if left[0]:
            signal.setitimer(signal.ITIMER_REAL, *left)


def _raise_late(signum, frame):
    raise _Late


def variables():
    """Report {"variables": [{name, type, shape, length, size, table, approximate?}], "total"}:
    the first MAX_VARIABLES user variables by name, and how many there are."""
    shell = get_ipython()  # noqa: F821 (the kernel's builtin)
    found = sorted(_user_names(shell), key=lambda item: item[0])
    frames, series, arrays = _classes()
    deadline = time.monotonic() + BUDGET_SECONDS
    listed = []
    for name, value in found[:MAX_VARIABLES]:
        try:
            entry = _describe(value, frames, series, arrays, time.monotonic() < deadline)
        except Exception:  # a property of theirs raised (a broken array subclass): type alone
            entry = _describe(value, (), (), (), False)
        listed.append({"name": name, **entry})
    _report(variables=listed, total=len(found))


def preview(name, rows):
    """Report {"table": <pandas' table schema JSON of the first rows>, "total_rows",
    "total_columns"} for the DataFrame or Series ``name``, or {"error": "not_found"}."""
    value = get_ipython().user_ns.get(name)  # noqa: F821
    frames, series, _ = _classes()
    cls = type(value)
    if not issubclass(cls, frames + series[:1]):
        _report(error="not_found")
        return
    frame = value.to_frame() if issubclass(cls, series) else value
    try:
        table = _head_table(frame, rows)
    except Exception as exc:
        _report(error="failed", message=CONTROL.sub(" ", f"{type(exc).__name__}: {exc}")[:300])
        return
    _report(table=table, total_rows=len(frame), total_columns=len(frame.columns))


def _head_table(frame, rows):
    head = frame.iloc[: max(0, min(rows, PREVIEW_ROWS)), :PREVIEW_COLUMNS].copy()
    head.columns = [CONTROL.sub(" ", str(c))[:MAX_NAME_CHARS] for c in head.columns]
    head = head.loc[:, ~head.columns.duplicated()]
    if head.index.nlevels > 1 or not isinstance(head.index.name, (str, type(None))):
        head = head.reset_index(drop=True)
    name = "index" if head.index.name is None else head.index.name
    while name in head.columns:  # pandas refuses an index named as a column
        name = f"({name})"
    head.index.name = name
    for column in head.columns:
        if getattr(head[column].dtype, "kind", "O") not in "biufmM":  # text, categories, objects
            head[column] = head[column].map(_cell).astype(object)
    table = json.loads(head.to_json(orient="table", date_format="iso", default_handler=str))
    table["schema"] = {"fields": table["schema"]["fields"]}
    return table


def _cell(value):
    if value is None or isinstance(value, (bool, int, float)):
        return value
    return CONTROL.sub(" ", str(value))[:PREVIEW_CHARS]
