"""A big upload is streamed end to end: through the real web server (uvicorn, as scripts/web runs
it), a real Celery worker and a real sandboxd, neither the web process nor the worker holds it
whole, and it arrives whole."""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from django.conf import settings
from django.contrib.auth import get_user_model

from analyst.models import AnalysisSession, ApiToken
from analyst.realtime import events
from sandboxes import Sandbox
from tests.api.conftest import server_env
from tests.conftest import TEST_SETTINGS
from tests.sandboxd_process import SandboxdProcess, own_sandboxd_process
from tests.web_process import web_server
from tests.worker_process import CeleryWorkerProcess

pytestmark = pytest.mark.slow

ROW = 64  # bytes in every data row, so the body's length is known before it is made
CYCLE = 7919  # distinct rows, repeated; a prime, so that no two neighbouring pieces are alike
PIECE_ROWS = 4096  # rows sent per piece: 256 KiB
PIECES = 200 * 10**6 // (ROW * PIECE_ROWS)  # about 200 MB of CSV
HEADER = b"order_id,ordered_at,region,quantity,unit_price,note\n"
REGIONS = ["north", "south", "east", "west", "central"]
BOUNDARY = "big-upload-boundary-93c1"
# Peak resident memory a process may gain while the file goes through it: a small part of it.
MAX_GROWTH = 32 << 20


def row(number: int) -> str:
    """A row of ROW bytes: an id, a timestamp, a region, a quantity, a price, padding."""
    stamp = f"2025-{number % 12 + 1:02d}-{number % 28 + 1:02d} {number % 24:02d}:{number % 60:02d}"
    text = (
        f"{number:06d},{stamp},{REGIONS[number % len(REGIONS)]},{number % 17 + 1},{number % 9973 / 100:.2f},"
    )
    return text.ljust(ROW - 1, "x") + "\n"


