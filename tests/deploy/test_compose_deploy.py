"""docker-compose.yml run for real under podman-compose, from the image `make image` built: every
service's health check passes; a user signs up, uploads a CSV, asks a question whose cell draws
a chart, and sees the answer and the chart over the WebSocket, and a second client reads the
share link; a hostile cell finds no host file, no network and no other sandbox; and after
`podman-compose restart` of every service, then `down` and `up` with the volumes kept, the login,
the session, its files, its share link and its kernel's variables are all still there.

The tests run in order against one deployment (`make test-deploy`; marked deploy, so `make test`
leaves them out). Only 127.0.0.1 is ever addressed from here: the web port and the model's
control port are published on loopback, and the hostile cell sends nothing anywhere.
"""

from __future__ import annotations

import json
import re
import secrets
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.deploy.compose_stack import APP_IMAGE, ComposeStack
from tests.deploy.user_client import UserClient, events_until
from tests.printed import printed
from tests.sandboxd_process import free_port

pytestmark = [pytest.mark.deploy, pytest.mark.timeout(1800)]

SALES = b"region,sales\nNorth,120\nSouth,80\nWest,310\nEast,95\n"
CHART_CODE = (
    "import matplotlib.pyplot as plt\n"
    "df = pd.read_csv('data/sales.csv')\n"
    "totals = df.groupby('region')['sales'].sum()\n"
    "kept_across_restarts = int(totals.max()) * 10\n"
    "print('top:', totals.idxmax())\n"
    "totals.plot.bar()\n"
    "plt.show()\n"
)
ANSWER = "The West sells most: 310."
# What a kernel sees of its surroundings, printed as JSON; it reads files and asks the kernel, and
# opens no socket (so nothing is sent anywhere, loopback or not).
HOSTILE_CODE = r"""
import json, os, socket
def probe(read):
    try:
        return read()
    except OSError as exc:
        return f"refused: {exc}"
def walk_for(name, top="/", skip=("/proc", "/sys", "/dev", "/opt", "/usr")):
    found = []
    for folder, subfolders, files in os.walk(top):
        subfolders[:] = [s for s in subfolders if os.path.join(folder, s) not in skip]
        found += [os.path.join(folder, f) for f in files if f == name]
    return found
def cmdline(pid):
    return open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\0", b" ").decode()
print(json.dumps({
    "uid": os.getuid(),
    "interfaces": probe(lambda: [name for _, name in socket.if_nameindex()]),
    "net_devices": probe(lambda: [r.split(":")[0].strip() for r in open("/proc/net/dev").readlines()[2:]]),
    "routes": probe(lambda: open("/proc/net/route").read().splitlines()[1:]),
    "host_files": [p for p in ("/app/config/settings.py", "/app/manage.py", "/app/.env", "/etc/shadow",
                               "/app/var/sandboxd", "/app/var/media", "/var/lib/postgresql/data")
                   if os.path.exists(p)],
    "secrets_in_env": sorted(
        k for k in os.environ if any(w in k for w in ("SECRET", "TOKEN", "DATABASE", "REDIS", "ANTHROPIC"))
    ),
    "processes": {pid: probe(lambda pid=pid: cmdline(pid)) for pid in os.listdir("/proc") if pid.isdigit()},
    "other_users_marker": walk_for("other-user-marker.txt"),
}))
"""


@pytest.fixture(scope="module")
def stack() -> Iterator[ComposeStack]:
    if shutil.which("podman-compose") is None:
        pytest.fail("no podman-compose: make test-deploy installs it (scripts/ensure-container-tools)")
    folder = Path(tempfile.mkdtemp(prefix="analyst-deploy-"))
    deployment = ComposeStack.prepare(
        folder, project=f"analystdeploy{secrets.token_hex(3)}", web_port=free_port(), control_port=free_port()
    )
    if deployment.podman("image", "exists", APP_IMAGE, check=False).returncode != 0:
        pytest.fail(f"{APP_IMAGE} is not built: run make image (make test-deploy does)")
    try:
        deployment.up()
        deployment.wait_healthy()
        yield deployment
    finally:
        deployment.down(volumes=True)
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="module")
def journey() -> Iterator[dict[str, Any]]:
    """What the earlier tests made, for the later ones: the same deployment throughout."""
    made: dict[str, Any] = {}
    yield made
    if "user" in made:
        made["user"].close()


