"""Another user's session and artifacts look exactly like ones that do not exist: 404, never 403."""

from __future__ import annotations

import uuid

import pytest
from django.core.files.base import ContentFile

from analyst.models import Artifact, DataFile, Event, Turn
from analyst.realtime import events
from tests.api.conftest import stored_files, upload

NOT_FOUND = {"error": {"code": "not_found", "message": "no such session"}}
CSV = b"a,b\n1,2\n"


@pytest.fixture
def queued_turn(session, alice):
    turn = Turn.objects.create(session=session, requested_by=alice, kind=Turn.Kind.CHAT, input="hi")
    events.append(session.id, "user_message", {"text": "hi"}, turn=turn)
    return turn


def call(client, endpoint, session_id):
    base = f"/api/sessions/{session_id}"
    if endpoint == "messages":
        return client.post(f"{base}/messages", {"content": "what is in it?"}, "application/json")
    if endpoint == "cells":
        return client.post(f"{base}/cells", {"code": "print(1)"}, "application/json")
    if endpoint == "cancel":
        return client.post(f"{base}/cancel")
    if endpoint == "events":
        return client.get(f"{base}/events")
    if endpoint == "event stream":
        return client.get(f"{base}/events", HTTP_ACCEPT="text/event-stream")
    if endpoint == "variables":
        return client.get(f"{base}/variables")
    if endpoint == "table preview":
        return client.get(f"{base}/variables/df")
    if endpoint == "interrupt":
        return client.post(f"{base}/kernel/interrupt")
    raise AssertionError(endpoint)


@pytest.mark.parametrize(
    "endpoint",
    ["messages", "cells", "cancel", "events", "event stream", "variables", "table preview", "interrupt"],
)
def test_a_stranger_gets_404_and_changes_nothing(stranger_api, session, queued_turn, endpoint):
    response = call(stranger_api, endpoint, session.id)
    assert response.status_code == 404
    assert response.json() == NOT_FOUND
    assert call(stranger_api, endpoint, uuid.uuid4()).json() == NOT_FOUND, "the same as no session at all"
    assert list(Turn.objects.values_list("id", "status", "cancel_requested")) == [
        (queued_turn.id, Turn.Status.QUEUED, False)
    ]
    assert list(Event.objects.values_list("seq", "type")) == [(1, "user_message")]


def test_a_stranger_cannot_upload_into_the_session(stranger_api, session, media):
    response = upload(stranger_api, session, "data.csv", CSV)
    assert response.status_code == 404
    assert response.json() == NOT_FOUND
    assert not DataFile.objects.exists()
    assert stored_files(media) == []


def test_the_owner_reaches_the_same_endpoints(api, session, media):
    assert call(api, "events", session.id).status_code == 200
    assert call(api, "cancel", session.id).status_code == 200
    assert call(api, "variables", session.id).json()["status"] == "none"
    assert call(api, "interrupt", session.id).json() == {"interrupted": False}
    assert upload(api, session, "data.csv", CSV).status_code == 202


@pytest.fixture
def artifact(session, media):
    found = Artifact(session=session, mime_type="image/png", size=8)
    found.file.save("result.png", ContentFile(b"\x89PNG\r\n\x1a\n"), save=False)
    found.save()
    return found


def test_a_stranger_gets_404_for_the_owners_artifact(stranger_api, artifact):
    response = stranger_api.get(f"/api/artifacts/{artifact.id}")
    assert response.status_code == 404
    assert response.json() == {"error": {"code": "not_found", "message": "no such artifact"}}
    assert stranger_api.get(f"/api/artifacts/{uuid.uuid4()}").json() == response.json()


def test_the_owner_downloads_the_artifact_sandboxed(api, artifact):
    response = api.get(f"/api/artifacts/{artifact.id}")
    assert response.status_code == 200
    assert b"".join(response.streaming_content) == b"\x89PNG\r\n\x1a\n"
    assert response["Content-Type"] == "image/png"
    assert response["Content-Security-Policy"] == "sandbox; default-src 'none'"
    assert response["X-Content-Type-Options"] == "nosniff"
    response.close()
