"""Run a real Celery worker (`celery -A config worker`), or beat, as a subprocess for integration tests."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Self

from tests.sandboxd_process import ROOT


@dataclass
class CeleryProcess:
    """A Celery program (``command`` after ``celery -A config``) in a session of its own, started
    once its log says ``ready``."""

    log_path: Path
    env: dict[str, str] = field(default_factory=dict)
    process: subprocess.Popen[bytes] | None = None
    command: tuple[str, ...] = ()
    ready: str = ""

    def start(self, timeout: float = 60.0) -> Self:
        environment = {**os.environ, **self.env}
        self.log = self.log_path.open("ab")
        self.process = subprocess.Popen(
            [str(ROOT / ".venv" / "bin" / "celery"), "-A", "config", *self.command],
            cwd=ROOT, env=environment, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
        deadline = time.monotonic() + timeout
        while self.ready not in self.read_log():
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"celery {self.command[0]} did not start:\n{self.read_log()}")
            time.sleep(0.2)
        return self

    def read_log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def kill(self) -> None:
        """SIGKILL it and its children at once, as a crash or an OOM kill would."""
        assert self.process is not None
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()
        self.log.close()

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
        self.log.close()


class CeleryWorkerProcess(CeleryProcess):
    def __init__(self, log_path: Path, env: dict[str, str] | None = None, queues: str = "celery") -> None:
        command = (
            "worker", "--loglevel=INFO", "--concurrency=2", "--without-gossip", "--without-mingle",
            "-n", f"test-{time.time_ns()}@%h", "-Q", queues,
        )  # fmt: skip
        super().__init__(log_path, env or {}, command=command, ready="ready.")
        self.queues = queues


class CeleryBeatProcess(CeleryProcess):
    """Celery beat, its schedules in the database, waking at least every second."""

    def __init__(self, log_path: Path, env: dict[str, str] | None = None) -> None:
        command = ("beat", "--loglevel=DEBUG", "--max-interval=1")
        super().__init__(log_path, env or {}, command=command, ready="beat: Starting...")
