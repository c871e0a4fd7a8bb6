"""An analysis's parameters: a parameters cell's literal assignments and parameter() calls; a run's
values checked against their defaults, relative dates resolved, and written back as literals."""

from __future__ import annotations

import ast
import datetime

import pytest

from analyst.runs import parameters
from analyst.runs.parameters import NotAParametersCell, Parameter

TODAY = datetime.date(2026, 12, 4)


def test_a_parameters_cell_is_assignments_of_literals():
    code = 'start = "2024-01-01"\nlimit: int = 10\n# a comment\nregions = ["EU", "US"]\nrate = 0.5'
    assert parameters.assignments(code) == {
        "start": "2024-01-01",
        "limit": 10,
        "regions": ["EU", "US"],
        "rate": 0.5,
    }


@pytest.mark.parametrize(
    "code",
    [
        "start = today()",  # a call: code would run
        "a = b = 1",
        "x, y = 1, 2",
        "print('hi')",
        "df.limit = 3",
        "",
        "start = (",
        "n = 1 + 2",
    ],
)
def test_anything_else_is_not_a_parameters_cell(code):
    with pytest.raises(NotAParametersCell):
        parameters.assignments(code)


def test_parameter_calls_with_literal_names_and_defaults_are_found():
    code = (
        'start = parameter("start", "2024-01-01")\n'
        "top = parameter('top', 5)\n"
        "dynamic = parameter(name, 1)\n"  # a name that is not a literal: not a parameter
        "computed = parameter('computed', 1 + 1)\n"
        "bad = parameter('not an identifier', 1)\n"
    )
    assert parameters.calls(code) == {"start": "2024-01-01", "top": 5}
    assert parameters.calls("this is not python (") == {}


def test_types_come_from_defaults():
    for default, kind in [
        ("2024-01-01", "date"),
        ("EU", "str"),
        (3, "int"),
        (2.5, "float"),
        (True, "bool"),
        ([1], "list"),
        ({"a": 1}, "dict"),
        (None, "none"),
    ]:
        assert Parameter("x", default, "cell").type == kind


def declared() -> list[Parameter]:
    return [
        Parameter("start", "2024-01-01", "cell"),
        Parameter("limit", 10, "cell"),
        Parameter("rate", 0.5, "call"),
        Parameter("region", "EU", "call"),
        Parameter("flag", False, "call"),
    ]


def test_values_are_checked_against_their_defaults():
    values = {"limit": 20, "rate": 1, "region": "US", "flag": True, "start": "2025-02-28"}
    assert parameters.checked_values(declared(), values, today=TODAY) == values
    for wrong in [
        {"limit": "20"},
        {"limit": 2.5},
        {"limit": True},  # a bool is an int to Python, not to a reader
        {"flag": 1},
        {"start": "last monday"},
        {"start": "2025-02-30"},
        {"rate": float("nan")},
        {"region": "x" * 20_000},
    ]:
        with pytest.raises(ValueError):
            parameters.checked_values(declared(), wrong, today=TODAY)
    with pytest.raises(ValueError, match="unknown parameter 'nope'; this analysis has: start, limit"):
        parameters.checked_values(declared(), {"nope": 1}, today=TODAY)
    with pytest.raises(ValueError, match="must be an object"):
        parameters.checked_values(declared(), ["limit"], today=TODAY)


def test_relative_dates_are_resolved_against_today():
    for given, expected in [
        ("today", "2026-12-04"),
        ("today - 7 days", "2026-11-27"),
        ("Yesterday", "2026-12-03"),
        ("tomorrow + 2 weeks", "2026-12-19"),
        ("today-1day", "2026-12-03"),
    ]:
        assert parameters.checked_values(declared(), {"start": given}, today=TODAY) == {"start": expected}


def test_values_go_to_the_kernel_as_literals_never_as_code():
    hostile = {"region": "'); import os; os.system('x'); ('", "limit": 3}
    code = parameters.injected(hostile, {"region", "limit"})
    tree = ast.parse(code)
    assert [type(node) for node in tree.body] == [ast.Assign, ast.Assign]
    namespace: dict[str, object] = {}
    exec(code, namespace)  # noqa: S102  # our own literals, checked above
    assert namespace["region"] == hostile["region"] and namespace["limit"] == 3
    assert (
        parameters.injected({"region": "US", "rate": 1.5}, {"region"})
        == "# Parameters of this run\nregion = 'US'"
    )
    before = parameters.kernel_values({"rate": 1.5})
    exec(before, namespace)  # noqa: S102
    assert namespace[parameters.KERNEL_VALUES] == {"rate": 1.5}
