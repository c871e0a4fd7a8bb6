"""The describer runs beside model-written code, which can print anything in its place: its
report is kept to known fields, types and sizes before the panel or the model sees it."""

from __future__ import annotations

import json

import pytest

from analyst.files.reports import MAX_COLUMNS, MAX_TABLES, checked, summary

GOOD_TABLE = {
    "path": "data/ventes.csv",
    "sheet": None,
    "rows": 3,
    "rows_exact": True,
    "sampled": False,
    "sample_rows": None,
    "column_count": 2,
    "columns": [
        {"name": "prix", "dtype": "float64", "nulls": 1, "samples": ["1.5", "2.25"]},
        {"name": "région", "dtype": "str", "nulls": 0, "samples": ["Bretagne"]},
    ],
    "detected": {"encoding": "cp1252", "delimiter": ";", "decimal": ",", "header_row": 0},
    "load": "pd.read_csv('data/ventes.csv', sep=';', decimal=',', encoding='cp1252')",
    "preview": {"columns": ["prix", "région"], "rows": [["1.5", "Bretagne"]]},
    "error": None,
}


def report(**fields) -> str:
    body = {
        "format": "csv",
        "compression": None,
        "sheets": None,
        "tables": [GOOD_TABLE],
        "notes": [],
        "error": None,
    }
    return "library chatter\n" + json.dumps({**body, **fields})


def test_a_good_report_is_kept_and_told_to_the_model():
    description = checked(report())
    assert description["tables"][0]["detected"] == GOOD_TABLE["detected"]
    text = summary("data/ventes.csv", description)
    assert text.startswith("data/ventes.csv (text table): 3 rows x 2 columns.")
    assert f"Load it with: {GOOD_TABLE['load']}" in text
    assert "prix (float64, 1 empty) e.g. 1.5, 2.25" in text


@pytest.mark.parametrize(
    "output",
    ["", "not json", "[1, 2]", '{"tables": "all of them"}', "x" * (2 << 20)],
    ids=["nothing", "text", "a list", "tables not a list", "too large"],
)
def test_a_report_that_is_not_one_becomes_an_error_not_a_crash(output):
    description = checked(output)
    assert description["tables"] == [] and (description["error"] or output.startswith("{"))


def test_unknown_fields_wrong_types_and_oversized_values_are_cut_down():
    forged = {
        **GOOD_TABLE,
        "rows": -5,
        "rows_exact": "yes",
        "columns": [{"name": "n" * 150, "dtype": ["x"], "nulls": True, "samples": "abc"}]
        * (MAX_COLUMNS + 50),
        "detected": {"encoding": "e" * 500, "delimiter": {"a": 1}, "password": "hunter2"},
        "load": "os.system('rm -rf /')" + "#" * 1000,
        "preview": {"columns": ["a"] * 60, "rows": [["v" * 120] * 60] * 30},
        "exfiltrate": "secret",
    }
    description = checked(report(tables=[forged], format="exe", notes=["n\x1b[2J"] * 100))
    (table,) = description["tables"]
    assert description["format"] is None
    assert "exfiltrate" not in table and "password" not in table["detected"]
    assert table["rows"] is None and table["rows_exact"] is True  # only False says estimated
    assert len(table["columns"]) == MAX_COLUMNS
    assert table["columns"][0] == {"name": "n" * 100, "dtype": "", "nulls": None, "samples": []}
    assert len(table["detected"]["encoding"]) == 40 and table["detected"]["delimiter"] == ""
    assert len(table["load"]) == 500
    assert len(table["preview"]["rows"]) == 20 and all(len(row) == 50 for row in table["preview"]["rows"])
    assert all(len(cell) <= 100 for row in table["preview"]["rows"] for cell in row)
    assert description["notes"][0] == "n\ufffd[2J" and len(description["notes"]) == 20


def test_at_most_so_many_tables_are_kept():
    description = checked(report(tables=[GOOD_TABLE] * (MAX_TABLES + 10)))
    assert len(description["tables"]) == MAX_TABLES
