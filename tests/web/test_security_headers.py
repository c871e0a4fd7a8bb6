"""Every response carries a strict Content-Security-Policy, a Permissions-Policy and nosniff: pages,
the API's JSON, errors, share pages, the admin, and static files served by the ASGI app in front of
Django's middleware; a download keeps its own stricter policy; no page holds inline script."""

from __future__ import annotations

import re

import pytest
from asgiref.sync import async_to_sync
from asgiref.testing import ApplicationCommunicator
from django.core.files.base import ContentFile
from django.test import Client

from analyst.models import AnalysisSession, ApiToken, Artifact, ShareLink
from config.asgi import application

pytestmark = pytest.mark.django_db

SANDBOXED = "sandbox; default-src 'none'"  # what downloads and artifacts send of their own


def directives(policy: str) -> dict[str, list[str]]:
    parsed = {}
    for directive in filter(None, (part.strip() for part in policy.split(";"))):
        name, *values = directive.split()
        assert name not in parsed, f"{name} given twice"
        parsed[name] = values
    return parsed


def assert_strict(headers) -> None:
    policy = directives(headers["Content-Security-Policy"])
    assert policy["default-src"] == ["'self'"]
    assert policy["script-src"] == ["'self'"]  # no 'unsafe-inline', 'unsafe-eval', hosts or nonces
    for fetched in ("img-src", "media-src", "font-src"):
        assert policy[fetched] == ["'self'", "data:", "blob:"], fetched
    assert policy["connect-src"] == ["'self'"]
    assert policy["style-src"] == ["'self'", "'unsafe-inline'"]
    for closed in ("object-src", "base-uri", "frame-ancestors"):
        assert policy[closed] == ["'none'"], closed
    assert policy["form-action"] == ["'self'"]
    features = dict(item.strip().split("=", 1) for item in headers["Permissions-Policy"].split(","))
    for feature in ("camera", "microphone", "geolocation", "payment", "usb", "serial", "hid", "midi"):
        assert features.get(feature) == "()", feature
    assert headers["X-Content-Type-Options"] == "nosniff"


def test_pages_json_errors_and_share_pages_carry_the_policy(browser, session):
    link = ShareLink.objects.create(session=session)
    anyone = Client()
    responses = {
        "my sessions": browser.get("/sessions/"),
        "a session page": browser.get(f"/sessions/{session.id}/"),
        "the tokens page": browser.get("/settings/tokens/"),
        "the instructions page": browser.get("/settings/instructions/"),
        "the API's JSON": browser.get("/api/sessions"),
        "a page's 404": browser.get("/nowhere/"),
        "a redirect": anyone.get("/sessions/"),
        "log in": anyone.get("/accounts/login/"),
        "sign up": anyone.get("/accounts/signup/"),
        "a share page": anyone.get(f"/s/{link.token}/"),
        "a share's events": anyone.get(f"/api/shared/{link.token}/events"),
        "the admin's login": anyone.get("/admin/login/"),
        "the liveness probe": anyone.get("/livez"),
        # Last: the API's 404 closes the page's response mid-request, and with it the test's
        # database connection (analyst/api/errors.py, as_json).
        "the API's 404": browser.get("/api/nowhere"),
    }
    expected = {"the API's 404": 404, "a page's 404": 404, "a redirect": 302}
    for name, response in responses.items():
        assert response.status_code == expected.get(name, 200), name
        try:
            assert_strict(response.headers)
        except (AssertionError, KeyError) as error:
            raise AssertionError(f"{name}: {error!r}") from error


