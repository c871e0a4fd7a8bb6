"""The describer's bounds: a big CSV described from a sample with its rows counted (or, out of
time, estimated, saying so); a report that stays small whatever the file; corrections that
override detection (and a wrong one explained); and a kernel left with no names of it but main
(and json), its modules in a package of their own."""

from __future__ import annotations

import io
import json
import re
import zipfile

import pytest

from tests.files.inside_sandbox.conftest import SOURCE, run_describer

BIG_CSV = """
import os
line = 'date,product,price,qty,comment\\n'
row = '2023-01-{d:02d},Café crème,{p}.56,{q},some words here and there\\n'
block = ''.join(row.format(d=1 + i % 28, p=i % 1000, q=i % 50) for i in range(100_000)).encode()
with open('data/NAME', 'wb') as f:
    f.write(line.encode())
    for _ in range(BLOCKS):
        f.write(block)
print(os.path.getsize('data/NAME'))
"""


def big_csv(name: str, *, blocks: int) -> str:
    """Code that writes data/<name>: a header and ``blocks`` times 100 000 rows."""
    return BIG_CSV.replace("NAME", name).replace("BLOCKS", str(blocks))


@pytest.mark.slow
def test_a_200_mb_csv_is_described_from_a_sample_with_every_row_counted(describe, make_in_sandbox):
    size = int(make_in_sandbox(big_csv("big.csv", blocks=36)))
    assert size > 200 * 10**6
    described = describe("big.csv", limits={"time_budget": 60})
    table = described.table
    assert table["error"] is None
    assert (table["sampled"], table["sample_rows"]) == (True, 10_000)
    assert (table["rows"], table["rows_exact"]) == (3_600_000, True)
    assert table["detected"]["encoding"] == "utf-8"
    assert table["load"] == "pd.read_csv('data/big.csv')"
    assert [c["dtype"] for c in table["columns"]] == ["str", "str", "float64", "int64", "str"]
    assert described.loaded(table) == (3_600_000, 5)
    described.run("del _frame; import os; os.remove('data/big.csv')")


def test_out_of_time_the_rows_are_estimated_from_the_bytes_counted(describe, make_in_sandbox):
    make_in_sandbox(big_csv("estimated.csv", blocks=4))  # 400 000 rows, about 23 MB
    described = describe("estimated.csv", limits={"time_budget": 0.001})
    table = described.table
    assert table["sampled"] is True
    assert table["rows_exact"] is False
    assert 380_000 <= table["rows"] <= 420_000
    assert any(
        note.startswith("rows of data/estimated.csv are estimated") for note in described.report["notes"]
    )
    described.run("import os; os.remove('data/estimated.csv')")


def test_a_byte_that_is_not_utf8_far_beyond_the_sample_is_found_by_the_count(describe):
    ascii_rows = b"".join(b"%d,plain,%d.5\n" % (i, i) for i in range(200_000))  # about 3 MB
    content = b"id,name,value\n" + ascii_rows[:400_000] + b"7,caf\xe9,1.5\n" + ascii_rows[400_000:]
    described = describe("late.csv", content, limits={"sample_bytes": 64 << 10, "sample_rows": 1000})
    table = described.table
    assert table["detected"]["encoding"] == "cp1252"
    assert any("stops being UTF-8" in note for note in described.report["notes"])
    assert described.loaded(table)[1] == 3


def test_an_accented_letter_only_in_the_last_line_is_seen(describe):
    rows = b"".join(b"%d,plain\n" % i for i in range(100_000))
    content = b"id,name\n" + rows + b"100000,na\xefve\n"
    described = describe("tail.csv", content, limits={"sample_bytes": 64 << 10})
    assert described.table["detected"]["encoding"] == "cp1252"
    described.loaded(described.table)
    assert described.value("_frame['name'].iloc[-1]") == "naïve"


def test_quoted_newlines_in_a_big_file_make_the_count_an_estimate(describe):
    rows = b"".join(b'%d,"first line\nsecond line"\n' % i for i in range(50_000))
    described = describe("multiline.csv", b"id,text\n" + rows, limits={"sample_rows": 1000})
    table = described.table
    assert table["rows_exact"] is False
    assert 45_000 <= table["rows"] <= 55_000
    assert any("span several lines" in note for note in described.report["notes"])


def test_a_very_wide_file_keeps_the_report_small(describe):
    header = ",".join(f"column_with_a_long_name_{i:04d}" for i in range(1000))
    row = ",".join("x" * 80 + str(i) for i in range(1000))
    content = (header + "\n" + "\n".join([row] * 30) + "\n").encode()
    report = describe("wide.csv", content).report
    table = report["tables"][0]
    assert (len(table["columns"]), table["column_count"]) == (200, 1000)
    assert len(table["preview"]["columns"]) == 50
    assert all(len(cell) <= 100 for line in table["preview"]["rows"] for cell in line)
    assert all(len(sample) <= 60 for c in table["columns"] for sample in c["samples"])
    assert "data/wide.csv has 1000 columns; only the first 200 are described" in report["notes"]


