"""The variable inspector: a context's user variables with their types, shapes and sizes, read
by a silent cell that leaves the execution count, the history, ``_`` and every variable as they
were; a table's first rows; bounded for a slow or huge object."""

from __future__ import annotations

import time

import pytest

from sandboxes import ContextBusy, InvalidRequest, Sandbox, VariableInfo, VariableNotFound

SETUP = """
import numpy as np
import pandas as pd
import math
df = pd.DataFrame({
    "a": range(3376), "b": [i * 0.5 for i in range(3376)], "c": ["x" * 20] * 3376,
    "d": pd.date_range("2020-01-01", periods=3376, freq="h"), "e": [True] * 3376,
    "f": [None] * 3376, "g": [str(i) for i in range(3376)],
})
arr = np.zeros((10, 20))
items = [1, 2, 3]
text = "hello"
n = 42
_private = 1
def helper(): pass
class Thing: pass
s = df["a"]
"""


def by_name(variables: list[VariableInfo]) -> dict[str, VariableInfo]:
    return {v.name: v for v in variables}


def test_it_lists_user_variables_with_types_shapes_and_sizes(sandbox: Sandbox) -> None:
    assert sandbox.run_code(SETUP).error is None
    listed = sandbox.default_context.variables()
    found = by_name(listed)
    assert sorted(found) == ["arr", "df", "items", "n", "s", "text"]  # no modules, functions, classes, _names
    assert listed.total == 6
    df = found["df"]
    assert (df.type, df.shape, df.table) == ("DataFrame", [3376, 7], True)
    assert 250_000 < df.size < 1_000_000, df.size  # deep: the strings count (162 KiB without them)
    assert (found["arr"].type, found["arr"].shape, found["arr"].size) == ("ndarray", [10, 20], 1600)
    assert (found["items"].type, found["items"].length, found["items"].shape) == ("list", 3, None)
    assert (found["text"].length, found["n"].type, found["n"].length) == (5, "int", None)
    assert (found["s"].type, found["s"].shape, found["s"].table) == ("Series", [3376], True)
    assert found["n"].size and not found["n"].table


def test_it_leaves_the_execution_count_history_and_variables_untouched(sandbox: Sandbox) -> None:
    sandbox.run_code(SETUP)
    before = sandbox.run_code("6 * 7")
    sandbox.default_context.variables()
    sandbox.default_context.preview("df")
    after = sandbox.run_code("len(In), _, sorted(k for k in globals() if not k.startswith('_'))")
    assert after.execution_count == before.execution_count + 1
    length, last, names = eval(after.text)  # noqa: S307 (our own kernel's repr of plain values)
    assert length == after.execution_count + 1  # In holds one entry per counted cell, after ''
    assert last == 42  # `_` is still the last cell's result
    assert "__sandbox_variables__" not in names and "variables" not in names and "preview" not in names
    assert sandbox.run_code("items, n").text == "([1, 2, 3], 42)"


def test_a_table_previews_as_its_first_rows(sandbox: Sandbox) -> None:
    sandbox.run_code(SETUP)
    table = sandbox.default_context.preview("df", rows=5)
    assert (table.total_rows, table.total_columns) == (3376, 7)
    assert [f["name"] for f in table.fields] == ["index", "a", "b", "c", "d", "e", "f", "g"]
    assert [f["type"] for f in table.fields][:3] == ["integer", "integer", "number"]
    assert len(table.data) == 5
    assert table.data[1] == {
        "index": 1,
        "a": 1,
        "b": 0.5,
        "c": "x" * 20,
        "d": "2020-01-01T01:00:00.000",
        "e": True,
        "f": None,
        "g": "1",
    }
    assert sandbox.default_context.preview("s", rows=2).total_columns == 1
    with pytest.raises(VariableNotFound):
        sandbox.default_context.preview("items")
    with pytest.raises(VariableNotFound):
        sandbox.default_context.preview("nothing_here")
    with pytest.raises(InvalidRequest):
        sandbox.default_context.preview("df; import os")


