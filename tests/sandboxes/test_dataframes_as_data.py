"""A DataFrame shown (last expression or display()) carries its first 1,000 rows as a Table Schema
data resource with its total row count, beside pandas' HTML; odd values still make valid JSON."""

from __future__ import annotations

import json

MIME = "application/vnd.dataresource+json"
FRAME = "import pandas as pd\ndf = pd.DataFrame({'n': range(2500), 'city': ['Oslo', 'Lima'] * 1250})\n"
# Every kind of value that trips a JSON writer, under a MultiIndex on both axes.
ODD = """
import numpy as np, pandas as pd
odd = pd.DataFrame({
    'float': [1.5, np.nan, np.inf, -np.inf],
    'Int64': pd.array([1, None, 3, 2**60], dtype='Int64'),
    'when': pd.to_datetime(['2024-01-01', None, '2024-03-01', '2025-01-01']),
    'zoned': pd.to_datetime(['2024-01-01', None, '2024-03-01', '2025-01-01']).tz_localize('Europe/Oslo'),
    'delta': pd.to_timedelta([1, 2, None, 4], unit='h'),
    'bytes': [b'\\x00\\xff', b'abc', None, b''],
    'objects': [{'a': 1}, [1, 2], object(), 1 + 2j],
    'category': pd.Categorical(['a', 'b', None, 'a']),
    'flag': pd.array([True, None, False, True], dtype='boolean'),
    'period': pd.period_range('2024-01', periods=4, freq='M'),
    'text': ['x', None, np.nan, 'y' * 5000],
})
odd.columns = pd.MultiIndex.from_tuples([('g', name) for name in odd.columns])
odd.index = pd.MultiIndex.from_tuples([('a', 1), ('a', 2), ('b', 1), ('b', 2)], names=['key', None])
odd
"""


def strict(value):
    """``value`` through a JSON parser that refuses NaN and Infinity literals, as browsers do."""

    def refuse(literal):
        raise ValueError(f"not JSON: {literal}")

    return json.loads(json.dumps(value), parse_constant=refuse)


def test_a_last_expression_dataframe_carries_its_first_1000_rows_and_the_total(sandbox):
    execution = sandbox.run_code(FRAME + "df")
    main = execution.main_result
    assert main is not None and "<table" in main.html and "Oslo" in main.text  # as before
    assert main.data is main.bundle[MIME]  # the SDK's Result.data
    table = strict(main.data)
    assert table["total_rows"] == 2500 and table["total_columns"] == 2
    assert len(table["data"]) == 1000
    assert table["schema"] == {
        "fields": [
            {"name": "index", "type": "integer"},
            {"name": "n", "type": "integer"},
            {"name": "city", "type": "string"},
        ],
        "primaryKey": ["index"],
    }
    assert table["data"][:2] == [{"index": 0, "n": 0, "city": "Oslo"}, {"index": 1, "n": 1, "city": "Lima"}]
    assert table["data"][-1]["n"] == 999


def test_display_and_a_series_carry_it_too(sandbox):
    execution = sandbox.run_code(FRAME + "display(df.head(3))\ndisplay(df['n'].rename(None))\nprint('done')")
    head, series = execution.results
    assert not head.is_main_result and head.data["total_rows"] == 3 and len(head.data["data"]) == 3
    assert series.data["total_rows"] == 2500
    assert [field["name"] for field in series.data["schema"]["fields"]] == ["index", "values"]
    assert execution.stdout == "done\n"
    assert sandbox.run_code("'not a table'").main_result.formats() == ["text/plain"]


def test_odd_values_make_valid_json(sandbox):
    table = strict(sandbox.run_code(ODD).main_result.data)
    names = [field["name"] for field in table["schema"]["fields"]]
    assert names[:3] == ["key", "level_1", "g / float"]
    assert table["schema"]["primaryKey"] == ["key", "level_1"]
    types = {field["name"]: field["type"] for field in table["schema"]["fields"]}
    assert types["g / when"] == types["g / zoned"] == "datetime" and types["g / Int64"] == "integer"
    first, second, third, fourth = table["data"]
    assert [row["g / float"] for row in table["data"]] == [1.5, None, "Infinity", "-Infinity"]
    assert [row["g / Int64"] for row in table["data"]] == [1, None, 3, str(2**60)]  # past 2**53 as text
    assert first["g / when"] == "2024-01-01T00:00:00" and second["g / when"] is None  # NaT
    assert first["g / zoned"] == "2024-01-01T00:00:00+01:00"
    assert first["g / delta"] == "0 days 01:00:00" and third["g / delta"] is None
    assert first["g / bytes"] == "b'\\x00\\xff'" and third["g / bytes"] is None
    assert first["g / objects"] == "{'a': 1}" and fourth["g / objects"] == "(1+2j)"
    assert third["g / category"] is None and second["g / flag"] is None
    assert first["g / period"] == "2024-01"
    assert second["g / text"] is None and third["g / text"] is None
    assert len(fourth["g / text"]) == 1000 and fourth["g / text"].endswith("…")  # a long text, cut


def test_a_wide_frame_is_cut_to_fit_and_says_its_shape(sandbox):
    code = "import numpy as np, pandas as pd\npd.DataFrame(np.random.rand(1000, 1000))"
    table = sandbox.run_code(code).main_result.data
    assert table["total_rows"] == 1000 and table["total_columns"] == 1000
    assert len(table["schema"]["fields"]) == 1 + 200  # the index and the first 200 columns
    assert 100 < len(table["data"]) < 1000  # as many rows as 2 MiB of JSON holds
    assert len(json.dumps(table)) <= 2 << 20
