"""The describer reads delimited text in any common shape, and parquet, Feather and JSON, each
with a load call that gives the frame it describes (run in the same kernel)."""

from __future__ import annotations

import gzip

import pytest

from analyst.files.reports import summary
from tests.files.inside_sandbox.conftest import fetched

FRENCH = (
    "produit;prix;quantité;région\n"
    "café;1,50;1.200;Île-de-France\n"
    "thé;2,25;300;Provence\n"
    "crème brûlée;1.234,75;2.450;Bretagne\n"
).encode("cp1252")
CITIES = "city,population,area\nZürich,421878,87.88\nKöln,1083498,405.02\nSão Paulo,12325232,1521.11\n"


def test_a_french_excel_export_cp1252_semicolons_decimal_commas_and_thousands_dots(describe):
    described = describe("ventes.csv", FRENCH)
    table = described.table
    assert table["error"] is None
    assert table["detected"] == {
        "encoding": "cp1252",
        "delimiter": ";",
        "decimal": ",",
        "thousands": ".",
        "header_row": 0,
    }
    assert (
        table["load"]
        == "pd.read_csv('data/ventes.csv', sep=';', decimal=',', thousands='.', encoding='cp1252')"
    )
    assert [(c["name"], c["dtype"]) for c in table["columns"]] == [
        ("produit", "str"),
        ("prix", "float64"),
        ("quantité", "int64"),
        ("région", "str"),
    ]
    assert (table["rows"], table["rows_exact"], table["sampled"]) == (3, True, False)
    assert described.loaded(table) == (3, 4)
    assert {c["name"]: c["dtype"] for c in table["columns"]} == described.dtypes()
    assert described.value("_frame['prix'].tolist()") == [1.5, 2.25, 1234.75]
    assert described.value("_frame['quantité'].tolist()") == [1200, 300, 2450]
    assert table["preview"]["rows"][0] == ["café", "1.5", "1200", "Île-de-France"]


def test_a_real_french_export_from_frictionless_is_cp1252_with_semicolons(describe):
    described = describe("irve.txt", fetched("issue-647.csv.txt"))
    table = described.table
    assert table["detected"]["encoding"] == "cp1252"
    assert table["detected"]["delimiter"] == ";"
    assert "accessibilité" in [c["name"] for c in table["columns"]]
    assert described.loaded(table) == (table["rows"], len(table["columns"])) == (882, 17)


def test_signs_only_cp1252_has_do_not_make_it_a_mac_code_page(describe):
    """charset-normalizer drops cp1252 for this (n°, €, ’ read as odd) and offers mac_latin2,
    which turns "Cœur de bœuf" into "Cúur de búuf": the words decide (the browser test's file)."""
    rows = "".join(f"Cœur de bœuf n°{i};légumes;{i},50;Île-de-France;l’été, 5 €\n" for i in range(1, 41))
    described = describe(
        "marché.csv", ("produit;catégorie;prix;région;commentaire\n" + rows).encode("cp1252")
    )
    assert described.table["detected"]["encoding"] == "cp1252"
    assert described.table["preview"]["rows"][0][0] == "Cœur de bœuf n°1"
    assert described.loaded(described.table) == (40, 5)
    assert described.value("_frame['commentaire'].iloc[0]") == "l’été, 5 €"


def test_a_tiny_latin1_file_is_read_as_cp1252(describe):
    described = describe("latin1.csv", fetched("latin1.csv"))
    assert described.table["detected"]["encoding"] == "cp1252"
    assert described.loaded(described.table) == (2, 2)
    assert described.value("_frame['name'].tolist()") == ["english", "©"]


def test_utf8_with_a_bom_loses_the_bom_from_the_first_column_name(describe):
    described = describe("bom.csv", CITIES.encode("utf-8-sig"))
    table = described.table
    assert table["detected"]["encoding"] == "utf-8-sig"
    assert table["columns"][0]["name"] == "city"
    assert described.loaded(table) == (3, 3)
    assert described.value("list(_frame.columns)") == ["city", "population", "area"]


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be"])
def test_utf16_with_a_bom_either_way_round(describe, codec):
    bom = {"utf-16-le": b"\xff\xfe", "utf-16-be": b"\xfe\xff"}[codec]
    described = describe(f"cities-{codec}.tsv", bom + CITIES.replace(",", "\t").encode(codec))
    table = described.table
    assert table["detected"]["encoding"] == "utf-16"
    assert table["detected"]["delimiter"] == "\t"
    assert table["load"] == f"pd.read_csv('data/cities-{codec}.tsv', sep='\\t', encoding='utf-16')"
    assert described.loaded(table) == (3, 3)
    assert described.value("_frame['city'].tolist()") == ["Zürich", "Köln", "São Paulo"]


