"""An analysis's parameters, as papermill made them standard: the assignments of the cell its owner
marks as the parameters cell, and ``name = parameter("name", default)`` in any cell (the template
defines ``parameter``: the default when a cell runs by hand, the run's value in a run).

A run gives values by name; each must be of its default's type (an int may stand for a float), and
a string whose default is a date may be relative ("today - 7 days"), resolved when the run starts.
The values reach the kernel as Python literals written here from checked JSON, never as code.
"""

from __future__ import annotations

import ast
import datetime
import math
import re
from dataclasses import dataclass
from typing import Any

from analyst.models import AnalysisSession
from analyst.sessions.exports.transcript import Code, analysis_cells

PARAMETER_FUNCTION = "parameter"
KERNEL_VALUES = "__analyst_parameters__"  # the kernel's dict that ``parameter()`` reads
MAX_VALUE_CHARS = 10_000  # a value, as its literal; a parameter is a setting, not data
RELATIVE = re.compile(r"^\s*(today|yesterday|tomorrow)\s*(?:([+-])\s*(\d{1,4})\s*(day|week)s?)?\s*$", re.I)
DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
LITERALS = (str, int, float, bool, type(None), list, dict)
MAX_CANDIDATES = 20  # cells offered as the parameters cell


class NotAParametersCell(ValueError):
    """The cell marked holds something else than assignments of literals."""


@dataclass(frozen=True)
class Parameter:
    name: str
    default: Any
    source: str  # "cell": the parameters cell's; "call": a parameter() call's

    @property
    def type(self) -> str:
        if isinstance(self.default, str) and DATE.match(self.default):
            return "date"
        return {str: "str", bool: "bool", int: "int", float: "float", list: "list", dict: "dict"}.get(
            type(self.default), "none"
        )

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "type": self.type, "default": self.default, "source": self.source}


def assignments(code: str) -> dict[str, Any]:
    """The names a parameters cell sets and their literal values, in order; NotAParametersCell
    for a cell that does anything else (a parameter must not depend on code that runs)."""
    try:
        tree = ast.parse(code)
    except SyntaxError as exc:
        raise NotAParametersCell(f"the cell is not valid Python: {exc.msg}") from None
    found: dict[str, Any] = {}
    for statement in tree.body:
        target, value = _assigned(statement)
        if target is None or value is None:
            line = getattr(statement, "lineno", "?")
            raise NotAParametersCell(
                f"line {line} is not an assignment of a literal to a name: a parameters cell holds"
                ' only lines such as start = "2024-01-01" or limit = 10'
            )
        try:
            found[target] = ast.literal_eval(value)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            raise NotAParametersCell(f"the value of {target} is not a literal") from None
    if not found:
        raise NotAParametersCell("the cell assigns nothing")
    return found


def _assigned(statement: ast.stmt) -> tuple[str | None, ast.expr | None]:
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
        target = statement.targets[0]
        return (target.id if isinstance(target, ast.Name) else None), statement.value
    if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
        return statement.target.id, statement.value
    return None, None


def calls(code: str) -> dict[str, Any]:
    """The ``parameter("name", default)`` calls of a cell with a literal name and default."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return {}
    found: dict[str, Any] = {}
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
            continue
        if node.func.id != PARAMETER_FUNCTION or len(node.args) != 2 or node.keywords:
            continue
        name, default = node.args
        if isinstance(name, ast.Constant) and isinstance(name.value, str) and name.value.isidentifier():
            try:
                found.setdefault(name.value, ast.literal_eval(default))
            except (ValueError, SyntaxError, MemoryError, RecursionError):
                continue
    return found


def marked_cell(session: AnalysisSession, cells: list[Code]) -> int | None:
    """The index (0-based) in ``cells`` of the session's parameters cell, if it is among them."""
    if not session.parameters_cell:
        return None
    return next((i for i, cell in enumerate(cells) if cell.source == session.parameters_cell), None)


def declared(session: AnalysisSession, cells: list[Code] | None = None) -> list[Parameter]:
    """The analysis's parameters: the parameters cell's first, then parameter() calls in order."""
    cells = analysis_cells(session) if cells is None else cells
    found: dict[str, Parameter] = {}
    index = marked_cell(session, cells)
    if index is not None:
        for name, value in assignments(cells[index].source).items():
            found[name] = Parameter(name, value, "cell")
    for cell in cells:
        for name, value in calls(cell.source).items():
            found.setdefault(name, Parameter(name, value, "call"))
    return list(found.values())


