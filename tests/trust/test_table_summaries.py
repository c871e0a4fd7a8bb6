"""A displayed table, in schema mode: its shape, column types and numeric summaries, no row."""

from analyst.trust.table_summaries import table_summary

RESOURCE = {
    "schema": {
        "fields": [
            {"name": "index", "type": "integer"},
            {"name": "name", "type": "string"},
            {"name": "amount", "type": "number"},
        ],
        "primaryKey": ["index"],
    },
    "data": [
        {"index": 0, "name": "Ann Secret", "amount": 10.0},
        {"index": 1, "name": "Bo Hidden", "amount": 30.0},
    ],
    "total_rows": 5,
    "total_columns": 2,
}


def test_a_table_becomes_its_shape_types_and_numeric_summaries():
    text = table_summary(RESOURCE)
    assert text is not None
    assert "Ann Secret" not in text and "Bo Hidden" not in text
    assert "[a table of 5 rows x 2 columns; its rows are withheld from you]" in text
    assert "name (string)" in text
    assert "amount (number: min 10, max 30, mean 20, sum 40)" in text
    assert "over the first 2 rows" in text


def test_what_is_not_a_data_resource_is_none():
    assert table_summary(None) is None
    assert table_summary({"schema": "x"}) is None
    assert table_summary({"schema": {"fields": []}, "data": "rows"}) is None


def test_bad_cells_are_skipped():
    resource = {**RESOURCE, "data": [{"amount": "1e999"}, {"amount": True}, "row", {"amount": 2}]}
    assert "amount (number: min 2, max 2, mean 2, sum 2)" in (table_summary(resource) or "")
