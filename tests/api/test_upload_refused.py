"""A bad upload is refused with a message saying why, and leaves no row and no file behind."""

from __future__ import annotations

import pytest

from analyst.models import DataFile
from tests.api.conftest import stored_files, upload

GOOD = b"city,visits\nOslo,3\nLima,5\n"
NAME_RULE = "the file name may hold only letters, digits, spaces, dots, dashes and underscores"
EXTENSION_RULE = "only .csv, .tsv, .txt files can be uploaded"


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
        "données.csv",
        "x" * 130 + ".csv",
        "..%2Fx.csv",  # no URL-decoding: the % itself is refused
    ],
)
def test_a_name_with_odd_characters_is_refused(api, session, media, filename):
    assert_refused(upload(api, session, filename, GOOD), media, NAME_RULE)


@pytest.mark.parametrize(
    "filename", ["report.xlsx", "table.csv.exe", "script.py", "noextension", "data.parquet"]
)
def test_a_wrong_extension_is_refused(api, session, media, filename):
    assert_refused(upload(api, session, filename, GOOD), media, EXTENSION_RULE)


def test_an_empty_file_is_refused(api, session, media):
    assert_refused(upload(api, session, "empty.csv", b""), media, "the file is empty")


@pytest.mark.parametrize(
    "content",
    [b"a,b\n1,\x00\x02\n", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "a,b\n1,2\n".encode("utf-16")],
    ids=["nul-bytes", "png", "utf-16"],
)
def test_binary_content_is_refused(api, session, media, content):
    assert_refused(upload(api, session, "data.csv", content), media, "the file looks binary, not a CSV")


def test_latin_1_text_is_refused(api, session, media):
    content = "name,city\nJosé,Zürich\nAna,Köln\n".encode("latin-1")
    assert_refused(
        upload(api, session, "people.csv", content),
        media,
        "the file is not UTF-8 text; save it as UTF-8 and try again",
    )


def test_latin_1_text_is_refused_even_when_its_only_odd_byte_is_near_the_end(api, session, media):
    # The whole file fits in the sniffed head, so an undecodable byte cannot be a cut character.
    content = "name\nJosé\n".encode("latin-1")
    assert_refused(
        upload(api, session, "people.csv", content),
        media,
        "the file is not UTF-8 text; save it as UTF-8 and try again",
    )


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
