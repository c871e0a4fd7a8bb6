"""A file whose placement failed is listed as failed, with a retry action only its owner may use."""

from __future__ import annotations

import pytest
from django.core.files.base import ContentFile

from analyst.models import AnalysisSession, DataFile

NOT_FOUND = {"error": {"code": "not_found", "message": "no such session"}}


def stored_file(session: AnalysisSession, placement: str, error: str = "") -> DataFile:
    data_file = DataFile(
        session=session, name="a.csv", path="data/a.csv", size=4, placement=placement, placement_error=error
    )
    data_file.stored.save("a.csv", ContentFile(b"a\n1\n"))
    return data_file


def retry_url(session: AnalysisSession, data_file: DataFile) -> str:
    return f"/api/sessions/{session.id}/files/{data_file.id}/retry"


def test_a_failed_file_is_listed_with_why_and_its_retry_url(api, session, media):
    data_file = stored_file(session, "failed", "the sandbox service did not answer in time")
    (listed,) = api.get(f"/api/sessions/{session.id}/files").json()["files"]
    assert listed["status"] == "failed"
    assert listed["error"] == "the sandbox service did not answer in time"
    assert listed["retry_url"] == retry_url(session, data_file)


def test_the_owner_retries_a_failed_file(api, session, media, django_capture_on_commit_callbacks):
    data_file = stored_file(session, "failed", "the sandbox service did not answer in time")
    with django_capture_on_commit_callbacks() as enqueued:
        response = api.post(retry_url(session, data_file))
    assert response.status_code == 202
    assert response.json()["file"] | {"status": "placing", "error": ""} == response.json()["file"]
    assert len(enqueued) == 1  # the placement, sent once the claim is committed
    data_file.refresh_from_db()
    assert (data_file.placement, data_file.placement_error) == ("placing", "")
    (listed,) = api.get(f"/api/sessions/{session.id}/files").json()["files"]
    assert (listed["status"], "retry_url" in listed) == ("placing", False)


@pytest.mark.parametrize("placement", ["placing", "ready"])
def test_only_a_failed_file_can_be_retried(
    api, session, media, placement, django_capture_on_commit_callbacks
):
    data_file = stored_file(session, placement)
    with django_capture_on_commit_callbacks() as enqueued:
        response = api.post(retry_url(session, data_file))
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "not_failed"
    assert not enqueued


def test_a_stranger_gets_404_and_changes_nothing(
    stranger_api, session, media, django_capture_on_commit_callbacks
):
    data_file = stored_file(session, "failed", "why")
    with django_capture_on_commit_callbacks() as enqueued:
        response = stranger_api.post(retry_url(session, data_file))
    assert (response.status_code, response.json()) == (404, NOT_FOUND)
    assert not enqueued
    data_file.refresh_from_db()
    assert data_file.placement == "failed"


def test_a_file_of_another_session_is_404(api, alice, session, media):
    other = AnalysisSession.objects.create(owner=alice, model="anthropic/claude-test")
    data_file = stored_file(other, "failed", "why")
    response = api.post(retry_url(session, data_file))
    assert response.status_code == 404
    data_file.refresh_from_db()
    assert data_file.placement == "failed"


def test_retry_is_post_only(api, session, media):
    data_file = stored_file(session, "failed", "why")
    assert api.get(retry_url(session, data_file)).status_code == 405
