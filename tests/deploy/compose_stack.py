"""docker-compose.yml run by podman-compose for the deployment test: a project folder of its own
(the compose file as committed, a .env of test secrets and the scripted model's override), its
services' health checks run until each passes, and restarts and down/up with the volumes kept.

podman runs health checks on a timer only under systemd, and podman-compose 1.0 starts services
in order without waiting for their health: so ``wait_healthy`` runs each check itself (`podman
healthcheck run`, the compose file's own command) until it passes.
"""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
CONTAINERS_CONF = ROOT / "deploy" / "podman" / "containers.conf"
APP_IMAGE = "localhost/ai-data-analyst:latest"
SERVICES = ("redis", "postgres", "sandboxd", "web", "worker", "beat", "model")


@dataclass
class ComposeStack:
    folder: Path
    project: str
    web_port: int
    control_port: int

    @classmethod
    def prepare(cls, folder: Path, *, project: str, web_port: int, control_port: int) -> ComposeStack:
        """Lay out the project folder: the compose file, the override and a .env with new secrets."""
        shutil.copyfile(ROOT / "docker-compose.yml", folder / "docker-compose.yml")
        shutil.copyfile(ROOT / "tests" / "deploy" / "compose.test.yml", folder / "compose.test.yml")
        settings = {
            "SECRET_KEY": secrets.token_urlsafe(32),
            "SANDBOXD_TOKEN": secrets.token_urlsafe(32),
            "WEB_PORT": str(web_port),
            "MODEL_CONTROL_PORT": str(control_port),
            "DEPLOY_TEST_TESTS": str(ROOT / "tests"),
            "REDIS_IMAGE": os.environ.get("REDIS_IMAGE", "localhost/analyst-redis:7"),
            "POSTGRES_IMAGE": os.environ.get("POSTGRES_IMAGE", "localhost/analyst-postgres:15"),
            "ALLOWED_HOSTS": "127.0.0.1,localhost",
            "ANTHROPIC_API_KEY": "test-anthropic-key",
            "ANTHROPIC_BASE_URL": "http://model:8080",
            "ANALYST_DEFAULT_MODEL": "anthropic/claude-test",
            "ANALYST_MODELS": "anthropic/claude-test",
            # One warm kernel is enough for one user, and leaves the shared machine its memory.
            "SANDBOXD_POOL_SIZE": "1",
            "SANDBOXD_POOL_MAX": "2",
        }
        (folder / ".env").write_text("".join(f"{name}={value}\n" for name, value in settings.items()))
        return cls(folder, project, web_port, control_port)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.web_port}"

    @property
    def control_url(self) -> str:
        return f"http://127.0.0.1:{self.control_port}"

    def compose(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        command = ["podman-compose", "-p", self.project, "-f", "docker-compose.yml", "-f", "compose.test.yml"]
        return subprocess.run(
            [*command, *args],
            cwd=self.folder,
            env={**os.environ, "CONTAINERS_CONF": str(CONTAINERS_CONF)},
            capture_output=True,
            text=True,
            check=check,
            timeout=600,
        )

    def podman(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["podman", *args],
            env={**os.environ, "CONTAINERS_CONF": str(CONTAINERS_CONF)},
            capture_output=True,
            text=True,
            check=check,
            timeout=300,
        )

    def container(self, service: str) -> str:
        """podman-compose 1.0's name for a service's one container."""
        return f"{self.project}_{service}_1"

    def up(self) -> None:
        self.compose("up", "-d")

    def health(self, service: str) -> str:
        """Run the service's health check once: "healthy", or what it printed when it failed."""
        done = self.podman("healthcheck", "run", self.container(service), check=False)
        return "healthy" if done.returncode == 0 else (done.stdout + done.stderr).strip() or "unhealthy"

    def wait_healthy(self, services: tuple[str, ...] = SERVICES, seconds: float = 420) -> None:
        """Every service's own health check passing, in compose's start order; or the logs of the
        first that does not pass in time."""
        deadline = time.monotonic() + seconds
        for service in services:
            while (said := self.health(service)) != "healthy":
                if time.monotonic() > deadline:
                    raise AssertionError(f"{service} is not healthy ({said}):\n{self.logs(service)}")
                time.sleep(2)

    def logs(self, service: str, tail: int = 60) -> str:
        done = self.podman("logs", "--tail", str(tail), self.container(service), check=False)
        return done.stdout + done.stderr

    def exec(self, service: str, *command: str) -> subprocess.CompletedProcess[str]:
        return self.podman("exec", self.container(service), *command, check=False)

    def down(self, *, volumes: bool) -> None:
        self.compose("down", *(["-v"] if volumes else []), check=False)
        if volumes:  # podman-compose 1.0's `down -v` leaves the project's volumes and network
            for name in self.podman("volume", "ls", "-q", check=False).stdout.split():
                if name.startswith(f"{self.project}_"):
                    self.podman("volume", "rm", "-f", name, check=False)
            self.podman("network", "rm", "-f", f"{self.project}_default", check=False)