def candidates(cells: list[Code], most: int = MAX_CANDIDATES) -> list[str]:
    """The code of the analysis's cells that could be its parameters cell, in order."""
    found = []
    for cell in cells:
        try:
            assignments(cell.source)
        except NotAParametersCell:
            continue
        found.append(cell.source)
    return found[:most]


def do_mark(session: AnalysisSession, code: object) -> list[Parameter]:
    """Mark the analysis's cell holding ``code`` as its parameters cell ("" unmarks); its
    parameters. ValueError for code of no cell of the analysis, NotAParametersCell."""
    if not isinstance(code, str):
        raise ValueError("'code' must be the code of one of the session's cells, or \"\" to unmark")
    if code:
        if code not in {cell.source for cell in analysis_cells(session)}:
            raise ValueError(
                "no cell of this session's analysis holds that code (a cell that failed is not one)"
            )
        assignments(code)
    session.parameters_cell = code
    session.save(update_fields=["parameters_cell"])
    return declared(session)


def checked_values(parameters: list[Parameter], given: object, *, today: datetime.date) -> dict[str, Any]:
    """The values of a run: ``given`` checked against the declared parameters, relative dates
    resolved against ``today``. ValueError saying what is wrong."""
    if not isinstance(given, dict):
        raise ValueError("'parameters' must be an object of names and values")
    by_name = {parameter.name: parameter for parameter in parameters}
    unknown = [name for name in given if name not in by_name]
    if unknown:
        known = ", ".join(by_name) or "none"
        raise ValueError(f"unknown parameter {', '.join(map(repr, unknown))}; this analysis has: {known}")
    return {name: _value(by_name[name], value, today) for name, value in given.items()}


def _value(parameter: Parameter, value: Any, today: datetime.date) -> Any:
    if parameter.type == "date" and isinstance(value, str) and RELATIVE.match(value):
        return resolved_date(value, today).isoformat()
    if parameter.type == "date" and not (isinstance(value, str) and _is_date(value)):
        raise ValueError(f'{parameter.name} is a date: give YYYY-MM-DD or, say, "today - 7 days"')
    expected = type(parameter.default)
    fits = isinstance(value, LITERALS) and (
        parameter.default is None
        or (isinstance(value, expected) and not (isinstance(value, bool) and expected is not bool))
        or (expected is float and isinstance(value, int) and not isinstance(value, bool))
    )
    if not fits:
        raise ValueError(
            f"{parameter.name} must be of type {parameter.type}, as its default {parameter.default!r}"
        )
    if not _finite(value):
        raise ValueError(f"the value of {parameter.name} holds NaN or an infinity, which JSON has not")
    if len(repr(value)) > MAX_VALUE_CHARS:
        raise ValueError(f"the value of {parameter.name} is longer than {MAX_VALUE_CHARS:,} characters")
    return value


def _finite(value: Any) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, list):
        return all(_finite(item) for item in value)
    if isinstance(value, dict):
        return all(_finite(item) for item in value.values())
    return True


def _is_date(text: str) -> bool:
    try:
        datetime.date.fromisoformat(text)
    except ValueError:
        return False
    return bool(DATE.match(text))


def resolved_date(text: str, today: datetime.date) -> datetime.date:
    """``today``, ``yesterday``, ``tomorrow``, each optionally ± N days or weeks."""
    match = RELATIVE.match(text)
    if match is None:
        raise ValueError(f"not a relative date: {text!r}")
    word, sign, count, unit = match.groups()
    day = today + datetime.timedelta(days={"today": 0, "yesterday": -1, "tomorrow": 1}[word.lower()])
    if sign:
        days = int(count) * (7 if unit.lower() == "week" else 1)
        day += datetime.timedelta(days=days if sign == "+" else -days)
    return day


def injected(values: dict[str, Any], names: set[str]) -> str:
    """The code set after the parameters cell: an assignment for each of ``names`` given a value."""
    lines = ["# Parameters of this run"]
    lines += [f"{name} = {values[name]!r}" for name in values if name in names]
    return "\n".join(lines)


def kernel_values(values: dict[str, Any]) -> str:
    """The code run before the first cell: the values ``parameter()`` returns in this run."""
    return f"{KERNEL_VALUES} = {values!r}"
