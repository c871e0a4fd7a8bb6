"""Run daphne (config.asgi: pages, static files, the API, WebSockets) as a subprocess for tests."""

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
def daphne(env: dict[str, str], *, name: str) -> Iterator[str]:
    """daphne on a free port with ``env`` added to ours; yields its base URL, stops it after."""
    port = free_port()
    log_path = Path(tempfile.mkdtemp(prefix=f"daphne-{name}-")) / "daphne.log"
    with log_path.open("ab") as log:
        process = subprocess.Popen(
            [str(ROOT / ".venv" / "bin" / "daphne"), "-b", "127.0.0.1", "-p", str(port),
             "config.asgi:application"],
            cwd=ROOT, env={**os.environ, **env}, stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while not _healthy(url):
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            process.wait()
            raise RuntimeError(f"daphne did not start:\n{log_path.read_text(errors='replace')}")
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
