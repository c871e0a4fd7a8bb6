"""A table's rows over the whole frame, computed in the kernel: pages of the filtered, sorted
frame (not of its first rows), a shown result's table found again by its token while its name
still holds it, the whole frame as CSV under a byte limit; a hostile name or filter stays data,
and what is not a table, or a bad parameter, is a clear error."""

from __future__ import annotations

import csv
import io

import pytest

from sandboxes import FileTooLarge, InvalidRequest, Sandbox, VariableNotFound

SETUP = """
import numpy as np, pandas as pd
cities = ['Oslo', 'Lima', 'Pune', 'Kyiv', 'Anchorage', 'Accra']
df = pd.DataFrame({
    'id': range(3376),
    'city': [cities[i % 6] if i % 844 else 'ANCHORAGE, AK' for i in range(3376)],
    'amount': [float(i % 7) if i % 5 else np.nan for i in range(3376)],
})
s = df['id'] * 2
n = 3
"""
# 'Anchorage' every 6th row, and 4 rows (most past the first 1,000) spelled 'ANCHORAGE, AK'.
ANCHORAGE = [i for i in range(3376) if i % 844 == 0 or i % 6 == 4]


@pytest.fixture
def table(sandbox: Sandbox) -> Sandbox:
    assert sandbox.run_code(SETUP).error is None
    return sandbox


def test_a_filter_finds_every_matching_row_of_the_whole_frame(table: Sandbox) -> None:
    page = table.default_context.rows("df", filter="anchorage", limit=500)
    assert page.total_rows == len(ANCHORAGE) and page.all_rows == 3376
    assert [row[1] for row in page.rows] == ANCHORAGE[:500]
    assert [c["name"] for c in page.columns] == ["index", "id", "city", "amount"]
    assert [c["type"] for c in page.columns] == ["integer", "integer", "string", "number"]
    last = table.default_context.rows("df", filter="ANCHORAGE, ak", offset=2, limit=10)
    assert last.total_rows == 4 and [row[1] for row in last.rows] == [1688, 2532]


def test_a_sort_orders_the_whole_frame_stably_with_missing_values_last(table: Sandbox) -> None:
    context = table.default_context
    top = context.rows("df", sort="amount", desc=True, limit=3)
    assert [row[3] for row in top.rows] == [6.0, 6.0, 6.0] and [row[1] for row in top.rows] == [6, 13, 27]
    tail = context.rows("df", sort="amount", offset=3370, limit=10)
    assert [row[3] for row in tail.rows] == [None] * 6  # NaN, sent as null
    by_city = context.rows("df", sort="city", filter="a", limit=2)
    assert [row[2] for row in by_city.rows] == ["ANCHORAGE, AK", "ANCHORAGE, AK"]
    by_index = context.rows("df", sort="index", desc=True, limit=2)
    assert [row[0] for row in by_index.rows] == [3375, 3374]
    series = context.rows("s", sort="id", desc=True, limit=1)
    assert [c["name"] for c in series.columns] == ["index", "id"] and series.rows == [[3375, 6750]]


def test_a_page_leaves_the_kernel_as_it_was(table: Sandbox) -> None:
    context = table.default_context
    before = context.run_code("[k for k in globals() if not k.startswith('_')]").text
    context.rows("df", sort="city", filter="oslo")
    assert context.run_code("[k for k in globals() if not k.startswith('_')]").text == before
    assert context.run_code("df.index.is_monotonic_increasing").text == "True"


def test_a_shown_result_is_found_again_while_its_name_holds_it(table: Sandbox) -> None:
    context = table.default_context
    shown = context.run_code("df").results[0].data["variable"]
    assert shown["name"] == "df"
    assert context.rows("df", token=shown["token"], limit=1).total_rows == 3376
    assert "variable" not in context.run_code("df.head()").results[0].data  # in no name
    assert context.run_code("df = df[df.id < 10]").error is None
    with pytest.raises(VariableNotFound):  # df now holds another table
        context.rows("df", token=shown["token"])
    assert context.rows("df").total_rows == 10


def test_the_csv_is_the_whole_filtered_sorted_frame_within_its_limit(table: Sandbox) -> None:
    context = table.default_context
    content = b"".join(context.csv_chunks("df", filter="anchorage", sort="id", desc=True, max_bytes=1 << 20))
    lines = list(csv.reader(io.StringIO(content.decode())))
    assert lines[0] == ["index", "id", "city", "amount"]
    assert [int(line[1]) for line in lines[1:]] == ANCHORAGE[::-1]
    assert lines[1] == ["3370", "3370", "Anchorage", ""]  # NaN as pandas writes it
    with pytest.raises(FileTooLarge, match="larger than 1000 bytes"):
        b"".join(context.csv_chunks("df", max_bytes=1000))
    assert not [e.name for e in table.files.list(".") if e.name.startswith(".sandbox-export")]


HOSTILE = [
    "x'); import os; os.system('touch /tmp/owned'); ('",
    '"""; raise SystemExit; """',
    "\\x00\n\r)(",
]


@pytest.mark.parametrize("text", HOSTILE)
def test_a_hostile_filter_is_only_text_to_look_for(table: Sandbox, text: str) -> None:
    page = table.default_context.rows("df", filter=text, sort="city")
    assert page.total_rows == 0 and page.all_rows == 3376
    assert table.default_context.run_code("import os; os.path.exists('/tmp/owned')").text == "False"


def test_what_is_not_a_table_or_a_bad_parameter_is_refused(table: Sandbox) -> None:
    context = table.default_context
    for name in ("n", "missing", "os"):
        with pytest.raises(VariableNotFound):
            context.rows(name)
    with pytest.raises(InvalidRequest):
        context.rows("df; import os")
    with pytest.raises(InvalidRequest, match="sort names no column"):
        context.rows("df", sort="nope")
    with pytest.raises(InvalidRequest):
        context.rows("df", limit=501)
    with pytest.raises(InvalidRequest):
        context.rows("df", filter="x" * 201)
    with pytest.raises(InvalidRequest):
        context.rows("df", token="not hex")
