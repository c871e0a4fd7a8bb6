"""Run a real sandboxd (`manage.py sandboxd`) as a subprocess for tests and benchmarks."""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class SandboxdProcess:
    data_dir: Path
    log_path: Path
    settings: dict[str, str] = field(default_factory=dict)
    port: int = field(default_factory=free_port)
    root: Path = ROOT  # the checkout whose sandboxd runs (benchmarks/round_trip_since.py: another)
    token: str = field(default_factory=lambda: secrets.token_urlsafe(24))
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def environment(self) -> dict[str, str]:
        env = dict(os.environ)
        env.update(
            SANDBOXD_URL=self.url,
            SANDBOXD_TOKEN=self.token,
            SANDBOXD_DATA_DIR=str(self.data_dir),
            DJANGO_SETTINGS_MODULE="config.settings",
            SECRET_KEY=env.get("SECRET_KEY") or "test-secret",
        )
        env.update(self.settings)
        return env

    def start(self, timeout: float = 60.0) -> SandboxdProcess:
        self.log = self.log_path.open("ab")
        self.process = subprocess.Popen(
            [sys.executable, str(self.root / "manage.py"), "sandboxd"],
            cwd=self.root,
            env=self.environment(),
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                self.log.close()
                raise RuntimeError(f"sandboxd exited with {self.process.returncode}:\n{self.read_log()}")
            if self.healthy():
                return self
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"sandboxd did not start within {timeout}s:\n{self.read_log()}")

    def view(self, path: Path) -> Path:
        """``path`` as the running sandboxd sees it, in its own mount namespace."""
        assert self.process is not None
        return Path(f"/proc/{self.process.pid}/root") / path.relative_to("/")

    def healthy(self) -> bool:
        try:
            return httpx.get(f"{self.url}/health", timeout=1).status_code == 200
        except httpx.HTTPError:
            return False

    def read_log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.log.close()

    def crash(self) -> None:
        """SIGKILL: no clean shutdown, as in a crash or an OOM kill."""
        assert self.process is not None
        self.process.kill()
        self.process.wait()
        self.log.close()


@contextlib.contextmanager
def own_sandboxd_process(
    settings: dict[str, str], *, prefix: str, start_timeout: float = 60.0
) -> Iterator[SandboxdProcess]:
    """A sandboxd with ``settings``, started in a folder of its own (not pytest's tmp_path, whose
    clean-up cannot remove mounted workdirs); stopped and its folder removed after the block."""
    base = Path(tempfile.mkdtemp(prefix=prefix))
    base.chmod(0o755)  # the unprivileged sandbox user must reach the workdirs below
    process = SandboxdProcess(data_dir=base / "data", log_path=base / "sandboxd.log", settings=settings)
    try:
        yield process.start(timeout=start_timeout)
    finally:
        process.stop()
        shutil.rmtree(base, ignore_errors=True)
