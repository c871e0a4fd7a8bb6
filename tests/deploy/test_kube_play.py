"""deploy/kubernetes/ under `podman kube play`, as far as podman plays it (tests/deploy/kube_play.py
says what is changed and what is left to a real cluster): Redis, Postgres, sandboxd with every
kernel in gVisor, web with its migrations as an init container, the worker and beat all start
from the manifests' pod templates, web answers /healthz with every part healthy on 127.0.0.1,
and a cell sent through the API runs in a sandbox and its output comes back.
"""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.deploy.compose_stack import CONTAINERS_CONF
from tests.deploy.kube_play import playable, podman_secrets
from tests.printed import printed
from tests.sandboxd_process import free_port

pytestmark = [pytest.mark.deploy, pytest.mark.timeout(900)]
PLAYED_CONTAINERS = [(name, name) for name in ("redis", "postgres", "sandboxd", "web", "worker", "beat")]


def podman(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CONTAINERS_CONF": str(CONTAINERS_CONF)}
    return subprocess.run(
        ["podman", *args], env=env, capture_output=True, text=True, check=check, timeout=600
    )


@pytest.fixture(scope="module")
def played() -> Iterator[tuple[str, Path]]:
    runsc = shutil.which("runsc")
    if runsc is None:
        pytest.fail("no runsc: scripts/ensure-system-packages installs it")
    network = f"analystkube{secrets.token_hex(3)}"
    subnet = "10.89.251.0/24"
    web_port = free_port()
    text, addresses = playable(subnet=subnet, web_port=web_port, runsc=runsc)
    folder = Path(tempfile.mkdtemp(prefix="analyst-kube-"))
    manifest = folder / "played.yaml"
    manifest.write_text(text)
    podman("network", "create", "--subnet", subnet, network)
    made = podman_secrets()
    try:
        for name, content in made.items():
            (folder / name).write_text(content)
            podman("secret", "create", name, str(folder / name))
        ips = [arg for address in addresses for arg in ("--ip", address)]
        playing = podman("kube", "play", "--network", network, *ips, str(manifest), check=False)
        assert playing.returncode == 0, playing.stderr
        yield f"http://127.0.0.1:{web_port}", manifest
    finally:
        podman("kube", "down", str(manifest), check=False)
        for name in made:
            podman("secret", "rm", name, check=False)
        for claim in podman("volume", "ls", "-q", check=False).stdout.split():
            if claim in ("media", "data-redis-0", "data-postgres-0"):
                podman("volume", "rm", "-f", claim, check=False)
        podman("network", "rm", "-f", network, check=False)
        shutil.rmtree(folder, ignore_errors=True)


def healthy(base_url: str, seconds: float = 420) -> dict:
    deadline = time.monotonic() + seconds
    checks: dict = {}
    while time.monotonic() < deadline:
        try:
            answer = httpx.get(f"{base_url}/healthz", timeout=5)
            checks = answer.json().get("checks", {})
            if answer.status_code == 200:
                return checks
        except (httpx.HTTPError, ValueError):
            pass
        time.sleep(2)
    logs = podman("logs", "--tail", "30", "sandboxd-pod-0-sandboxd", check=False)
    raise AssertionError(f"not healthy: {checks}\n{logs.stdout}{logs.stderr}")


def test_the_manifests_run_a_cell_under_gvisor(played):
    base_url, _ = played
    checks = healthy(base_url)
    assert all(check["ok"] for check in checks.values()), checks
    token = (
        podman("exec", "web-pod-0-web", "python", "manage.py", "apitoken", "kube").stdout.strip().split()[-1]
    )
    # As the Ingress would send it: TLS ends there (ANALYST_HTTPS is true in config.yaml).
    headers = {"Authorization": f"Bearer {token}", "X-Forwarded-Proto": "https"}
    api = httpx.Client(base_url=base_url, headers=headers, timeout=60)
    session = api.post("/api/sessions", json={"title": "kube"}).json()["id"]
    code = "import os; print(6 * 7, os.path.exists('/app/manage.py'))"
    assert api.post(f"/api/sessions/{session}/cells", json={"code": code}).status_code == 202
    deadline = time.monotonic() + 240
    events: list[dict] = []
    while not any(e["type"] == "turn_done" for e in events) and time.monotonic() < deadline:
        time.sleep(1)
        events = api.get(f"/api/sessions/{session}/events?after=0").json()["events"]
    assert printed(events) == "42 False\n", events
    said = podman("logs", "sandboxd-pod-0-sandboxd").stderr
    assert "isolation driver: gvisor" in said, said[-2000:]
    # Every container of the manifests still up as first started (beat once crashed at start on
    # its read-only root), web's migrations done and gone.
    for pod, container in PLAYED_CONTAINERS:
        state = podman(
            "inspect", f"{pod}-pod-0-{container}", "--format", "{{.State.Status}} {{.RestartCount}}"
        )
        if state.stdout.split() != ["running", "0"]:  # its logs hold the instance that ended too
            said = podman("logs", "--tail", "80", f"{pod}-pod-0-{container}", check=False)
            pytest.fail(f"{container}: {state.stdout} {state.stderr}\n{said.stdout}{said.stderr}")
    api.close()
