"""The describer reads every sheet of a workbook (.xlsx by openpyxl, .xls by xlrd), bounded on a
workbook of many large sheets, and says plainly when one is password-protected or damaged."""

from __future__ import annotations

from tests.files.inside_sandbox.conftest import fetched

ECONOMY = """
import openpyxl
book = openpyxl.Workbook()
employment = book.active
employment.title = 'employment'
employment.append(['region', 'year', 'employed', 'rate'])
for i in range(40):
    employment.append([f'region {i % 7}', 2000 + i, 1000 + i * 13, 0.5 + i / 100])
gdp = book.create_sheet('gdp')
gdp['A1'] = 'GDP by country, in billions'  # a title, a blank row, then the table
gdp.append([])
gdp.append(['country', 'gdp', 'when'])
import datetime
for i in range(12):
    gdp.append([f'country {i}', 100.5 * i, datetime.date(2020, 1 + i, 1)])
book.save('data/economy.xlsx')
"""


def test_every_sheet_of_an_xlsx_with_a_load_call_each(describe, make_in_sandbox):
    make_in_sandbox(ECONOMY)
    described = describe("economy.xlsx")
    report = described.report
    assert (report["format"], report["sheets"], report["error"]) == ("excel", ["employment", "gdp"], None)
    employment, gdp = report["tables"]
    assert employment["sheet"] == "employment"
    assert employment["load"] == "pd.read_excel('data/economy.xlsx', sheet_name='employment')"
    assert (employment["rows"], employment["rows_exact"], employment["sampled"]) == (40, True, False)
    assert [c["name"] for c in employment["columns"]] == ["region", "year", "employed", "rate"]
    assert described.loaded(employment) == (40, 4)
    assert {c["name"]: c["dtype"] for c in employment["columns"]} == described.dtypes()
    assert gdp["detected"] == {"sheet": "gdp", "header_row": 2}
    assert gdp["load"] == "pd.read_excel('data/economy.xlsx', sheet_name='gdp', header=2)"
    assert described.loaded(gdp) == (12, 3)
    assert described.dtypes() == {"country": "str", "gdp": "float64", "when": "datetime64[us]"}
    assert {c["name"]: c["dtype"] for c in gdp["columns"]} == described.dtypes()


def test_an_old_xls_from_xlrds_samples(describe):
    described = describe("profiles.xls", fetched("profiles.xls"))
    report = described.report
    assert report["format"] == "excel" and report["error"] is None
    assert report["sheets"] == [
        "PROFILEDEF",
        "AXISDEF",
        "TRAVERSALCHAINAGE",
        "AXISDATUMLEVELS",
        "PROFILELEVELS",
    ]
    assert [t["sheet"] for t in report["tables"]] == report["sheets"]
    for table in report["tables"]:
        assert table["error"] is None, table
        assert described.loaded(table) == (table["rows"], len(table["columns"]))


def test_an_xls_of_ragged_sheets_some_empty(describe):
    described = describe("ragged.xls", fetched("ragged.xls"))
    report = described.report
    assert [t["rows"] for t in report["tables"]] == [4, 0, 0]
    assert sum("is empty" in note for note in report["notes"]) == 2
    assert described.loaded(report["tables"][0]) == (4, 4)


def test_a_workbook_of_many_large_sheets_is_described_within_bounds(describe, make_in_sandbox):
    make_in_sandbox(
        "import openpyxl\n"
        "book = openpyxl.Workbook(write_only=True)\n"
        "for s in range(30):\n"
        "    sheet = book.create_sheet(f'month {s}')\n"
        "    sheet.append(['day', 'sales', 'note'])\n"
        "    for i in range(3000):\n"
        "        sheet.append([i, i * 1.5, 'x' * (i % 5)])\n"
        "book.save('data/many.xlsx')\n"
    )
    described = describe("many.xlsx", limits={"max_sheets": 4, "sample_rows": 500})
    report = described.report
    assert len(report["sheets"]) == 30
    assert [t["sheet"] for t in report["tables"]] == ["month 0", "month 1", "month 2", "month 3"]
    assert "only the first 4 of 30 sheets were described" in report["notes"]
    for table in report["tables"]:
        assert (table["sampled"], table["sample_rows"], table["rows_exact"]) == (True, 500, False)
        assert table["rows"] == 3000
    # openpyxl's write-only mode records no dimension: the rows are the last row in its XML
    assert any("the last row in the sheet's file" in note for note in report["notes"])
    assert described.loaded(report["tables"][3]) == (3000, 3)


