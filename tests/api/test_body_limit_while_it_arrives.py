"""A request body is held to its limit while it arrives: 50 MiB sent to the real web server against
a 1 MiB upload limit is cut at the limit with a 413, and neither the server's temporary folder nor
MEDIA_ROOT/.incoming ever holds more than about the limit (Django's ASGI handler spooled the whole
body to a temporary file before any check: a 400 MiB upload against a 200 MiB limit, whole)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from django.contrib.auth import get_user_model
from django.core.handlers.wsgi import WSGIRequest
from django.test import RequestFactory

from analyst.models import AnalysisSession, ApiToken, DataFile
from analyst.uploads.upload_limit import MULTIPART_ALLOWANCE, UploadTooLarge
from tests.api.conftest import server_env
from tests.web_process import web_server

LIMIT = 1 << 20
SENT = 50 << 20
PIECE = 256 << 10
BOUNDARY = "body-limit-boundary-5d1e"
HEAD = (
    f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="big.csv"\r\n'
    "Content-Type: text/csv\r\n\r\n"
).encode()
# What the folders may hold at most: the limit with its framing, and a piece in flight.
MOST_HELD = LIMIT + MULTIPART_ALLOWANCE + PIECE


def folder_size(folder: Path) -> int:
    total = 0
    for path in folder.rglob("*"):
        try:
            total += path.stat().st_size if path.is_file() else 0
        except FileNotFoundError:
            pass  # gone while we looked
    return total


class Sampler(threading.Thread):
    """The largest size each folder reached while it ran."""

    def __init__(self, *folders: Path) -> None:
        super().__init__(daemon=True)
        self.folders, self.largest, self.done = folders, dict.fromkeys(folders, 0), threading.Event()

    def run(self) -> None:
        while not self.done.wait(0.005):
            for folder in self.folders:
                self.largest[folder] = max(self.largest[folder], folder_size(folder))


def body(sent: list[int]) -> Iterator[bytes]:
    """A multipart body whose file never ends within SENT bytes, made as it is sent."""
    yield HEAD
    line = b"1,2,3,4,5,6,7\n" * (PIECE // 14)
    while sent[0] < SENT:
        sent[0] += len(line)
        yield line


@pytest.fixture
def small_limit_server(transactional_db: None, tmp_path: Path) -> Iterator[dict[str, Any]]:
    media, spool = tmp_path / "media", tmp_path / "tmp"
    (media / ".incoming").mkdir(parents=True)
    spool.mkdir()
    env = server_env(MEDIA_ROOT=str(media), ANALYST_MAX_UPLOAD=str(LIMIT), TMPDIR=str(spool))
    with web_server(env, name="body-limit") as url:
        yield {"url": url, "media": media, "spool": spool}


@pytest.mark.timeout(120)
@pytest.mark.parametrize("declared", [False, True], ids=["chunked", "content-length"])
def test_a_body_over_the_limit_is_cut_where_it_passes_it(small_limit_server, declared):
    alice = get_user_model().objects.create_user("alice")
    _, token = ApiToken.issue(alice)
    session = AnalysisSession.objects.create(owner=alice, model="anthropic/claude-test")
    media, spool = small_limit_server["media"], small_limit_server["spool"]
    headers = {
        "Authorization": f"Bearer {token}",
        "Content-Type": f"multipart/form-data; boundary={BOUNDARY}",
    }
    if declared:
        headers["Content-Length"] = str(400 << 20)  # and the body is never that long: refused unread
    sampler = Sampler(media, spool)
    sampler.start()
    sent = [0]
    try:
        with httpx.Client(base_url=small_limit_server["url"], timeout=60) as client:
            response = client.post(f"/api/sessions/{session.id}/files", content=body(sent), headers=headers)
    finally:
        sampler.done.set()
        sampler.join()
    assert response.status_code == 413, response.text[:500]
    assert response.headers["Content-Type"] == "application/json"
    assert response.json()["error"]["code"] == "request_too_large"
    assert "larger than the limit of 1 MiB" in response.json()["error"]["message"]
    assert sampler.largest[media] <= MOST_HELD, sampler.largest
    assert sampler.largest[spool] <= MOST_HELD, sampler.largest
    assert not DataFile.objects.exists()
    assert [p for p in media.rglob("*") if p.is_file()] == []


class CountingInput:
    """A request's input stream that counts what the parser read of it."""

    def __init__(self, content: bytes) -> None:
        self.content, self.position = content, 0

    def read(self, size: int = -1) -> bytes:
        end = len(self.content) if size < 0 else self.position + size
        chunk = self.content[self.position : end]
        self.position += len(chunk)
        return chunk

    def readline(self, size: int = -1) -> bytes:
        return self.read(size)


def test_the_multipart_parse_stops_at_the_limit(settings, tmp_path):
    """Behind a server that streams the body to Django (WSGI) rather than spooling it first."""
    settings.ANALYST_MAX_UPLOAD = LIMIT
    settings.FILE_UPLOAD_TEMP_DIR = str(tmp_path)
    content = HEAD + b"1\n" * (4 * LIMIT) + f"\r\n--{BOUNDARY}--\r\n".encode()
    stream = CountingInput(content)
    environ = RequestFactory()._base_environ(
        REQUEST_METHOD="POST",
        PATH_INFO="/api/sessions/x/files",
        CONTENT_TYPE=f"multipart/form-data; boundary={BOUNDARY}",
        CONTENT_LENGTH=str(len(content)),
    )
    environ["wsgi.input"] = stream
    request = WSGIRequest(environ)
    with pytest.raises(UploadTooLarge, match="larger than the limit of 1 MiB"):
        request.FILES  # noqa: B018
    assert stream.position <= MOST_HELD + (64 << 10)  # the parser reads ahead a chunk or so
    assert list(tmp_path.iterdir()) == []  # its partial temporary file is gone
