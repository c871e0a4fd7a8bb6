"""`make run`'s script brings up web, worker, beat and sandboxd, and stops them all on Ctrl-C."""

import os
import shutil
import signal
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

import httpx
import pytest

from tests.sandboxd_process import ROOT, free_port


def wait_for(url: str, seconds: float = 90) -> httpx.Response:
    deadline = time.monotonic() + seconds
    while True:
        try:
            return httpx.get(url, timeout=2)
        except httpx.HTTPError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.3)


def said_until_ready(process: subprocess.Popen[bytes], seconds: float = 180) -> list[str]:
    """The lines scripts/run printed, up to its "ready:" line (which must come)."""
    lines: list[str] = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        line = process.stdout.readline().decode(errors="replace").rstrip()
        if not line and process.poll() is not None:
            break
        lines.append(line)
        if line.startswith("ready:"):
            return lines
    raise AssertionError("scripts/run never said it was ready:\n" + "\n".join(lines))


def children_of(pid: int) -> set[int]:
    found = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as stat_file:
                    stat = stat_file.read()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.add(int(entry))
    return found


@pytest.fixture
def app_stack(tmp_path):
    web_port, sandboxd_port = free_port(), free_port()
    data_dir = Path(tempfile.mkdtemp(prefix="make-run-test-"))
    data_dir.chmod(0o755)  # reachable by the unprivileged sandbox user
    env = dict(os.environ)
    env.update(
        WEB_PORT=str(web_port),
        SANDBOXD_URL=f"http://127.0.0.1:{sandboxd_port}",
        SANDBOXD_TOKEN="run-test-token",
        SANDBOXD_DATA_DIR=str(data_dir),
        SANDBOXD_POOL_SIZE="0",
        DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}",
        SECRET_KEY="run-test-secret",
    )
    subprocess.run(
        [f"{ROOT}/.venv/bin/python", "manage.py", "migrate", "-v", "0"], cwd=ROOT, env=env, check=True
    )
    process = subprocess.Popen(
        ["scripts/run"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    yield process, web_port, sandboxd_port
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    process.stdout.close()
    shutil.rmtree(data_dir)


def test_run_starts_everything_and_ctrl_c_stops_it(app_stack):
    process, web_port, sandboxd_port = app_stack
    said = said_until_ready(process)
    ready = f"ready: open http://127.0.0.1:{web_port}"
    assert said[-1] == ready, said  # the last line, once every part answers /healthz
    assert httpx.get(f"http://127.0.0.1:{web_port}/healthz", timeout=10).status_code == 200
    assert not [line for line in said if "celery@" in line or "[config]" in line], said  # no banner
    # No line a request (its readiness checks polled /healthz every second): they are in a file.
    assert not [line for line in said if '"GET /' in line], said
    probe = f"/accounts/login/?probe={uuid.uuid4().hex}"
    assert httpx.get(f"http://127.0.0.1:{web_port}{probe}", timeout=10).status_code == 200
    assert wait_for(f"http://127.0.0.1:{web_port}/livez").json() == {"status": "ok"}
    for page in ("/accounts/login/", "/static/app/session.js", "/static/vendor/plotly.min.js"):
        assert httpx.get(f"http://127.0.0.1:{web_port}{page}", timeout=10).status_code == 200, page
    assert wait_for(f"http://127.0.0.1:{sandboxd_port}/health").json()["status"] == "ok"
    checks = httpx.get(f"http://127.0.0.1:{web_port}/healthz", timeout=10).json()["checks"]
    assert all(checks[part]["ok"] for part in ("database", "redis", "sandboxd")), checks
    services = children_of(process.pid)
    assert len(services) == 4, "web, worker, beat and sandboxd"

    os.killpg(process.pid, signal.SIGINT)  # what Ctrl-C in the terminal does
    process.wait(timeout=60)
    assert f"GET {probe} " in (ROOT / "var" / "log" / "web-access.log").read_text()
    assert probe not in process.stdout.read().decode(errors="replace")
    assert not any(os.path.exists(f"/proc/{pid}") for pid in services)
    with pytest.raises(httpx.HTTPError):
        httpx.get(f"http://127.0.0.1:{web_port}/healthz", timeout=2)
