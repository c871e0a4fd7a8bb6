"""A good CSV is kept and queued for its sandbox; a path in its name is dropped, keeping the basename."""

from __future__ import annotations

import pytest

from analyst.models import DataFile
from tests.api.conftest import stored_files, upload

CSV = b"region,units\nnorth,3\nsouth,5\n"


def test_a_good_csv_is_202_with_its_record(api, session, media):
    response = upload(api, session, "sales 2024_Q3-final.csv", CSV)
    assert response.status_code == 202
    data_file = DataFile.objects.get()
    assert response.json() == {
        "file": {
            "id": data_file.id,
            "kind": "upload",
            "name": "sales 2024_Q3-final.csv",
            "path": "data/sales 2024_Q3-final.csv",
            "size": len(CSV),
            "status": "placing",  # described once the sandbox has read it (a file_added event)
            "error": "",
            "rows": None,
            "columns": None,
            "summary": "",
            "format": None,
            "compression": None,
            "sheets": None,
            "tables": [],
            "notes": [],
            "read_error": "",
            "options": {},
            "dictionary": {},
            "column_marks": {},
            "proposed_marks": {},
        }
    }
    assert data_file.session == session
    (kept,) = stored_files(media)
    assert kept.read_bytes() == CSV
    assert kept.relative_to(media).parts[0] == "uploads"
    with data_file.stored.open("rb") as stored:
        assert stored.read() == CSV


@pytest.mark.parametrize("extension", [".tsv", ".txt", ".CSV"])
def test_tsv_and_txt_are_accepted_too(api, session, media, extension):
    assert upload(api, session, f"table{extension}", b"a\tb\n1\t2\n").status_code == 202


@pytest.mark.parametrize(
    ("sent", "kept"),
    [
        ("../x.csv", "x.csv"),
        ("../../../../etc/cron.d/x.csv", "x.csv"),
        ("a/b.csv", "b.csv"),
        ("/etc/passwd.csv", "passwd.csv"),
        ("..\\..\\windows\\evil.csv", "evil.csv"),
        ("&#46;&#46;&#47;x.csv", "x.csv"),  # HTML entities are decoded before the path is dropped
        ("tab\there.csv", "tabhere.csv"),  # unprintable characters are dropped
    ],
)
def test_a_path_or_unprintable_characters_in_the_name_are_dropped(api, session, media, sent, kept):
    response = upload(api, session, sent, CSV)
    assert response.status_code == 202
    assert (response.json()["file"]["name"], response.json()["file"]["path"]) == (kept, f"data/{kept}")
    (stored,) = stored_files(media)
    assert stored.resolve().is_relative_to((media / "uploads").resolve())
    assert stored.name.startswith(kept.removesuffix(".csv"))


@pytest.mark.parametrize("sent", ["..", ".", "../", "a/"])
def test_a_name_that_is_only_a_path_carries_no_file(api, session, media, sent):
    response = upload(api, session, sent, CSV)
    assert response.status_code == 400
    assert response.json()["error"]["code"] in {"invalid_request", "upload_refused"}
    assert not DataFile.objects.exists()
    assert stored_files(media) == []


def test_a_utf8_character_cut_by_the_sniff_window_is_not_mistaken_for_latin_1(api, session, media):
    content = b"a\n" + b"x" * (64 * 1024 - 3) + "é\n".encode()  # é straddles byte 65536
    assert upload(api, session, "wide.csv", content).status_code == 202


def test_a_re_upload_replaces_the_record_and_its_stored_copy(
    api, session, media, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):  # the old copy goes once committed
        first = upload(api, session, "sales.csv", b"a\n1\n").json()["file"]
        second = upload(api, session, "sales.csv", b"a\n1\n2\n").json()["file"]
    assert second["id"] != first["id"]
    assert list(DataFile.objects.values_list("id", "path", "size")) == [(second["id"], "data/sales.csv", 6)]
    assert [p.read_bytes() for p in stored_files(media)] == [b"a\n1\n2\n"], "the replaced copy is deleted"