@pytest.mark.parametrize(("name", "delimiter"), [("pipes.txt", "|"), ("tabs.tsv", "\t"), ("semis.csv", ";")])
def test_the_delimiter_is_sniffed(describe, name, delimiter):
    described = describe(name, CITIES.replace(",", delimiter).encode())
    table = described.table
    assert table["detected"]["delimiter"] == delimiter
    assert [c["name"] for c in table["columns"]] == ["city", "population", "area"]
    assert described.loaded(table) == (3, 3)


def test_thousands_commas_with_decimal_points(describe):
    content = b'name,amount\nalpha,"1,234.56"\nbeta,"12,000.00"\ngamma,3.5\n'
    described = describe("amounts.csv", content)
    table = described.table
    assert (table["detected"]["decimal"], table["detected"]["thousands"]) == (".", ",")
    assert table["load"] == "pd.read_csv('data/amounts.csv', thousands=',')"
    described.loaded(table)
    assert described.value("_frame['amount'].tolist()") == [1234.56, 12000.0, 3.5]


def test_a_title_line_and_blank_lines_before_the_header(describe):
    content = b"Sales report 2023\n\n\nregion,units,price\nnorth,3,2.5\nsouth,5,1.25\n"
    described = describe("report.csv", content)
    table = described.table
    assert table["detected"]["header_row"] == 3
    assert table["load"] == "pd.read_csv('data/report.csv', skiprows=3)"
    assert described.loaded(table) == (2, 3)
    assert described.value("list(_frame.columns)") == ["region", "units", "price"]


def test_a_comment_line_before_the_header_in_a_real_file(describe):
    described = describe("matrix.csv", fetched("matrix-with-comment.csv"))
    table = described.table
    assert table["detected"]["header_row"] == 1
    assert [c["name"] for c in table["columns"]] == ["f1", "f2", "f3", "f4"]
    assert described.loaded(table) == (4, 4)


def test_a_file_whose_first_line_is_data_has_no_header(describe):
    described = describe("headless.csv", b"north,3,2.5\nsouth,5,1.25\neast,7,4.0\n")
    table = described.table
    assert table["detected"]["header_row"] == "none"
    assert table["load"] == "pd.read_csv('data/headless.csv', header=None)"
    assert described.loaded(table) == (3, 3)
    assert described.value("_frame[1].tolist()") == [3, 5, 7]


def test_years_over_columns_of_figures_are_a_header(describe):
    content = b"country,2019,2020,2021\nFrance,1.5,2.5,3.5\nItaly,1.25,2.25,3.25\n"
    described = describe("years.csv", content)
    assert described.table["detected"]["header_row"] == 0
    assert described.loaded(described.table) == (2, 4)


def test_quoted_values_holding_delimiters_and_newlines(describe):
    content = b'id,comment\n1,"one, two"\n2,"line one\nline two"\n3,plain\n'
    described = describe("quoted.csv", content)
    table = described.table
    assert table["detected"]["delimiter"] == ","
    assert (table["rows"], table["rows_exact"]) == (3, True)  # read whole: counted by pandas
    assert described.loaded(table) == (3, 2)


def test_lines_with_too_many_fields_are_skipped_and_that_is_said(describe):
    content = b"a,b,c\n1,2,3\n4,5,6,7\n8,9,10\n"
    described = describe("ragged.csv", content)
    table = described.table
    assert table["error"] is None
    assert "on_bad_lines='skip'" in table["load"]
    assert any("line 3" in note and "skipped" in note for note in described.report["notes"])
    assert described.loaded(table) == (2, 3)


def test_a_gzip_csv_is_read_by_pandas_directly(describe):
    described = describe("cities.csv.gz", gzip.compress(CITIES.encode()))
    table = described.table
    assert described.report["compression"] == "gzip"
    assert table["load"] == "pd.read_csv('data/cities.csv.gz')"
    assert described.loaded(table) == (3, 3)


def test_gzip_content_under_a_plain_csv_name_says_the_compression(describe):
    described = describe("implicit-gz.csv", fetched("implicit-gz.csv"))  # from frictionless
    table = described.table
    assert table["load"] == "pd.read_csv('data/implicit-gz.csv', compression='gzip')"
    assert any("gzip-compressed" in note for note in described.report["notes"])
    assert described.loaded(table) == (table["rows"], len(table["columns"])) == (2, 2)