def test_a_chosen_sheet_comes_first_and_a_missing_one_is_named(describe, make_in_sandbox):
    make_in_sandbox(ECONOMY)
    report = describe("economy.xlsx", options={"sheet": "gdp"}).report
    assert [t["sheet"] for t in report["tables"]] == ["gdp", "employment"]
    report = describe("economy.xlsx", options={"sheet": "prices"}).report
    assert report["error"] == "data/economy.xlsx has no sheet 'prices'; its sheets are 'employment', 'gdp'"
    assert report["sheets"] == ["employment", "gdp"]


def test_a_header_row_correction_applies_to_the_sheet(describe, make_in_sandbox):
    make_in_sandbox(ECONOMY)
    described = describe("economy.xlsx", options={"sheet": "gdp", "header_row": "none"})
    gdp = described.report["tables"][0]
    assert gdp["detected"]["header_row"] == "none"
    assert gdp["load"] == "pd.read_excel('data/economy.xlsx', sheet_name='gdp', header=None, skiprows=2)"
    assert described.loaded(gdp) == (13, 3)


def test_a_password_protected_xlsx_says_to_save_it_without_a_password(describe):
    report = describe("secret.xlsx", fetched("example_password.xlsx")).report  # from msoffcrypto-tool
    assert (
        report["error"]
        == "the workbook is password-protected; save it without a password and upload it again"
    )
    assert report["tables"] == []


def test_a_password_protected_xls_too(describe):
    report = describe("secret.xls", fetched("rc4cryptoapi_password.xls")).report  # from msoffcrypto-tool
    assert (
        report["error"]
        == "the workbook is password-protected; save it without a password and upload it again"
    )


def test_a_damaged_xlsx_is_said_to_be_damaged(describe):
    whole = fetched("issue-1024.xlsx")
    report = describe("cut.xlsx", whole[: len(whole) // 2]).report
    assert report["error"] == (
        "data/cut.xlsx is a damaged Excel workbook: it is cut short or corrupted; "
        "save it again and upload it again"
    )


def test_a_zip_that_is_not_a_workbook_named_xlsx(describe, make_in_sandbox):
    make_in_sandbox(
        "import zipfile\n"
        "with zipfile.ZipFile('data/notes.xlsx', 'w') as z:\n"
        "    z.writestr('notes.txt', 'hello')\n"
    )
    report = describe("notes.xlsx").report
    assert report["error"] == "data/notes.xlsx is not an Excel workbook: it looks like a zip archive"


def test_real_workbooks_from_frictionless(describe):
    described = describe("issue-1024.xlsx", fetched("issue-1024.xlsx"))
    table = described.table
    assert table["error"] is None
    assert described.loaded(table) == (table["rows"], len(table["columns"]))
    described = describe("cast.xls", fetched("cast-int-to-string-issue-1251.xls"))
    assert described.loaded(described.table) == (described.table["rows"], len(described.table["columns"]))


def test_an_xlsm_is_read_like_an_xlsx(describe, make_in_sandbox):
    make_in_sandbox("pd.DataFrame({'a': [1, 2], 'b': ['x', 'y']}).to_excel('data/macros.xlsm', index=False)")
    described = describe("macros.xlsm")
    assert described.report["format"] == "excel"
    assert described.table["load"] == "pd.read_excel('data/macros.xlsm')"
    assert described.loaded(described.table) == (2, 2)


def test_a_large_sheet_with_a_recorded_dimension_is_counted_from_it(describe, make_in_sandbox):
    make_in_sandbox(
        "import openpyxl\n"
        "book = openpyxl.Workbook()\n"
        "sheet = book.active\n"
        "sheet.append(['day', 'sales'])\n"
        "for i in range(2500):\n"
        "    sheet.append([i, i * 2.5])\n"
        "book.save('data/dimensioned.xlsx')\n"
    )
    described = describe("dimensioned.xlsx", limits={"sample_rows": 200})
    table = described.table
    assert (table["rows"], table["rows_exact"], table["sampled"], table["sample_rows"]) == (
        2500,
        False,
        True,
        200,
    )
    assert any("from the sheet's recorded size" in note for note in described.report["notes"])
    assert described.loaded(table) == (2500, 2)
