"""Every service error is a JSON body with a stable code, raised by the SDK as its own exception."""

import time

import httpx
import pytest

from sandboxes import (
    AuthenticationError,
    ContextNotFound,
    InvalidRequest,
    Sandbox,
    SandboxExpired,
    SandboxNotFound,
    ServiceUnavailable,
    TemplateNotFound,
)
from tests.sandboxd_process import free_port


def test_wrong_token_is_an_authentication_error(sandboxd):
    with pytest.raises(AuthenticationError):
        Sandbox.create(url=sandboxd.url, token="wrong")


def test_error_bodies_are_json_with_a_code(sandboxd):
    response = httpx.get(f"{sandboxd.url}/sandboxes/nope", headers={"Authorization": "Bearer x"})
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "unauthorized"
    response = httpx.get(
        f"{sandboxd.url}/sandboxes/nope", headers={"Authorization": f"Bearer {sandboxd.token}"}
    )
    assert response.status_code == 404
    assert response.json() == {"error": {"code": "sandbox_not_found", "message": "no sandbox nope"}}


def test_unknown_sandbox(sandboxd):
    with pytest.raises(SandboxNotFound):
        Sandbox.connect("0" * 32, url=sandboxd.url, token=sandboxd.token)


def test_unknown_context(sandbox):
    from sandboxes import CodeContext

    with pytest.raises(ContextNotFound):
        CodeContext(sandbox, "missing").run_code("1")


def test_unknown_template(sandboxd):
    with pytest.raises(TemplateNotFound):
        Sandbox.create(template="no-such-template", url=sandboxd.url, token=sandboxd.token)


@pytest.mark.parametrize("ttl", [0, -5, "soon", 10**9])
def test_bad_ttl_is_refused(sandboxd, ttl):
    with pytest.raises(InvalidRequest):
        Sandbox.create(ttl_seconds=ttl, url=sandboxd.url, token=sandboxd.token)


def test_malformed_json_is_an_invalid_request(sandboxd):
    response = httpx.post(
        f"{sandboxd.url}/sandboxes",
        content=b"{not json",
        headers={"Authorization": f"Bearer {sandboxd.token}"},
    )
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_request"


def test_expired_sandbox_says_so(make_sandbox, sandboxd):
    sandbox = make_sandbox(ttl_seconds=1)
    deadline = time.monotonic() + 30
    while True:
        try:
            sandbox.get_info()
        except SandboxExpired:
            break
        assert time.monotonic() < deadline, "the sandbox never expired"
        time.sleep(0.5)
    with pytest.raises(SandboxExpired):
        sandbox.run_code("1")


def test_unreachable_service_is_service_unavailable():
    with pytest.raises(ServiceUnavailable):
        Sandbox.create(url=f"http://127.0.0.1:{free_port()}", token="t")


def test_sdk_finds_the_service_through_the_environment(sandboxd, monkeypatch):
    monkeypatch.setenv("SANDBOXD_URL", sandboxd.url)
    monkeypatch.setenv("SANDBOXD_TOKEN", sandboxd.token)
    with Sandbox.create() as sandbox:
        assert sandbox.run_code("3 * 3").text == "9"
    with pytest.raises(SandboxNotFound):
        Sandbox.connect(sandbox.sandbox_id)