ROWS = "".join(row(number) for number in range(CYCLE)).encode() * (PIECE_ROWS // CYCLE + 2)


class Csv:
    """The CSV, made piece by piece as it is sent, never whole; its SHA-256 once sent."""

    size = len(HEADER) + PIECES * PIECE_ROWS * ROW

    def __init__(self) -> None:
        self.digest = hashlib.sha256()

    def pieces(self) -> Iterator[bytes]:
        self.digest.update(HEADER)
        yield HEADER
        for index in range(PIECES):
            start = index * PIECE_ROWS % CYCLE * ROW
            piece = ROWS[start : start + PIECE_ROWS * ROW]
            self.digest.update(piece)
            yield piece


def multipart(csv: Csv, name: str) -> tuple[int, Iterator[bytes]]:
    head = (
        f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n'
        "Content-Type: text/csv\r\n\r\n"
    ).encode()
    tail = f"\r\n--{BOUNDARY}--\r\n".encode()

    def body() -> Iterator[bytes]:
        yield head
        yield from csv.pieces()
        yield tail

    return len(head) + csv.size + len(tail), body()


# /proc: resident memory, and its peak (VmHWM) set back to the current figure.


def status_kib(pid: int, key: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{key}:"):
            return int(line.split()[1])
    raise AssertionError(f"process {pid} has no {key}")


def reset_peak(pid: int) -> None:
    Path(f"/proc/{pid}/clear_refs").write_text("5")


def children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat[stat.rindex(")") + 2 :].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def web_server_pid(url: str) -> int:
    """The web server serving ``url`` (a child of this one: scripts/web execs uvicorn)."""
    port = url.rsplit(":", 1)[1]
    for pid in children(os.getpid()):
        command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        if any(part.endswith(b"uvicorn") for part in command) and port.encode() in command:
            return pid
    raise AssertionError(f"no web server process serves {url}")


# The stack: its own sandboxd (quotas that let the file in), worker queue, media and web server.


@pytest.fixture
def big_sandboxd() -> Iterator[SandboxdProcess]:
    quotas = {**TEST_SETTINGS, "SANDBOXD_MAX_UPLOAD": "1G", "SANDBOXD_DISK_LIMIT": "1G"}
    with own_sandboxd_process(quotas, prefix="sandboxd-big-upload-") as process:
        yield process


@pytest.fixture
def big_stack(transactional_db: None, big_sandboxd: SandboxdProcess) -> Iterator[dict[str, Any]]:
    media = Path(tempfile.mkdtemp(prefix="media-big-upload-"))
    queue = f"{settings.CELERY_TASK_DEFAULT_QUEUE}-big-upload"  # no other worker takes its tasks
    env = server_env(
        MEDIA_ROOT=str(media),
        CELERY_QUEUE=queue,
        SANDBOXD_URL=big_sandboxd.url,
        SANDBOXD_TOKEN=big_sandboxd.token,
        ANALYST_MAX_UPLOAD="1G",
    )
    logs = Path(tempfile.mkdtemp(prefix="celery-big-upload-"))  # kept, as the other workers' are
    worker = CeleryWorkerProcess(log_path=logs / "worker.log", env=env, queues=queue)
    try:
        worker.start()
        with web_server(env, name="big-upload") as url:
            yield {"url": url, "worker": worker, "sandboxd": big_sandboxd}
    finally:
        worker.stop()
        shutil.rmtree(media, ignore_errors=True)


def wait_for_file(session: AnalysisSession, name: str, timeout: float = 45) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for event in events.after(session.id, 0):
            if event["type"] == "error":
                raise AssertionError(f"the upload failed: {event['payload']}")
            if event["type"] == "file_added" and event["payload"]["name"] == name:
                return event["payload"]
        time.sleep(0.2)
    raise AssertionError(f"no file_added for {name} within {timeout:.0f}s")


def sandbox_file(sandboxd: SandboxdProcess, sandbox_id: str, path: str) -> tuple[int, str]:
    """(size, SHA-256) of the file, computed inside the sandbox."""
    code = f"""
import hashlib, os
digest = hashlib.sha256()
with open({path!r}, "rb") as stream:
    while piece := stream.read(1 << 20):
        digest.update(piece)
print(os.path.getsize({path!r}), digest.hexdigest())
"""
    sandbox = Sandbox.connect(sandbox_id, url=sandboxd.url, token=sandboxd.token)
    try:
        context = sandbox.create_code_context()
        try:
            execution = context.run_code(code, timeout=60)
        finally:
            context.close()
    finally:
        sandbox.close()
    assert execution.error is None, execution.error
    size, digest = execution.stdout.split()
    return int(size), digest


@pytest.mark.timeout(180)
def test_a_big_upload_is_streamed_through_web_and_worker_and_arrives_whole(big_stack):
    alice = get_user_model().objects.create_user("alice")
    _, token = ApiToken.issue(alice)
    session = AnalysisSession.objects.create(owner=alice, model="anthropic/claude-test")
    headers = {"Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=big_stack["url"], headers=headers, timeout=60) as client:
        warm = client.post(
            f"/api/sessions/{session.id}/files", files={"file": ("warm.csv", b"a,b\n1,2\n", "text/csv")}
        )
        assert warm.status_code == 202, warm.text
        wait_for_file(session, "warm.csv")  # the session's sandbox is made, the worker warm

        web = web_server_pid(big_stack["url"])
        worker = big_stack["worker"].process.pid
        processes = [web, worker, *children(worker)]
        for pid in processes:
            reset_peak(pid)
        before = {pid: status_kib(pid, "VmRSS") for pid in processes}

        csv = Csv()
        length, body = multipart(csv, "big.csv")
        sent = client.post(
            f"/api/sessions/{session.id}/files",
            content=body,
            headers={
                "Content-Type": f"multipart/form-data; boundary={BOUNDARY}",
                "Content-Length": str(length),
            },
        )
        assert sent.status_code == 202, sent.text
        added = wait_for_file(session, "big.csv")
        growth = {pid: (status_kib(pid, "VmHWM") - before[pid]) << 10 for pid in processes}

    web_growth = growth.pop(web)
    worker_growth = max(growth.values())
    assert added["size"] == csv.size
    session.refresh_from_db()
    size, digest = sandbox_file(big_stack["sandboxd"], session.sandbox_id, added["path"])
    assert (size, digest) == (csv.size, csv.digest.hexdigest())
    assert worker_growth < MAX_GROWTH, (
        f"the worker grew by {worker_growth >> 20} MiB for {csv.size >> 20} MiB"
    )
    assert web_growth < MAX_GROWTH, f"the web process grew by {web_growth >> 20} MiB for {csv.size >> 20} MiB"