def test_a_download_keeps_its_own_stricter_policy(session, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    artifact = Artifact(session=session, mime_type="image/svg+xml", size=6)
    artifact.file.save("a.svg", ContentFile(b"<svg/>"))
    link = ShareLink.objects.create(session=session)
    response = Client().get(f"/api/shared/{link.token}/artifacts/{artifact.id}")
    try:
        assert response.status_code == 200
        assert response["Content-Security-Policy"] == SANDBOXED
        assert response["X-Content-Type-Options"] == "nosniff"
        assert "camera=()" in response["Permissions-Policy"]
    finally:
        response.close()  # last: closing a response ends the request, and with it the test's connection


# Inline script in any form: a <script> without src, an on* handler attribute, a javascript: URL.
INLINE_SCRIPT = re.compile(
    r"<script(?![^>]*\ssrc=)[^>]*>|\son[a-z]+\s*=|javascript:",
    re.IGNORECASE,
)


def test_no_page_holds_inline_script(browser, session):
    link = ShareLink.objects.create(session=session)
    ApiToken.issue(session.owner, name="nightly")
    anyone = Client()
    pages = {
        "my sessions": browser.get("/sessions/"),
        "a session page": browser.get(f"/sessions/{session.id}/"),
        "the tokens page": browser.get("/settings/tokens/"),
        "the instructions page": browser.get("/settings/instructions/"),
        "log in": anyone.get("/accounts/login/"),
        "sign up": anyone.get("/accounts/signup/"),
        "a share page": anyone.get(f"/s/{link.token}/"),
        "a share page, logged in": browser.get(f"/s/{link.token}/"),
    }
    for name, page in pages.items():
        html = page.content.decode()
        assert page.status_code == 200 and "</html>" in html, name
        assert not INLINE_SCRIPT.findall(html), f"{name}: {INLINE_SCRIPT.findall(html)}"


def test_deleting_a_session_asks_first_without_script(browser, session):
    """The question is a <details> holding the real button: no confirm() in an onsubmit, which the
    policy would block (and with it the question)."""
    for page in (browser.get("/sessions/"), browser.get(f"/sessions/{session.id}/")):
        html = page.content.decode()
        question = re.search(r'<details class="confirm">(.*?)</details>', html, re.DOTALL)
        assert question, "no confirming <details>"
        assert f'action="/sessions/{session.id}/delete"' in question.group(1)
        assert html.count(f"/sessions/{session.id}/delete") == 1  # no other way to delete, unasked
    assert browser.post(f"/sessions/{session.id}/delete")["Location"] == "/sessions/"
    assert not AnalysisSession.objects.filter(id=session.id).exists()


async def asgi_get(path: str) -> tuple[int, dict[str, str], bytes]:
    """GET through the project's ASGI application (config.asgi, as the web server runs it)."""
    scope = {
        "type": "http",
        "method": "GET",
        "path": path,
        "query_string": b"",
        "headers": [(b"host", b"testserver")],
    }
    communicator = ApplicationCommunicator(application, scope)
    await communicator.send_input({"type": "http.request", "body": b"", "more_body": False})
    start = await communicator.receive_output(timeout=30)
    body = b""
    while True:
        message = await communicator.receive_output(timeout=30)
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    await communicator.wait()
    headers = {name.decode().title(): value.decode() for name, value in start["headers"]}
    return start["status"], headers, body


@pytest.mark.parametrize(
    ("path", "content_type"),
    [
        ("/static/app/session.js", "text/javascript"),
        ("/static/vendor/plotly.min.js", "text/javascript"),
        ("/static/pages.css", "text/css"),
    ],
)
def test_static_files_carry_nosniff_and_the_policy(path, content_type):
    """Static files are served by the ASGI app before any Django middleware runs."""
    status, headers, body = async_to_sync(asgi_get)(path)
    assert status == 200 and body
    assert headers["Content-Type"].startswith(content_type)
    assert_strict(headers)


def test_a_missing_static_file_and_a_page_over_asgi_carry_them_too():
    status, headers, _ = async_to_sync(asgi_get)("/static/app/nothing-here.js")
    assert status == 404
    assert_strict(headers)
    status, headers, body = async_to_sync(asgi_get)("/accounts/login/")  # the async middleware path
    assert status == 200 and b"login-form" in body
    assert_strict(headers)
