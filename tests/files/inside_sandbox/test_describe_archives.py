"""A zip's members are unpacked to data/<zip stem>/ and each described as its own table; a zip
bomb, a member that would land outside its folder, a link, or too many members is refused."""

from __future__ import annotations

import io
import stat
import zipfile

import pytest

from tests.files.inside_sandbox.conftest import fetched

SALES = b"region,units,price\nnorth,3,2.5\nsouth,5,1.25\neast,7,4.0\n"


def zipped(members: dict[str, bytes], compression: int = zipfile.ZIP_DEFLATED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression) as archive:
        for name, content in members.items():
            archive.writestr(name, content)
    return buffer.getvalue()


def listing(box, folder: str) -> list[str]:
    try:
        return sorted(entry.name for entry in box.files.list(folder))
    except Exception:  # noqa: BLE001 - a folder that is not there lists nothing
        return []


def test_a_zip_of_three_csvs_gives_three_tables_unpacked_beside_it(describe, box):
    content = zipped(
        {
            "2023/north.csv": SALES,
            "2023/south.csv": SALES.replace(b"north", b"NORTH"),
            "summary.tsv": SALES.replace(b",", b"\t"),
        }
    )
    described = describe("sales.zip", content)
    report = described.report
    assert (report["format"], report["compression"], report["error"]) == ("zip", "zip", None)
    assert [t["path"] for t in report["tables"]] == [
        "data/sales/2023/north.csv",
        "data/sales/2023/south.csv",
        "data/sales/summary.tsv",
    ]
    assert report["tables"][2]["load"] == "pd.read_csv('data/sales/summary.tsv', sep='\\t')"
    for table in report["tables"]:
        assert described.loaded(table) == (3, 3)
    assert listing(box, "data/sales") == ["2023", "summary.tsv"]
    assert listing(box, "data/sales/2023") == ["north.csv", "south.csv"]


def test_describing_a_zip_again_unpacks_it_again(describe, box):
    describe("again.zip", zipped({"a.csv": SALES}))
    box.files.write("data/again/a.csv", b"spoiled")
    described = describe("again.zip")
    assert described.loaded(described.table) == (3, 3)


def test_each_kind_of_member_is_read_as_its_own_kind(describe, make_in_sandbox):
    make_in_sandbox(
        "import zipfile, io\n"
        "frame = pd.DataFrame({'a': range(5), 'b': list('vwxyz')})\n"
        "book = io.BytesIO(); frame.to_excel(book, index=False, sheet_name='first')\n"
        "table = io.BytesIO(); frame.to_parquet(table)\n"
        "with zipfile.ZipFile('data/mixed.zip', 'w') as z:\n"
        "    z.writestr('book.xlsx', book.getvalue())\n"
        "    z.writestr('table.parquet', table.getvalue())\n"
        "    z.writestr('inner.zip', b'PK\\x05\\x06' + bytes(18))\n"
        "    z.writestr('README.md', 'about these files')\n"
        "    z.writestr('__MACOSX/._book.xlsx', 'resource fork')\n"
    )
    described = describe("mixed.zip")
    report = described.report
    assert [(t["path"], t["sheet"]) for t in report["tables"]] == [
        ("data/mixed/book.xlsx", "first"),
        ("data/mixed/table.parquet", None),
    ]
    for table in report["tables"]:
        assert described.loaded(table) == (5, 2)
    assert (
        "data/mixed/inner.zip is a zip inside the zip; it is not unpacked further (upload it on its own)"
        in report["notes"]
    )
    assert "data/mixed/README.md was unpacked but is not a kind of file read as a table" in report["notes"]


def test_a_member_that_is_not_what_its_name_says_is_that_tables_error(describe):
    described = describe("odd.zip", zipped({"good.csv": SALES, "bad.parquet": SALES}))
    good, bad = described.report["tables"]
    assert good["error"] is None
    assert bad["error"] == "data/odd/bad.parquet is not a parquet file: it holds CSV text"
    assert described.report["error"] is None


def test_a_real_zipped_csv_from_frictionless(describe):
    described = describe("explicit.csv.zip", fetched("explicit.csv.zip"))
    table = described.table
    assert table["path"] == "data/explicit.csv/table.csv"
    assert described.loaded(table) == (2, 2)


def test_a_zip_bomb_is_refused_by_its_ratio_and_nothing_is_unpacked(describe, box):
    bomb = zipped({"zeros.csv": b"0" * (64 << 20)})  # 64 MB of one byte packs about 1000 to 1
    assert len(bomb) < 128 << 10
    report = describe("bomb.zip", bomb).report
    assert report["error"] == (
        "data/bomb.zip is refused as a likely zip bomb: "
        "'zeros.csv' would unpack to 1029 times its packed size "
        "(the limit is 200)"
    )
    assert report["tables"] == []
    assert "bomb" not in listing(box, "data")