def test_a_zip_of_many_wide_members_is_shortened_to_stay_under_200_kb(describe):
    header = ",".join(f"c{i}" for i in range(200))
    row = ",".join("y" * 59 + str(i % 10) for i in range(200))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for i in range(20):
            archive.writestr(f"m{i}.csv", f"{header}\n" + f"{row}\n" * 20)
    report = describe("wide.zip", buffer.getvalue(), limits={"time_budget": 300}).report
    assert len(report["tables"]) == 20
    assert len(json.dumps(report, ensure_ascii=False).encode()) < 200_000
    assert "the description was shortened to stay small" in report["notes"]


# --- corrections -----------------------------------------------------------------------------


FRENCH = "produit;prix\ncafé;1,50\nthé;2,25\n".encode("cp1252")


def test_a_delimiter_correction_overrides_the_sniffed_one(describe):
    content = b"a;b,c;d\n1;2,3;4\n5;6,7;8\n"  # sniffed as ';'; the user says ','
    described = describe("which.csv", content, options={"delimiter": ","})
    table = described.table
    assert table["detected"]["delimiter"] == ","
    assert [c["name"] for c in table["columns"]] == ["a;b", "c;d"]
    assert described.loaded(table) == (2, 2)


def test_a_tab_correction_may_be_written_as_backslash_t(describe):
    described = describe("tabbed.txt", b"a\tb\n1\t2\n", options={"delimiter": "\\t"})
    assert described.table["load"] == "pd.read_csv('data/tabbed.txt', sep='\\t')"


def test_an_encoding_correction_overrides_the_detected_one(describe):
    described = describe("latin.csv", FRENCH, options={"encoding": "latin-1"})
    table = described.table
    assert table["detected"]["encoding"] == "latin-1"
    assert "encoding='latin-1'" in table["load"]
    described.loaded(table)
    assert described.value("_frame['produit'].tolist()") == ["café", "thé"]


def test_a_header_row_correction_overrides_detection(describe):
    content = b"north,3\nsouth,5\neast,7\n"  # detected as headerless
    described = describe("corrected.csv", content, options={"header_row": 0})
    table = described.table
    assert table["detected"]["header_row"] == 0
    assert [c["name"] for c in table["columns"]] == ["north", "3"]
    assert described.loaded(table) == (2, 2)
    described = describe("corrected.csv", options={"header_row": 1})
    assert described.table["load"] == "pd.read_csv('data/corrected.csv', skiprows=1)"
    assert described.loaded(described.table) == (1, 2)
    described = describe("corrected.csv", content, options={"header_row": "none"})
    assert described.loaded(described.table) == (3, 2)


def test_a_decimal_correction(describe):
    described = describe("decimal.csv", b"a;b\n1,5;2\n", options={"decimal": "."})
    assert described.table["detected"]["decimal"] == "."
    assert described.table["columns"][0]["dtype"] == "str"


@pytest.mark.parametrize(
    ("options", "error"),
    [
        (
            {"encoding": "utf-8"},
            "the file is not utf-8: byte 0xe9 at offset 16 cannot be decoded "
            "(leave the encoding empty to detect it)",
        ),
        (
            {"encoding": "klingon"},
            "'klingon' is not an encoding Python knows (try utf-8, cp1252, latin-1 or utf-16)",
        ),
        ({"delimiter": ";;"}, "';;' cannot be a delimiter: give one character such as , ; | or tab"),
        ({"decimal": "x"}, "'x' cannot be a decimal mark: give . or ,"),
        ({"header_row": "first"}, "header row 'first' is not a row number (or \"none\")"),
        ({"header_row": 99}, "header row 99 is beyond the rows read (3)"),
    ],
)
def test_a_wrong_correction_is_the_tables_error_not_a_crash(describe, options, error):
    report = describe("french.csv", FRENCH, options=options).report
    assert report["tables"][0]["error"] == error
    assert report["error"] == error  # a reason: the page and the model's summary frame it once


# --- the kernel it runs in --------------------------------------------------------------------------


def test_it_binds_only_main_and_json_and_prints_one_line(box):
    box.files.write("data/names.csv", b"a,b\n1,2\n")
    context = box.create_code_context()
    try:
        before = set(
            context.run_code("print(sorted(globals()))").stdout.strip()[1:-1].replace("'", "").split(", ")
        )
        described = run_describer(context, {"path": "data/names.csv", "options": {}, "limits": {}})
        assert described.table["rows"] == 1
        after = set(
            context.run_code("print(sorted(globals()))").stdout.strip()[1:-1].replace("'", "").split(", ")
        )
        modules = described.value("sorted(m for m in __import__('sys').modules if m.startswith('_analyst'))")
    finally:
        context.close()
    history = re.compile(r"_+|_i+|_i?\d+")  # IPython's own: the inputs and outputs of the cells run
    added = {name for name in after - before if not history.fullmatch(name)}
    assert added == {"json", "main"}, added
    assert {"pd", "np", "plt"} <= before
    assert "_analyst_describe.describe" in modules, modules


def test_it_never_raises_even_for_a_request_it_cannot_use(box):
    context = box.create_code_context()
    try:
        execution = context.run_code(f"{SOURCE}\nmain(json.loads('[1, 2]'))")
    finally:
        context.close()
    assert execution.error is None
    report = json.loads(execution.stdout)
    assert report["error"].startswith("the file could not be described:")
