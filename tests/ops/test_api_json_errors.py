"""Every error under /api/ is a JSON body {"error": {"code", "message"}} with the right status,
including the ones no API view answers: an id that is not a UUID, a path with no route, a body
over the limit, a request Django itself refuses, and a view that raised (no traceback shown)."""

from __future__ import annotations

import uuid

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from analyst.models import AnalysisSession, ApiToken, DataFile
from analyst.sessions import sessions

pytestmark = pytest.mark.django_db
BOUNDARY = "ops-test-boundary-91c2"
NOT_A_UUID = "not-a-uuid"


@pytest.fixture
def alice():
    return get_user_model().objects.create_user("alice")


def bearer(user, **kwargs) -> Client:
    _, secret = ApiToken.issue(user)
    return Client(HTTP_AUTHORIZATION=f"Bearer {secret}", **kwargs)


@pytest.fixture
def api(alice) -> Client:
    return bearer(alice)


@pytest.fixture
def session(alice) -> AnalysisSession:
    return AnalysisSession.objects.create(owner=alice, model="anthropic/claude-test")


def assert_json_error(response, status: int, code: str) -> str:
    assert response.status_code == status, response.content[:500]
    assert response["Content-Type"] == "application/json", response.content[:500]
    body = response.json()
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message"}, body
    assert body["error"]["code"] == code
    return body["error"]["message"]


def multipart(*parts: tuple[str, str | None, bytes]) -> bytes:
    out = b""
    for name, filename, content in parts:
        disposition = f'form-data; name="{name}"' + (f'; filename="{filename}"' if filename else "")
        out += f"--{BOUNDARY}\r\nContent-Disposition: {disposition}\r\n\r\n".encode() + content + b"\r\n"
    return out + f"--{BOUNDARY}--\r\n".encode()


def post_multipart(client: Client, path: str, body: bytes):
    return client.post(path, body, content_type=f"multipart/form-data; boundary={BOUNDARY}")


# 404: ids that are not UUIDs on every route shape, and paths with no route.

ROUTES_WITH_IDS = [
    ("get", f"/api/sessions/{NOT_A_UUID}"),
    ("patch", f"/api/sessions/{NOT_A_UUID}"),
    ("delete", f"/api/sessions/{NOT_A_UUID}"),
    ("post", f"/api/sessions/{NOT_A_UUID}/messages"),
    ("post", f"/api/sessions/{NOT_A_UUID}/cells"),
    ("post", f"/api/sessions/{NOT_A_UUID}/cancel"),
    ("post", f"/api/sessions/{NOT_A_UUID}/fork"),
    ("get", f"/api/sessions/{NOT_A_UUID}/files"),
    ("post", f"/api/sessions/{NOT_A_UUID}/files"),
    ("get", f"/api/sessions/{NOT_A_UUID}/files/download?path=data/a.csv"),
    ("get", f"/api/sessions/{NOT_A_UUID}/events"),
    ("post", f"/api/sessions/{NOT_A_UUID}/files/1/retry"),
    ("post", "/api/sessions/00000000-0000-4000-8000-000000000000/files/not-a-number/retry"),
    ("get", f"/api/artifacts/{NOT_A_UUID}"),
    ("get", f"/api/shared/some-token/artifacts/{NOT_A_UUID}"),
]


@pytest.mark.parametrize(("method", "path"), ROUTES_WITH_IDS)
def test_an_id_that_is_not_a_uuid_is_a_json_404(api, method, path):
    message = assert_json_error(getattr(api, method)(path), 404, "not_found")
    assert path.split("?")[0] in message


@pytest.mark.parametrize("debug", [False, True], ids=["production", "debug"])
def test_an_unknown_api_path_is_a_json_404(api, settings, debug):
    settings.DEBUG = debug  # Django's debug 404 page is HTML too
    assert_json_error(api.get("/api/no-such-thing"), 404, "not_found")
    assert_json_error(api.get(f"/api/sessions/{uuid.uuid4()}/no-such-thing"), 404, "not_found")
    assert_json_error(Client().post("/api/"), 404, "not_found")


def test_pages_outside_the_api_keep_their_html_404(client):
    response = client.get("/no-such-page")
    assert response.status_code == 404
    assert response["Content-Type"].startswith("text/html")


# 413: bodies over the limit.


def test_a_json_body_over_the_limit_is_a_json_413(api, session, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    big = {"title": "x" * 2000}
    message = assert_json_error(api.post("/api/sessions", big, "application/json"), 413, "request_too_large")
    assert message == "the request body is larger than the limit of 1000 bytes"
    question = {"content": "why? " * 400}
    response = api.post(f"/api/sessions/{session.id}/messages", question, "application/json")
    assert_json_error(response, 413, "request_too_large")
    assert AnalysisSession.objects.count() == 1
    assert api.post("/api/sessions", {"title": "small"}, "application/json").status_code == 201


def test_an_upload_over_the_limit_is_a_json_413(api, session, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    settings.ANALYST_MAX_UPLOAD = 100 << 10
    body = multipart(("file", "big.csv", b"1\n" * (100 << 10)))
    response = post_multipart(api, f"/api/sessions/{session.id}/files", body)
    message = assert_json_error(response, 413, "request_too_large")
    assert message == "the request body is larger than the limit of 164 KiB"
    assert not DataFile.objects.exists()
    assert not any(tmp_path.rglob("*.csv"))


def test_form_fields_over_the_limit_in_an_upload_are_a_json_413(api, session, settings, tmp_path):
    # Under the upload's limit as a whole, so only the parser finds the fields too large.
    settings.MEDIA_ROOT = tmp_path
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    body = multipart(("note", None, b"n" * 3000), ("file", "a.csv", b"a,b\n1,2\n"))
    response = post_multipart(api, f"/api/sessions/{session.id}/files", body)
    assert_json_error(response, 413, "request_too_large")
    assert not DataFile.objects.exists()


# 400 and 405.


def test_a_request_django_refuses_is_a_json_400(api, session, settings):
    settings.DATA_UPLOAD_MAX_NUMBER_FIELDS = 2
    body = multipart(*((f"field{i}", None, b"v") for i in range(5)))
    response = post_multipart(api, f"/api/sessions/{session.id}/files", body)
    assert_json_error(response, 400, "bad_request")


def test_a_method_not_allowed_is_a_json_405(api, session):
    response = api.put(f"/api/sessions/{session.id}/messages")
    assert_json_error(response, 405, "method_not_allowed")
    assert response["Allow"] == "POST"


# 500: a view that raised.


@pytest.mark.parametrize("debug", [False, True], ids=["production", "debug"])
def test_a_view_that_raises_is_a_json_500_without_its_traceback(
    alice, session, settings, monkeypatch, caplog, debug
):
    settings.DEBUG = debug  # Django's debug 500 page would show the traceback and settings

    def broken(*args, **kwargs):
        raise RuntimeError("db password is hunter2")

    monkeypatch.setattr(sessions, "get_for", broken)
    response = bearer(alice, raise_request_exception=False).get(f"/api/sessions/{session.id}")
    assert_json_error(response, 500, "server_error")
    assert b"hunter2" not in response.content
    assert b"Traceback" not in response.content and b"RuntimeError" not in response.content
    logged = [r for r in caplog.records if r.name == "django.request" and r.exc_info]
    assert logged and "hunter2" in str(logged[0].exc_info[1]), "the operator still gets the traceback"