def test_a_german_file_with_quotes_and_trailing_semicolons(describe):
    described = describe("pegel.csv", fetched("issue-1138.csv"))  # from frictionless
    table = described.table
    assert table["detected"]["delimiter"] == ";"
    assert table["columns"][0]["name"] == "Zeit [MEZ]"
    assert described.loaded(table) == (table["rows"], len(table["columns"]))


# --- columnar and JSON ----------------------------------------------------------------------


FRAME = (
    "frame = pd.DataFrame({'city': ['Zürich', 'Köln', None, 'Lyon'] * 50, 'n': range(200),"
    " 'x': [1.5, None, 2.5, 3.0] * 50, 'when': pd.date_range('2024-01-01', periods=200, freq='D')})\n"
)


def test_parquet_rows_come_from_its_metadata_and_dtypes_from_a_sample(describe, make_in_sandbox):
    make_in_sandbox(FRAME + "frame.to_parquet('data/frame.parquet', row_group_size=50)")
    described = describe("frame.parquet", limits={"sample_rows": 60})
    table = described.table
    assert described.report["format"] == "parquet"
    assert (table["rows"], table["rows_exact"], table["sampled"]) == (200, True, True)
    assert table["sample_rows"] == 60
    assert table["load"] == "pd.read_parquet('data/frame.parquet')"
    assert described.loaded(table) == (200, 4)
    assert {c["name"]: c["dtype"] for c in table["columns"]} == described.dtypes()
    assert [c["dtype"] for c in table["columns"]][:3] == ["str", "int64", "float64"]
    assert table["columns"][2]["nulls"] == 15  # one in four of the first 60


@pytest.mark.parametrize("name", ["frame.feather", "frame.arrow"])
def test_feather_and_arrow_files(describe, make_in_sandbox, name):
    make_in_sandbox(FRAME + f"frame.to_feather('data/{name}')")
    described = describe(name)
    table = described.table
    assert described.report["format"] == "feather"
    assert (table["rows"], len(table["columns"])) == (200, 4)
    assert table["load"] == f"pd.read_feather('data/{name}')"
    assert described.loaded(table) == (200, 4)
    assert {c["name"]: c["dtype"] for c in table["columns"]} == described.dtypes()


def test_an_arrow_stream_says_how_to_read_it(describe, make_in_sandbox):
    make_in_sandbox(
        FRAME + "import pyarrow as pa\n"
        "table = pa.Table.from_pandas(frame)\n"
        "with pa.OSFile('data/stream.arrow', 'wb') as sink:\n"
        "    with pa.ipc.new_stream(sink, table.schema) as writer:\n"
        "        writer.write_table(table)\n"
    )
    described = describe("stream.arrow")
    assert described.loaded(described.table) == (200, 4)


@pytest.mark.parametrize(
    ("name", "write", "load"),
    [
        (
            "records.json",
            "frame.to_json('data/records.json', orient='records')",
            "pd.read_json('data/records.json')",
        ),
        ("columns.json", "frame.to_json('data/columns.json')", "pd.read_json('data/columns.json')"),
        (
            "split.json",
            "frame.to_json('data/split.json', orient='split')",
            "pd.read_json('data/split.json', orient='split')",
        ),
        (
            "lines.jsonl",
            "frame.to_json('data/lines.jsonl', orient='records', lines=True)",
            "pd.read_json('data/lines.jsonl', lines=True)",
        ),
        (
            "lines.ndjson.gz",
            "frame.to_json('data/lines.ndjson.gz', orient='records', lines=True, compression='gzip')",
            "pd.read_json('data/lines.ndjson.gz', lines=True)",
        ),
    ],
)
def test_json_of_each_orientation_and_json_lines(describe, make_in_sandbox, name, write, load):
    make_in_sandbox(FRAME + write)
    described = describe(name)
    table = described.table
    assert table["error"] is None, table
    assert table["load"] == load
    assert (table["rows"], len(table["columns"])) == (200, 4)
    assert described.loaded(table) == (200, 4)
    assert {c["name"]: c["dtype"] for c in table["columns"]} == described.dtypes()