def script_model(stack: ComposeStack, *replies: dict[str, Any]) -> None:
    answer = httpx.post(f"{stack.control_url}/replies", json=list(replies), timeout=10)
    assert answer.status_code == 200, answer.text


def test_every_service_is_healthy_and_only_sandboxd_is_root(stack):
    users = {service: stack.exec(service, "id", "-u").stdout.strip() for service in ("web", "worker", "beat")}
    assert users == {"web": "1000", "worker": "1000", "beat": "1000"}, "the image's user, not root"
    assert stack.exec("sandboxd", "id", "-u").stdout.strip() == "0"
    health = httpx.get(f"{stack.base_url}/healthz", timeout=10).json()
    assert all(check["ok"] for check in health["checks"].values()), health
    inspected = stack.podman("image", "inspect", APP_IMAGE, "--format", "{{json .Config.Env}}")
    image_env = json.loads(inspected.stdout)
    assert not [item for item in image_env if item.split("=")[0] in ("SECRET_KEY", "SANDBOXD_TOKEN")]
    assert stack.exec("web", "test", "-e", "/app/.env").returncode != 0, "no .env baked into the image"


def test_a_user_asks_and_sees_the_answer_and_chart_live(stack, journey):
    user = UserClient(stack.base_url)
    user.sign_up_and_log_in("dana", "a-long-deploy-passphrase")
    made = user.api("POST", "/api/sessions", json={"title": "Sales"})
    assert made.status_code == 201, made.text
    session_id = made.json()["id"]
    with user.websocket(f"/ws/sessions/{session_id}/?after=0") as socket:
        upload = user.api("POST", f"/api/sessions/{session_id}/files", files={"file": ("sales.csv", SALES)})
        assert upload.status_code == 202, upload.text
        events_until(socket, "file_added")
        script_model(
            stack,
            {"reply": "anthropic_tool_call", "args": ["run_python", {"code": CHART_CODE}]},
            {"reply": "anthropic_text", "args": [ANSWER]},
        )
        question = {"content": "Which region sells most?"}
        asked = user.api("POST", f"/api/sessions/{session_id}/messages", json=question)
        assert asked.status_code == 202, asked.text
        log = events_until(socket, "turn_done")
    assert printed(log) == "top: West\n"
    assert "".join(e["payload"]["text"] for e in log if e["type"] == "assistant_delta") == ANSWER
    (chart,) = [e["payload"]["artifacts"]["image/png"] for e in log if e["type"] == "result"]
    image = user.http.get(chart["url"])
    assert image.status_code == 200 and image.content.startswith(b"\x89PNG")
    requests = httpx.get(f"{stack.control_url}/requests", timeout=10).json()
    assert len(requests) == 2 and requests[1]["json"]["messages"][-1]["content"][0]["type"] == "tool_result"

    shared = user.post_form(
        f"/sessions/{session_id}/share", {"allow_downloads": "on"}, form_page=f"/sessions/{session_id}/"
    )
    token = re.search(r"/s/([A-Za-z0-9_-]+)/", shared.text).group(1)
    journey.update(user=user, session_id=session_id, token=token, chart_url=chart["url"], turns=1)
    assert_share_link_shows_the_answer(stack, token, chart["url"])


