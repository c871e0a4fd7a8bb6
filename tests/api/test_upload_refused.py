"""A bad upload is refused with a message saying why, and leaves no row and no file behind."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from analyst.models import DataFile
from analyst.uploads.uploads import UploadRefused, check_upload
from tests.api.conftest import stored_files, upload

GOOD = b"city,visits\nOslo,3\nLima,5\n"
NAME_RULE = (
    "the file name may hold only letters, digits, spaces and . , ( ) [ ] + & ' = @ # ~ - _,"
    " must not start with a dot or a sign, and is at most 120 characters"
)
CONTROL_RULE = "the file name holds control characters; rename the file and try again"
EXTENSION_RULE = (
    "this kind of file cannot be read as a table; accepted: .csv, .tsv, .txt, .xlsx, .xlsm, .xls,"
    " .parquet, .json, .jsonl, .ndjson, .feather, .arrow (each also as .gz), .zip"
)


def assert_refused(response, media, message: str) -> None:
    assert response.status_code == 400, response.content
    assert response.json() == {"error": {"code": "upload_refused", "message": message}}
    assert not DataFile.objects.exists()
    assert stored_files(media) == []


@pytest.mark.parametrize(
    "filename",
    [
        ".env.csv",  # hidden
        "a..b.csv",
        "x;rm -rf ~.csv",
        "$(reboot).csv",
        "<script>.csv",
        "-rf.csv",
        "x" * 130 + ".csv",
        "..%2Fx.csv",  # no URL-decoding: the % itself is refused
        'quote".csv',
    ],
)
def test_a_name_with_odd_characters_is_refused(api, session, media, filename):
    assert_refused(upload(api, session, filename, GOOD), media, NAME_RULE)


CONTROL_NAMES = ["tab\there.csv", "bell\x07.csv", "rtl\u202egpj.csv", "del\x7f.csv"]


@pytest.mark.parametrize("filename", CONTROL_NAMES)
def test_control_characters_never_reach_a_files_name(api, session, media, filename):
    """Django's multipart parser drops them; the path the model and the panel see is clean."""
    response = upload(api, session, filename, GOOD)
    assert response.status_code == 202, response.content
    path = response.json()["file"]["path"]
    assert path.isprintable() and "\u202e" not in path and path.endswith(".csv")


@pytest.mark.parametrize("filename", CONTROL_NAMES)
def test_a_name_with_control_characters_given_directly_is_refused(filename):
    """Uploads that do not come through multipart (the MCP tool's) meet the same check."""
    with pytest.raises(UploadRefused, match=CONTROL_RULE):
        check_upload(SimpleUploadedFile(filename, GOOD))


@pytest.mark.parametrize(
    "filename", ["report.docx", "table.csv.exe", "script.py", "noextension", "data.parquet.bz2", "x.tar.gz"]
)
def test_a_wrong_extension_is_refused(api, session, media, filename):
    assert_refused(upload(api, session, filename, GOOD), media, EXTENSION_RULE)


@pytest.mark.parametrize(
    "filename",
    ["données.csv", "ventes (2024).xlsx", "Q1 + Q2.parquet", "O'Brien & co.json", "log.jsonl.gz", "all.zip"],
)
def test_names_people_give_their_files_are_taken(api, session, media, filename):
    response = upload(api, session, filename, GOOD)
    assert response.status_code == 202, response.content
    assert response.json()["file"]["path"] == f"data/{filename}"


def test_a_name_sent_with_folders_keeps_only_its_last_part(api, session, media):
    response = upload(api, session, "C:\\Users\\ana\\ventes.csv", GOOD)
    assert response.status_code == 202, response.content
    assert response.json()["file"]["path"] == "data/ventes.csv"


def test_an_empty_file_is_refused(api, session, media):
    assert_refused(upload(api, session, "empty.csv", b""), media, "the file is empty")


@pytest.mark.parametrize(
    "content",
    [b"a,b\n1,\x00\x02\n", "name,city\nJosé,Zürich\n".encode("latin-1"), "a,b\n1,2\n".encode("utf-16")],
    ids=["nul-bytes", "latin-1", "utf-16"],
)
def test_the_web_side_never_judges_content_the_sandbox_reads_it(api, session, media, content):
    """Whether bytes are a table is for the describer, inside the sandbox: nothing is parsed here."""
    response = upload(api, session, "data.csv", content)
    assert response.status_code == 202, response.content
    assert stored_files(media) != []


def test_a_file_over_the_limit_is_refused(api, session, media, settings):
    settings.ANALYST_MAX_UPLOAD = 1 << 20
    content = b"1\n" * (1 << 19) + b"2"
    assert_refused(
        upload(api, session, "big.csv", content), media, "the file is larger than the limit of 1 MiB"
    )


def test_a_file_exactly_at_the_limit_is_accepted(api, session, media, settings):
    settings.ANALYST_MAX_UPLOAD = 1 << 20
    response = upload(api, session, "big.csv", b"1\n" * (1 << 19))
    assert response.status_code == 202
    assert response.json()["file"]["size"] == 1 << 20


def test_a_limit_under_one_mib_is_not_reported_as_zero(api, session, media, settings):
    settings.ANALYST_MAX_UPLOAD = 100 << 10
    response = upload(api, session, "big.csv", b"1\n" * (60 << 10))
    assert response.status_code == 400
    message = response.json()["error"]["message"]
    assert message.startswith("the file is larger than the limit of ")
    assert "0 MiB" not in message, f"{message!r} does not tell the user the real limit (100 KiB)"
    assert stored_files(media) == []


def test_a_request_without_the_file_field_is_400(api, session, media):
    response = upload(api, session, "data.csv", GOOD, field="upload")
    assert response.status_code == 400
    assert response.json()["error"] == {
        "code": "invalid_request",
        "message": "send the file as multipart form field 'file'",
    }
    assert not DataFile.objects.exists()
    assert stored_files(media) == []
