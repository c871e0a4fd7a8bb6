"""An upload can be deleted (row, stored copy, an event the model and other tabs hear of) and read
again with the user's corrections; both are the owner's alone."""

from __future__ import annotations

import json

import pytest
from django.core.files.base import ContentFile

from analyst.models import AnalysisSession, DataFile, Event
from analyst.turns.agent.prompt import system_prompt
from tests.api.conftest import stored_files

NOT_FOUND = {"error": {"code": "not_found", "message": "no such session"}}


def stored_file(session: AnalysisSession, name: str = "ventes.csv", placement: str = "ready") -> DataFile:
    data_file = DataFile(
        session=session,
        name=name,
        path=f"data/{name}",
        size=4,
        placement=placement,
        summary=f"data/{name}: 1 row",
    )
    data_file.stored.save(name, ContentFile(b"a\n1\n"))
    return data_file


def file_url(session: AnalysisSession, data_file: DataFile, tail: str = "") -> str:
    return f"/api/sessions/{session.id}/files/{data_file.id}{tail}"


def set_options(client, session, data_file, options) -> object:
    body = options if isinstance(options, str) else json.dumps(options)
    return client.post(file_url(session, data_file, "/options"), body, "application/json")


def test_the_owner_deletes_an_upload(api, session, media, django_capture_on_commit_callbacks):
    data_file = stored_file(session)
    with django_capture_on_commit_callbacks(execute=True):
        response = api.delete(file_url(session, data_file))
    assert (response.status_code, response.json()) == (200, {"deleted": data_file.id})
    assert not DataFile.objects.exists()
    assert stored_files(media) == []
    (removed,) = Event.objects.filter(session=session, type="file_removed")
    assert removed.payload == {
        "id": data_file.id,
        "name": "ventes.csv",
        "path": "data/ventes.csv",
        "paths": ["data/ventes.csv"],
    }
    assert api.get(f"/api/sessions/{session.id}/files").json()["files"] == []


def test_a_deleted_zip_takes_the_folder_it_unpacked_to(api, session, media):
    data_file = stored_file(session, "exports.zip")
    api.delete(file_url(session, data_file))
    (removed,) = Event.objects.filter(session=session, type="file_removed")
    assert removed.payload["paths"] == ["data/exports.zip", "data/exports"]


def test_the_model_is_told_of_a_deleted_upload_until_it_is_uploaded_again(api, session, media):
    kept, gone = stored_file(session, "kept.csv"), stored_file(session, "gone.csv")
    api.delete(file_url(session, gone))
    prompt = system_prompt(session)
    assert "data/kept.csv: 1 row" in prompt
    assert "Deleted by the user, no longer in the working folder: data/gone.csv." in prompt
    stored_file(session, "gone.csv")
    assert "Deleted by the user" not in system_prompt(session)
    assert kept.path in system_prompt(session)


def test_a_stranger_cannot_delete(stranger_api, session, media):
    data_file = stored_file(session)
    response = stranger_api.delete(file_url(session, data_file))
    assert (response.status_code, response.json()) == (404, NOT_FOUND)
    assert DataFile.objects.filter(id=data_file.id).exists()
    assert len(stored_files(media)) == 1


def test_a_file_of_another_session_is_404(api, alice, session, media):
    other = AnalysisSession.objects.create(owner=alice, model="anthropic/claude-test")
    data_file = stored_file(other)
    assert api.delete(file_url(session, data_file)).status_code == 404
    assert set_options(api, session, data_file, {"delimiter": ";"}).status_code == 404
    assert DataFile.objects.filter(id=data_file.id).exists()


def test_the_file_url_only_deletes(api, session, media):
    data_file = stored_file(session)
    assert api.get(file_url(session, data_file)).status_code == 405
    assert api.get(file_url(session, data_file, "/options")).status_code == 405


def test_corrections_read_the_file_again(api, session, media, django_capture_on_commit_callbacks):
    data_file = stored_file(session)
    options = {"delimiter": ";", "encoding": "latin-1", "decimal": ",", "header_row": 2, "sheet": None}
    with django_capture_on_commit_callbacks() as enqueued:
        response = set_options(api, session, data_file, options)
    assert response.status_code == 202, response.content
    assert response.json()["file"]["status"] == "placing"
    assert len(enqueued) == 1
    data_file.refresh_from_db()
    assert data_file.placement == "placing"
    # Encodings are stored by their canonical name; "detect" (null) is left out.
    assert data_file.read_options == {
        "delimiter": ";",
        "encoding": "iso8859-1",
        "decimal": ",",
        "header_row": 2,
    }
    assert response.json()["file"]["options"] == data_file.read_options


def test_a_file_with_no_header_row_can_say_so(api, session, media):
    data_file = stored_file(session)
    assert set_options(api, session, data_file, {"header_row": "none"}).status_code == 202
    data_file.refresh_from_db()
    assert data_file.read_options == {"header_row": "none"}


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"delimiter": "ab"}, "the delimiter must be one of , ; | : a tab or a space"),
        ({"decimal": ";"}, "the decimal mark must be ',' or '.'"),
        ({"encoding": "klingon-8"}, "'klingon-8' is not an encoding Python knows"),
        ({"header_row": 99}, "the header row must be 'none' or a row number from 0 to 50"),
        ({"header_row": True}, "the header row must be 'none' or a row number from 0 to 50"),
        ({"sheet": ["a"]}, "the sheet must be a sheet's name"),
        ({"separator": ";"}, "unknown options: separator"),
        (["delimiter"], "send the options as a JSON object"),
    ],
)
def test_bad_corrections_are_refused_and_change_nothing(api, session, media, options, message):
    data_file = stored_file(session)
    response = set_options(api, session, data_file, options)
    assert (response.status_code, response.json()["error"]["message"]) == (400, message)
    data_file.refresh_from_db()
    assert (data_file.placement, data_file.read_options) == ("ready", {})


def test_options_that_are_not_json_are_400(api, session, media):
    response = set_options(api, session, stored_file(session), "{nope")
    assert (response.status_code, response.json()["error"]["code"]) == (400, "invalid_request")


def test_a_file_still_being_read_cannot_be_corrected_yet(
    api, session, media, django_capture_on_commit_callbacks
):
    data_file = stored_file(session, placement="placing")
    with django_capture_on_commit_callbacks() as enqueued:
        response = set_options(api, session, data_file, {"delimiter": ";"})
    assert (response.status_code, response.json()["error"]["code"]) == (409, "still_reading")
    assert not enqueued
    data_file.refresh_from_db()
    assert data_file.read_options == {}


def test_a_stranger_cannot_change_how_a_file_is_read(stranger_api, session, media):
    data_file = stored_file(session)
    response = set_options(stranger_api, session, data_file, {"delimiter": ";"})
    assert (response.status_code, response.json()) == (404, NOT_FOUND)
    data_file.refresh_from_db()
    assert (data_file.placement, data_file.read_options) == ("ready", {})