def assert_share_link_shows_the_answer(stack: ComposeStack, token: str, chart_url: str) -> None:
    """A second client, signed in as nobody, reads the link's page, events (HTTP and WebSocket) and chart."""
    reader = UserClient(stack.base_url)
    try:
        assert reader.http.get(f"/s/{token}/").status_code == 200
        events = reader.http.get(f"/api/shared/{token}/events").json()["events"]
        assert any(e["type"] == "assistant_message" and ANSWER in json.dumps(e["payload"]) for e in events)
        with reader.websocket(f"/ws/shared/{token}/?after=0") as socket:
            live = events_until(socket, "turn_done")
        assert printed(live).startswith("top: West\n")
        artifact_id = chart_url.rstrip("/").rsplit("/", 1)[-1]
        image = reader.http.get(f"/api/shared/{token}/artifacts/{artifact_id}")
        assert image.status_code == 200 and image.content.startswith(b"\x89PNG")
        assert reader.http.get(chart_url).status_code in (302, 401, 403, 404), "the owner's URL is not public"
    finally:
        reader.close()


def run_cell(user: UserClient, session_id: str, code: str, *, turns_before: int) -> list[dict]:
    """Run a cell in the session's kernel; the events of its turn."""
    with user.websocket(f"/ws/sessions/{session_id}/?after=0") as socket:
        ran = user.api("POST", f"/api/sessions/{session_id}/cells", json={"code": code})
        assert ran.status_code == 202, ran.text
        log = events_until(socket, "turn_done", count=turns_before + 1)
    last_start = max(i for i, e in enumerate(log) if e["type"] == "turn_started")
    return log[last_start:]


def test_a_hostile_cell_finds_no_host_no_network_and_no_other_sandbox(stack, journey):
    other = UserClient(stack.base_url)
    other.sign_up_and_log_in("eve", "another-long-passphrase")
    theirs = other.api("POST", "/api/sessions", json={"title": "Theirs"}).json()["id"]
    marker = "open('other-user-marker.txt', 'w').write('private'); print('written')"
    assert printed(run_cell(other, theirs, marker, turns_before=0)) == "written\n"
    assert other.api("GET", f"/api/sessions/{journey['session_id']}").status_code == 404, "not theirs"
    other.close()

    log = run_cell(journey["user"], journey["session_id"], HOSTILE_CODE, turns_before=journey["turns"])
    journey["turns"] += 1
    assert not [e for e in log if e["type"] == "error"], log
    seen = json.loads(printed(log))
    assert seen["uid"] != 0
    assert seen["interfaces"] in (["lo"], "refused: [Errno 95] Operation not supported"), seen["interfaces"]
    assert seen["net_devices"] == ["lo"], "no network device but loopback"
    assert seen["routes"] == [], "no route anywhere"
    assert seen["host_files"] == [], "nothing of the app, its data or the container's system"
    assert seen["secrets_in_env"] == []
    # Only the sandbox's own processes (its init and the kernel, forked from the template's fork
    # server, whose command line they keep), none of the container's services.
    services = ("python manage.py", "celery", "uvicorn", "redis-server", "postgres", "sh -c")
    commands = [command for command in seen["processes"].values() if command.startswith(services)]
    assert len(seen["processes"]) <= 3 and not commands, seen["processes"].keys()
    assert seen["other_users_marker"] == [], "another user's sandbox is out of sight"


def assert_all_still_there(stack: ComposeStack, journey: dict[str, Any]) -> None:
    user, session_id = journey["user"], journey["session_id"]
    listed = user.api("GET", "/api/sessions")
    assert listed.status_code == 200 and session_id in listed.text, "still logged in, the session listed"
    files = user.api("GET", f"/api/sessions/{session_id}/files").json()
    assert "sales.csv" in json.dumps(files)
    assert user.http.get(journey["chart_url"]).content.startswith(b"\x89PNG")
    assert_share_link_shows_the_answer(stack, journey["token"], journey["chart_url"])
    log = run_cell(user, session_id, "print(kept_across_restarts)", turns_before=journey["turns"])
    journey["turns"] += 1
    assert printed(log) == "3100\n", "the kernel's variables restored from its snapshot"


def test_every_service_restarted_keeps_everything(stack, journey):
    stack.compose("restart")
    stack.wait_healthy()
    assert_all_still_there(stack, journey)


def test_down_and_up_with_the_volumes_kept_keeps_everything(stack, journey):
    stack.down(volumes=False)
    stack.up()
    stack.wait_healthy()
    assert_all_still_there(stack, journey)