def test_a_damaged_parquet_file_is_said_to_be_damaged(describe, make_in_sandbox):
    make_in_sandbox(
        FRAME + "frame.to_parquet('data/whole.parquet')\n"
        "data = open('data/whole.parquet', 'rb').read()\n"
        "open('data/cut.parquet', 'wb').write(data[: len(data) // 2])\n"
    )
    report = describe("cut.parquet").report
    assert report["error"].startswith("it is a damaged or incomplete parquet file")
    # The model's summary (and the page's notice) say "could not be read" once, not once per layer.
    told = summary("data/cut.parquet", report)
    assert told.count("could not be read") == 1 and told.count("data/cut.parquet") == 1, told
    assert report["tables"][0]["load"] is None


# --- content that is not what its name says -----------------------------------------------------------


def test_a_csv_named_parquet_is_refused_naming_what_it_holds(describe):
    report = describe("fake.parquet", CITIES.encode()).report
    assert report["error"] == "data/fake.parquet is not a parquet file: it holds CSV text"
    assert report["tables"] == []


def test_an_xlsx_named_csv_is_refused_naming_what_it_is(describe):
    report = describe("book.csv", fetched("example.xlsx")).report
    assert report["error"] == "data/book.csv is not a CSV file: it looks like an Excel workbook (.xlsx)"


def test_a_parquet_file_named_json_is_refused(describe, make_in_sandbox):
    make_in_sandbox(FRAME + "frame.to_parquet('data/really-parquet.json')")
    report = describe("really-parquet.json").report
    assert report["error"] == "data/really-parquet.json is not a JSON file: it looks like a parquet file"


def test_a_pdf_named_csv_is_refused(describe):
    report = describe("scan.csv", b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<<>>\nendobj\n").report
    assert report["error"] == "data/scan.csv is not a CSV file: it looks like a PDF document"


def test_an_ods_named_xlsx_says_to_save_it_as_xlsx(describe):
    report = describe("calc.xlsx", fetched("sample.ods")).report  # from xlrd's samples
    assert report["error"] == (
        "data/calc.xlsx is not an Excel workbook: it looks like an OpenDocument spreadsheet (.ods); "
        "save it as .xlsx and upload it again"
    )


def test_an_empty_file_is_said_to_be_empty(describe):
    assert describe("empty.csv", b"").report["error"] == "data/empty.csv is empty"


def test_a_missing_file_is_said_to_be_missing(describe):
    assert describe("never-written.csv").report["error"] == "data/never-written.csv is not in the sandbox"


def test_records_wrapped_in_an_object_are_found_under_their_key(describe):
    content = b'{"page": 1, "data": [{"id": 1, "who": {"name": "a"}}, {"id": 2, "who": {"name": "b"}}]}'
    described = describe("api.json", content)
    table = described.table
    assert (
        table["load"]
        == "pd.json_normalize(__import__('json').load(open('data/api.json', encoding='utf-8'))['data'])"
    )
    assert "the records of data/api.json are under its key 'data'" in described.report["notes"]
    assert described.loaded(table) == (2, 2)
    assert described.value("list(_frame.columns)") == ["id", "who.name"]


def test_rows_keyed_by_index_are_read_as_rows(describe, make_in_sandbox):
    make_in_sandbox(FRAME + "frame.to_json('data/index.json', orient='index')")
    described = describe("index.json")
    assert described.table["load"] == "pd.read_json('data/index.json', orient='index')"
    assert described.loaded(described.table) == (200, 4)


def test_a_json_list_too_large_to_parse_whole_is_sampled_and_estimated(describe, make_in_sandbox):
    make_in_sandbox(
        "n = 2_000_000  # ids of one width: the estimate scales the head's bytes per record\n"
        "frame = pd.DataFrame({'a': range(10**6, 10**6 + n), 'b': ['some text value'] * n})\n"
        "frame.to_json('data/huge.json', orient='records')\n"
    )
    described = describe("huge.json", limits={"sample_rows": 1000})
    table = described.table
    assert (table["sampled"], table["sample_rows"], table["rows_exact"]) == (True, 1000, False)
    assert 1_800_000 <= table["rows"] <= 2_200_000
    assert [c["name"] for c in table["columns"]] == ["a", "b"]
    assert any(note.startswith("rows of data/huge.json are estimated") for note in described.report["notes"])
    described.run("import os; os.remove('data/huge.json')")


def test_a_name_with_quotes_and_spaces_still_makes_a_load_call_that_works(describe):
    described = describe('l\'été "2023".csv', CITIES.encode())
    table = described.table
    assert table["path"] == 'data/l\'été "2023".csv'
    assert described.loaded(table) == (3, 3)