def test_a_wide_table_with_long_text_previews_cut(sandbox: Sandbox) -> None:
    sandbox.run_code(
        "import pandas as pd\nwide = pd.DataFrame({f'c{i}': ['y' * 5000] * 500 for i in range(80)})"
    )
    table = sandbox.default_context.preview("wide", rows=1000 // 10)
    assert len(table.fields) == 51 and len(table.data) == 100
    assert table.data[0]["c0"] == "y" * 100
    assert table.total_columns == 80


def test_a_slow_object_is_listed_without_a_size_in_bounded_time(sandbox: Sandbox) -> None:
    sandbox.run_code(
        "import time\nclass Slow:\n    def __sizeof__(self):\n        time.sleep(30)\n        return 1\n"
        "slow = Slow()\nslower = [Slow() for _ in range(3)]\nfine = 1"
    )
    started = time.monotonic()
    found = by_name(sandbox.default_context.variables())
    assert time.monotonic() - started < 5
    assert (found["slow"].type, found["slow"].size) == ("Slow", None)
    assert found["fine"].size is not None
    assert sandbox.run_code("fine + 1").text == "2"


def test_a_huge_table_is_measured_on_a_sample(sandbox: Sandbox) -> None:
    sandbox.run_code(
        "import pandas as pd\n"
        "big = pd.DataFrame({'s': pd.Series(['word'] * 3_000_000, dtype=object), 'n': range(3_000_000)})"
    )
    started = time.monotonic()
    big = by_name(sandbox.default_context.variables())["big"]
    assert time.monotonic() - started < 8
    assert big.shape == [3_000_000, 2] and big.approximate
    assert 100_000_000 < big.size < 400_000_000, big.size


def test_it_waits_for_no_cell_and_a_cell_waits_for_it(sandbox: Sandbox, sandboxd) -> None:
    import threading

    running = threading.Thread(target=sandbox.run_code, args=("import time; time.sleep(3)",))
    running.start()
    time.sleep(1)
    try:
        with pytest.raises(ContextBusy):
            sandbox.default_context.variables()
    finally:
        running.join()
    # A cell sent while the inspector runs is not refused: it runs after it.
    sandbox.run_code(
        "import time\nclass Slow:\n    def __sizeof__(self):\n        time.sleep(2)\n        return 1\n"
        "a, b, c = Slow(), Slow(), Slow()"
    )
    other = Sandbox.connect(sandbox.sandbox_id, url=sandboxd.url, token=sandboxd.token)
    try:
        inspecting = threading.Thread(target=other.default_context.variables)
        inspecting.start()
        time.sleep(0.3)
        assert sandbox.run_code("6 * 7").text == "42"
        inspecting.join()
    finally:
        other.close()


def test_odd_tables_preview_too(sandbox: Sandbox) -> None:
    """Names pandas' table schema refuses or cannot hold, values JSON has no place for."""
    sandbox.run_code(
        "import numpy as np\nimport pandas as pd\n"
        "clash = pd.DataFrame({'index': [1, 2], 'a': [3, 4]})\n"
        "multi = pd.DataFrame(np.ones((2, 2)), columns=pd.MultiIndex.from_tuples([('a', 'x'), ('a', 'y')]))\n"
        "odd = pd.DataFrame({'l': [[1, 2], {'k': 1}], 'u': np.array([2**64 - 1, 0], dtype=np.uint64),"
        " 'c': [1 + 2j, 3j], 'f': [np.nan, np.inf]})"
    )
    context = sandbox.default_context
    assert context.preview("clash").data[0] == {"(index)": 0, "index": 1, "a": 3}
    assert [f["name"] for f in context.preview("multi").fields] == ["index", "('a', 'x')", "('a', 'y')"]
    first = context.preview("odd").data[0]
    assert first == {"index": 0, "l": "[1, 2]", "u": 2**64 - 1, "c": "(1+2j)", "f": None}
