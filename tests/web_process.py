"""Run the web server (scripts/web: config.asgi under uvicorn) as a subprocess for tests."""

from __future__ import annotations

import contextlib
import os
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx

from tests.sandboxd_process import ROOT, free_port


@contextlib.contextmanager
def web_server(env: dict[str, str], *, name: str) -> Iterator[str]:
    """The web server on a free port with ``env`` added to ours, started as `make run` starts
    it; yields its base URL, stops it after."""
    port = free_port()
    log_path = Path(tempfile.mkdtemp(prefix=f"web-{name}-")) / "web.log"
    with log_path.open("ab") as log:
        process = subprocess.Popen(
            [str(ROOT / "scripts" / "web"), "127.0.0.1", str(port)],
            cwd=ROOT, env={**os.environ, **env}, stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while not _healthy(url):
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            process.wait()
            raise RuntimeError(f"the web server did not start:\n{log_path.read_text(errors='replace')}")
        time.sleep(0.1)
    try:
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _healthy(url: str) -> bool:
    try:
        return httpx.get(f"{url}/livez", timeout=1).status_code == 200
    except httpx.HTTPError:
        return False
