"""A user of the deployed app as a browser is one, over the published port on 127.0.0.1: the
signup and login forms with their CSRF tokens, the JSON API with the login cookie and the
X-CSRFToken header, and the session's events over its WebSocket (cookie and Origin as a page
sends them)."""

from __future__ import annotations

import json
import re
import time
from typing import Any

import httpx
from websockets.sync.client import ClientConnection, connect

CSRF_FIELD = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')


class UserClient:
    def __init__(self, base_url: str) -> None:
        self.base_url = base_url
        self.http = httpx.Client(base_url=base_url, timeout=60, follow_redirects=True)

    def close(self) -> None:
        self.http.close()

    def _form_token(self, path: str) -> str:
        page = self.http.get(path)
        page.raise_for_status()
        return CSRF_FIELD.search(page.text).group(1)

    def post_form(self, path: str, fields: dict[str, str], *, form_page: str | None = None) -> httpx.Response:
        """Submit a form as the page holding it would: its CSRF token, a same-origin Referer."""
        token = self._form_token(form_page or path)
        headers = {"Referer": f"{self.base_url}{form_page or path}"}
        return self.http.post(path, data={"csrfmiddlewaretoken": token, **fields}, headers=headers)

    def sign_up_and_log_in(self, username: str, password: str) -> None:
        done = self.post_form(
            "/accounts/signup/", {"username": username, "password1": password, "password2": password}
        )
        assert 'data-testid="signup-done"' in done.text, done.text[:2000]
        self.post_form("/accounts/login/", {"username": username, "password": password})
        assert "sessionid" in self.http.cookies, "logged in"

    def api(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        headers = {"X-CSRFToken": self.http.cookies.get("csrftoken", ""), "Referer": self.base_url + "/"}
        return self.http.request(method, path, headers=headers, **kwargs)

    def websocket(self, path: str) -> ClientConnection:
        cookies = "; ".join(f"{name}={value}" for name, value in self.http.cookies.items())
        url = self.base_url.replace("http://", "ws://", 1) + path
        return connect(url, origin=self.base_url, additional_headers={"Cookie": cookies}, open_timeout=30)


def events_until(
    socket: ClientConnection, last_type: str, *, count: int = 1, seconds: float = 240
) -> list[dict]:
    """The session's events from the socket until the ``count``-th event of ``last_type`` (heartbeats
    and other notices left out)."""
    deadline = time.monotonic() + seconds
    events: list[dict] = []
    while sum(event["type"] == last_type for event in events) < count:
        left = deadline - time.monotonic()
        assert left > 0, f"no {last_type} in time; got {[event['type'] for event in events]}"
        message = json.loads(socket.recv(timeout=left))
        if "seq" in message and "payload" in message:
            events.append(message)
    return events
