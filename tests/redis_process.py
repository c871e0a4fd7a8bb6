"""A Redis of a test's own (`redis-server` as a subprocess, nothing kept on disk) that it can stop,
start and restart on the same port, as a deploy or a crash would, or pause as a hung host would."""

from __future__ import annotations

import contextlib
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import redis

from tests.sandboxd_process import free_port


@dataclass
class RedisProcess:
    port: int = field(default_factory=free_port)
    log_path: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="redis-test-")) / "redis.log")
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self, timeout: float = 10.0) -> RedisProcess:
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(
                ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
                 "--appendonly", "no", "--protected-mode", "no"],
                stdout=log, stderr=subprocess.STDOUT,
            )  # fmt: skip
        deadline = time.monotonic() + timeout
        while not self.answers():
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                log = self.log_path.read_text(errors="replace")
                raise RuntimeError(f"redis-server did not start:\n{log}")
            time.sleep(0.05)
        return self

    def stop(self) -> None:
        """Stop it (its data goes with it, as with a restart of a Redis that keeps nothing)."""
        if self.process is None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process = None

    def restart(self) -> None:
        self.stop()
        self.start()

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        """Redis hangs (SIGSTOP): connections stay open and nothing answers, until the block ends."""
        assert self.process is not None
        self.process.send_signal(signal.SIGSTOP)
        try:
            yield
        finally:
            self.process.send_signal(signal.SIGCONT)

    def answers(self) -> bool:
        client = redis.Redis(port=self.port, socket_timeout=1, socket_connect_timeout=1)
        try:
            return bool(client.ping())
        except redis.RedisError:
            return False
        finally:
            client.close()