def test_a_zip_too_large_unpacked_is_refused_by_its_size(describe, box):
    members = {f"part{i}.csv": bytes(range(256)) * 4096 for i in range(3)}  # 1 MB each, barely packs
    report = describe("large.zip", zipped(members), limits={"max_unpacked_bytes": 2 << 20}).report
    assert (
        report["error"]
        == "data/large.zip is refused: it would unpack to 3.0 MB, more than the limit of 2.0 MB"
    )
    assert "large" not in listing(box, "data")


def test_a_zip_whose_header_lies_about_its_size_is_stopped_while_unpacking(describe, box):
    honest = zipped({"small.csv": SALES * 1000}, zipfile.ZIP_STORED)
    # The central directory says 10 bytes; the data is 37 KB.
    lying = honest.replace((len(SALES) * 1000).to_bytes(4, "little"), (10).to_bytes(4, "little"))
    report = describe("liar.zip", lying).report
    assert report["error"].startswith("data/liar.zip is damaged: its member 'small.csv' cannot be unpacked")
    assert report["tables"] == []
    assert "liar" not in listing(box, "data")  # what was unpacked before the failure is removed


@pytest.mark.parametrize(
    "name", ["../../escaped.csv", "/etc/escaped.csv", "a/../../escaped.csv", "..\\..\\escaped.csv"]
)
def test_a_member_that_would_land_outside_its_folder_is_refused(describe, box, name):
    report = describe("slip.zip", zipped({"fine.csv": SALES, name: SALES})).report
    assert (
        report["error"]
        == f"data/slip.zip is refused: its member {name!r} would be unpacked outside its folder"
    )
    assert "escaped.csv" not in listing(box, "data") + listing(box, ".")
    assert "slip" not in listing(box, "data")


def test_a_symbolic_link_member_is_refused(describe, box):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        link = zipfile.ZipInfo("passwd.csv")
        link.external_attr = (stat.S_IFLNK | 0o777) << 16
        archive.writestr(link, "/etc/passwd")
    report = describe("link.zip", buffer.getvalue()).report
    assert report["error"] == "data/link.zip is refused: its member 'passwd.csv' is a symbolic link"
    assert "link" not in listing(box, "data")


def test_too_many_members_is_refused(describe):
    content = zipped({f"m{i}.csv": SALES for i in range(6)})
    report = describe("crowd.zip", content, limits={"max_members": 5}).report
    assert report["error"] == "data/crowd.zip holds 6 files; at most 5 are unpacked. Zip fewer files together"


def test_a_password_protected_zip_is_refused(describe):
    # A member flagged as encrypted (traditional PKWARE encryption sets bit 0 of its flags).
    content = bytearray(zipped({"secret.csv": SALES}, zipfile.ZIP_STORED))
    for signature, flags_at in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        at = content.find(signature)
        content[at + flags_at] |= 0x1
    report = describe("locked.zip", bytes(content)).report
    assert report["error"] == "data/locked.zip is password-protected; zip it again without a password"


def test_a_damaged_zip_is_said_to_be_damaged(describe):
    whole = zipped({f"m{i}.csv": SALES * 50 for i in range(3)})
    report = describe("cut.zip", whole[: len(whole) // 2]).report
    assert (
        report["error"] == "data/cut.zip is a damaged zip archive: it is cut short or corrupted; "
        "save it again and upload it again"
    )


@pytest.mark.parametrize(
    ("name", "write", "load"),
    [
        (
            "frame.parquet.gz",
            "frame.to_parquet(plain)",
            "pd.read_parquet(__import__('gzip').open('data/frame.parquet.gz'))",
        ),
        (
            "frame.feather.gz",
            "frame.to_feather(plain)",
            "pd.read_feather(__import__('gzip').open('data/frame.feather.gz'))",
        ),
        (
            "frame.xlsx.gz",
            "frame.to_excel(plain, index=False)",
            "pd.read_excel(__import__('gzip').open('data/frame.xlsx.gz'))",
        ),
        (
            "frame.json.gz",
            "plain.write(frame.to_json(orient='records').encode())",
            "pd.read_json('data/frame.json.gz')",
        ),
    ],
)
def test_gzipped_binary_formats_load_through_gzip_open(describe, make_in_sandbox, name, write, load):
    make_in_sandbox(
        "import gzip, io\n"
        "frame = pd.DataFrame({'a': range(7), 'b': list('abcdefg')})\n"
        "plain = io.BytesIO()\n"
        f"{write}\n"
        f"open('data/{name}', 'wb').write(gzip.compress(plain.getvalue()))\n"
    )
    described = describe(name)
    table = described.table
    assert described.report["compression"] == "gzip"
    assert table["load"] == load
    assert described.loaded(table) == (7, 2)


def test_a_gz_name_over_content_that_is_not_gzip_is_refused(describe):
    report = describe("plain.csv.gz", SALES).report
    assert (
        report["error"]
        == "data/plain.csv.gz is not gzip-compressed: it holds CSV text; remove .gz from its name"
    )
