"""Run a real Celery worker (`celery -A config worker`) as a subprocess for integration tests."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from tests.sandboxd_process import ROOT


@dataclass
class CeleryWorkerProcess:
    log_path: Path
    env: dict[str, str] = field(default_factory=dict)
    queues: str = "celery"
    process: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 60.0) -> CeleryWorkerProcess:
        environment = {**os.environ, **self.env}
        self.log = self.log_path.open("ab")
        self.process = subprocess.Popen(
            [str(ROOT / ".venv" / "bin" / "celery"), "-A", "config", "worker", "--loglevel=INFO",
             "--concurrency=2", "--without-gossip", "--without-mingle", "-n", f"test-{time.time_ns()}@%h",
             "-Q", self.queues],
            cwd=ROOT, env=environment, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
        deadline = time.monotonic() + timeout
        while "ready." not in self.read_log():
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"the Celery worker did not start:\n{self.read_log()}")
            time.sleep(0.2)
        return self

    def read_log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def kill(self) -> None:
        """SIGKILL the worker and its pool processes at once, as a crash or an OOM kill would."""
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
