"""A 1 GB CSV uploaded through the API until the sandbox has described it, beside `cp` of it.

Run from the project root: ``.venv/bin/python benchmarks/uploads.py``. The script generates a CSV
of at least SIZE bytes (fixed seed; ints, floats, strings, dates, empty cells, quoted text) in a
temporary folder on the same disk as the run's MEDIA_ROOT, and copies it with ``cp`` CP_RUNS
times, each to a fresh target (the baseline; the page cache is left alone, dirty pages are written
back before each run). It then starts the real stack there: sandboxd, a fresh SQLite database, a
Celery worker on a Redis database of its own (REDIS_URL, flushed first) and daphne serving
config.asgi. It makes an API token (``manage.py apitoken``) and a session (POST /api/sessions),
places a small CSV first (the session's sandbox is made then, as it would be by anything before),
then POSTs the big one as multipart field "file" from a plain socket (``sendfile``: the client
costs next to nothing) and polls the event log until its ``file_added``. Meanwhile a watcher
polls, every POLL_SECONDS, the files the web process and the worker hold open (daphne's request
body, Django's spooled body, the multipart parser's upload file), MEDIA_ROOT and the sandbox's
workdir (the file arriving, then renamed into place), and the resident memory of every process;
each process's peak (VmHWM) is reset just before the upload. It prints the figures, the stages
and the peaks as Markdown and writes them to benchmarks/results/uploads.md. Every process it
starts is stopped and every file it makes removed, on exit, on error and on Ctrl-C.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import random
import socket
import sqlite3
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402
import redis  # noqa: E402

from analyst.files.describer_cell import describer_source  # noqa: E402  (the worker's own cell)
from benchmarks import harness  # noqa: E402
from benchmarks.harness import load_average, step  # noqa: E402
from benchmarks.sandbox import TEMPLATE_PYTHON, cpu_ticks, parents  # noqa: E402
from sandboxes import Sandbox  # noqa: E402
from tests.sandboxd_process import SandboxdProcess, free_port  # noqa: E402
from tests.worker_process import CeleryWorkerProcess  # noqa: E402

SIZE = int(os.environ.get("BENCH_UPLOAD_BYTES", "1000000000"))  # bytes of CSV, at least ("1 GB")
SEED = 20261201
NAME = "orders.csv"
WARM_UP_NAME = "warm_up.csv"
CP_RUNS = 3
POLL_SECONDS = 0.02
EVENT_POLL_SECONDS = 0.05
REDIS_URL = "redis://127.0.0.1:6379/11"  # a database of its own: flushed before and after
BOUNDARY = "bench-upload-boundary-4b1d"
# Limits raised for the run: the defaults may refuse a 1 GB file (see the report's header).
LIMITS = {
    "ANALYST_MAX_UPLOAD": "2G",
    "SANDBOXD_MAX_UPLOAD": "2G",
    "SANDBOXD_DISK_LIMIT": "3G",
}

# Targets.
THROUGHPUT_RATIO = 0.5  # upload-to-described throughput against cp's
DESCRIPTION_SECONDS = 5.0

DESCRIBED_TIMEOUT = 600.0  # the 202 → file_added, at most
TIME_BUDGET = 1200  # hard stop (seconds)


# ---- the CSV -------------------------------------------------------------------------------

HEADER = (
    "order_id,ordered_at,ship_date,customer_id,customer_name,region,product,category,quantity,"
    "unit_price,discount,total,status,rating,note\n"
)
FIRST_NAMES = ["Ana", "Bo", "Chloé", "Dmitri", "Emeka", "Fatima", "Gao", "Hiro", "Inès", "José", "Kofi"]
LAST_NAMES = ["Silva", "Nguyen", "Müller", "Okafor", "Rossi", "Kowalski", "Haddad", "Tanaka", "Smith"]
REGIONS = ["North", "South", "East", "West", "Central", "Île-de-France", "Overseas"]
PRODUCTS = {
    "office": ["stapler", "desk lamp", "A4 paper (500)", "whiteboard"],
    "electronics": ["USB-C cable", 'monitor 27"', "keyboard", "headset"],
    "home": ["kettle", "towel set", "coffee grinder"],
    "garden": ["hose 20m", "secateurs", "seed tray"],
}
STATUSES = ["shipped", "delivered", "returned", "cancelled", "pending"]
NOTES = ["", "", "", "gift wrap", "call before delivery", '"leave at door, side gate"', "fragile"]
ROW_TAILS = 200_000  # distinct rows after the id, cycled through by a stride


def quoted(text: str) -> str:
    """A CSV field in quotes, its own quotes doubled."""
    return '"' + text.replace('"', '""') + '"'


def row_tails(rng: random.Random) -> list[str]:
    """Everything after order_id for ROW_TAILS rows, each ending in a newline."""
    year = 1735689600  # 2025-01-01 UTC
    tails = []
    categories = list(PRODUCTS)
    for _ in range(ROW_TAILS):
        ordered = year + rng.randrange(365 * 86400)
        category = rng.choice(categories)
        quantity = rng.randint(1, 20)
        price = round(rng.lognormvariate(3.0, 0.9), 2)
        discount = rng.choice([0.0, 0.0, 0.05, 0.1, 0.2])
        rating = "" if rng.random() < 0.3 else f"{rng.randint(1, 10) / 2:.1f}"
        tails.append(
            f"{time.strftime('%Y-%m-%d %H:%M:%S', time.gmtime(ordered))},"
            f"{time.strftime('%Y-%m-%d', time.gmtime(ordered + rng.randrange(1, 10) * 86400))},"
            f"{rng.randrange(1, 250_000)},{rng.choice(FIRST_NAMES)} {rng.choice(LAST_NAMES)},"
            f"{rng.choice(REGIONS)},{quoted(rng.choice(PRODUCTS[category]))},{category},{quantity},"
            f"{price:.2f},{discount},{quantity * price * (1 - discount):.2f},{rng.choice(STATUSES)},"
            f"{rating},{rng.choice(NOTES)}\n"
        )
    return tails


def write_csv(path: Path, size: int) -> int:
    """A CSV of at least ``size`` bytes at ``path``; returns its number of data rows."""
    tails = row_tails(random.Random(SEED))
    written, rows, block = 0, 0, 50_000
    with path.open("w", encoding="utf-8", newline="") as out:
        out.write(HEADER)
        written += len(HEADER.encode())
        while written < size:
            lines = "".join(f"{i},{tails[i * 7919 % ROW_TAILS]}" for i in range(rows + 1, rows + block + 1))
            out.write(lines)
            written += len(lines.encode())
            rows += block
    return rows


# ---- the baseline --------------------------------------------------------------------------


def cp_runs(source: Path, folder: Path) -> list[float]:
    """Seconds for each of CP_RUNS ``cp`` of ``source`` to a fresh file in ``folder`` (same disk);
    dirty pages are written back before each run, and the copy removed after it (neither timed)."""
    samples = []
    for run in range(CP_RUNS):
        target = folder / f"cp-{run}.csv"
        os.sync()
        start = time.perf_counter()
        subprocess.run(["cp", str(source), str(target)], check=True)
        samples.append(time.perf_counter() - start)
        if target.stat().st_size != source.stat().st_size:
            raise RuntimeError("cp made a file of another size")
        target.unlink()
    return samples


def floor_runs(source: Path) -> list[float]:
    """Seconds for each of CP_RUNS uploads of ``source``, sent as the API's are, to the web
    server alone (scripts/web's flags) serving benchmarks/discard_body.py: from the request's
    first byte to its answer, the body read and thrown away. No upload into the app can beat it."""
    port = free_port()
    command = [str(ROOT / ".venv" / "bin" / "uvicorn"), "benchmarks.discard_body:app", "--port", str(port)]
    command += ["--lifespan", "off", "--loop", "asyncio", "--http", "httptools"]  # as scripts/web runs
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while not _listening(port):
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the floor's server did not start: {command}")
            time.sleep(0.1)
        samples = []
        for _ in range(CP_RUNS):
            sent = send_file(f"http://127.0.0.1:{port}", "/", {}, source, NAME)
            if sent.answer != len(multipart_head(NAME)) + source.stat().st_size + len(MULTIPART_TAIL):
                raise RuntimeError(f"the floor's server read {sent.answer} bytes")
            samples.append(sent.answered - sent.start)
        return samples
    finally:
        process.terminate()
        process.wait(timeout=10)


def _listening(port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
        return True
    return False


# ---- /proc ---------------------------------------------------------------------------------


def status_kib(pid: int, key: str) -> int:
    """A /proc/<pid>/status figure (VmRSS, VmHWM) in KiB; 0 once the process is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(f"{key}:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def reset_peak(pid: int) -> None:
    """Set the process's VmHWM back to its current RSS (Linux ≥ 4.0: clear_refs 5)."""
    with contextlib.suppress(OSError):
        Path(f"/proc/{pid}/clear_refs").write_text("5")


def descendants(root: int) -> list[int]:
    table = parents()
    found, frontier = [], [root]
    while frontier:
        pid = frontier.pop()
        children = [child for child, parent in table.items() if parent == pid]
        found += children
        frontier += children
    return found


@dataclass
class OpenFile:
    """A regular file some process held open, as the watcher saw it."""

    target: str  # readlink of /proc/<pid>/fd/<n>
    first_seen: float
    size: int = 0
    position: int = 0  # the descriptor's offset (how far it was read or written)
    last_growth: float = 0.0
    full_at: float | None = None


def open_files(pid: int) -> Iterator[tuple[int, str, int, int]]:
    """(inode, target, size, position) of every regular file ``pid`` holds open."""
    fd_dir = Path(f"/proc/{pid}/fd")
    with contextlib.suppress(OSError):
        for entry in os.listdir(fd_dir):
            with contextlib.suppress(OSError):
                target = os.readlink(fd_dir / entry)
                if not target.startswith("/") or target.startswith("/dev/"):
                    continue
                info = os.stat(fd_dir / entry)
                position = 0
                for line in Path(f"/proc/{pid}/fdinfo/{entry}").read_text().splitlines():
                    if line.startswith("pos:"):
                        position = int(line.split()[1])
                yield info.st_ino, target, info.st_size, position


# ---- the watcher ---------------------------------------------------------------------------


@dataclass
class Watch:
    """What the watcher saw; times are time.time() (comparable with events' created_at)."""

    web: dict[int, OpenFile] = field(default_factory=dict)  # by inode
    worker: dict[int, OpenFile] = field(default_factory=dict)
    media_full: float | None = None
    sandbox_temp_seen: float | None = None
    sandbox_temp_size: int = 0
    sandbox_full: float | None = None
    rss_peak_kib: dict[str, int] = field(default_factory=dict)


class Watcher:
    """Polls, on a thread of its own, the files and memory of the stack while the upload runs."""

    def __init__(self, stack: Stack, body_bytes: int, file_bytes: int) -> None:
        self.stack, self.body_bytes, self.file_bytes = stack, body_bytes, file_bytes
        self.seen = Watch()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, name="upload-watch", daemon=True)
        self.groups: dict[str, list[int]] = {}

    def __enter__(self) -> Watcher:
        self._find_processes()
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join()

    def _find_processes(self) -> None:
        stack = self.stack
        worker = stack.worker.process.pid  # type: ignore[union-attr]
        server = stack.sandboxd.process.pid  # type: ignore[union-attr]
        self.groups = {
            "web": [stack.web.pid],
            "worker": [worker, *descendants(worker)],
            "sandboxd": [server],
            "sandboxes": [pid for pid in descendants(server)],
        }

    def _run(self) -> None:
        ticks = 0
        while not self.stop.is_set():
            now = time.time()
            self._files(now)
            if ticks % 25 == 0:  # kernels come and go (a code context of its own describes)
                server = self.stack.sandboxd.process.pid  # type: ignore[union-attr]
                self.groups["sandboxes"] = descendants(server)
            for group, pids in self.groups.items():
                rss = (
                    sum(status_kib(pid, "VmRSS") for pid in pids)
                    if group == "sandboxes"
                    else max((status_kib(pid, "VmRSS") for pid in pids), default=0)
                )
                self.seen.rss_peak_kib[group] = max(self.seen.rss_peak_kib.get(group, 0), rss)
            ticks += 1
            time.sleep(POLL_SECONDS)

    def _files(self, now: float) -> None:
        seen = self.seen
        for pid in self.groups["web"]:
            self._note(seen.web, pid, now, self.body_bytes)
        for pid in self.groups["worker"]:
            self._note(seen.worker, pid, now, self.file_bytes, under=str(self.stack.media))
        if seen.media_full is None:
            for path in self.stack.media.rglob(f"{NAME.removesuffix('.csv')}*"):
                with contextlib.suppress(OSError):
                    if path.stat().st_size >= self.file_bytes:
                        seen.media_full = now
        if seen.sandbox_full is None:
            self._sandbox(now)

    def _note(
        self, table: dict[int, OpenFile], pid: int, now: float, full: int, under: str | None = None
    ) -> None:
        for inode, target, size, position in open_files(pid):
            if under is not None and not target.startswith(under):
                continue
            if under is None and size < 1 << 20 and inode not in table:
                continue  # the web process's own small files: logs, the database
            entry = table.setdefault(inode, OpenFile(target, now))
            if size > entry.size or position > entry.position:
                entry.last_growth = now
            entry.size, entry.position = max(entry.size, size), max(entry.position, position)
            # The web side's files are written (full: their size); the worker's is read (its offset).
            reached = entry.position if under is not None else entry.size
            if entry.full_at is None and reached >= min(full, self.file_bytes):
                entry.full_at = now

    def _sandbox(self, now: float) -> None:
        seen = self.seen
        with contextlib.suppress(OSError):
            for workdir in os.scandir(self.stack.workdirs):
                data = Path(workdir.path) / "data"
                with contextlib.suppress(OSError):
                    for entry in os.scandir(data):
                        size = entry.stat(follow_symlinks=False).st_size
                        if entry.name.startswith(".upload-") and size > 1 << 20:
                            seen.sandbox_temp_seen = seen.sandbox_temp_seen or now
                            seen.sandbox_temp_size = max(seen.sandbox_temp_size, size)
                        elif entry.name == NAME and size >= self.file_bytes:
                            seen.sandbox_full = now


# ---- the stack -----------------------------------------------------------------------------


@dataclass
class Stack:
    sandboxd: SandboxdProcess
    worker: CeleryWorkerProcess
    web: subprocess.Popen[bytes]
    url: str
    token: str
    media: Path
    workdirs: Path  # as sandboxd sees them


def flush_redis() -> None:
    client = redis.Redis.from_url(REDIS_URL)
    try:
        client.flushdb()
    finally:
        client.close()


def manage(env: dict[str, str], *args: str) -> str:
    return subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), *args],
        cwd=ROOT,
        env={**os.environ, **env},
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()


# The web server: the project's own (scripts/web, as `make run` starts it; daphne before there
# was one), or another to compare it with (BENCH_WEB_SERVER=daphne or uvicorn).
SCRIPT = ROOT / "scripts" / "web"
WEB_SERVER = os.environ.get("BENCH_WEB_SERVER", "scripts/web" if SCRIPT.exists() else "daphne")


def web_command(port: int) -> list[str]:
    if WEB_SERVER == "scripts/web":
        return [str(SCRIPT), "127.0.0.1", str(port)]  # it execs the server: its pid is ours
    if WEB_SERVER == "uvicorn":
        return [str(ROOT / ".venv" / "bin" / "uvicorn"), "--host", "127.0.0.1", "--port", str(port),
                "--lifespan", "off", "config.asgi:application"]  # fmt: skip
    return [
        str(ROOT / ".venv" / "bin" / "daphne"),
        "-b",
        "127.0.0.1",
        "-p",
        str(port),
        "config.asgi:application",
    ]


@contextlib.contextmanager
def web(env: dict[str, str], log_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """The web server serving config.asgi on a free port (as tests/daphne_process.py starts
    daphne), kept as a process so that its memory and open files can be watched."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with log_path.open("ab") as log:
        process = subprocess.Popen(
            web_command(port), cwd=ROOT, env={**os.environ, **env}, stdout=log, stderr=subprocess.STDOUT
        )
    try:
        deadline = time.monotonic() + 30
        while not _healthy(url):
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{WEB_SERVER} did not start:\n{log_path.read_text(errors='replace')}")
            time.sleep(0.1)
        yield process, url
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


@contextlib.contextmanager
def stack(folder: Path) -> Iterator[Stack]:
    """Everything started, in ``folder``; everything stopped on the way out, whatever happens."""
    with contextlib.ExitStack() as exits:
        step(f"sandboxd; a fresh SQLite database; Redis {REDIS_URL}; limits {LIMITS}")
        server = SandboxdProcess(
            data_dir=folder / "sandboxd",
            log_path=folder / "sandboxd.log",
            settings={
                "SANDBOXD_POOL_SIZE": "1",
                "SANDBOXD_POOL_MAX": "1",
                "SANDBOXD_DEFAULT_TTL": "1200",
                **LIMITS,
            },
        )
        exits.callback(server.stop)  # its workdir mounts vanish with its mount namespace
        server.start()
        media = folder / "media"
        env = {
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "SECRET_KEY": "benchmark",
            "DEBUG": "0",  # as deployed, whatever .env says
            "DATABASE_URL": f"sqlite:///{folder / 'db.sqlite3'}",
            "REDIS_URL": REDIS_URL,
            "CELERY_QUEUE": "celery",
            "MEDIA_ROOT": str(media),
            "SANDBOXD_URL": server.url,
            "SANDBOXD_TOKEN": server.token,
            "ANALYST_SANDBOX_TTL": "1200",
            **LIMITS,
        }
        flush_redis()
        exits.callback(flush_redis)
        manage(env, "migrate", "--noinput", "-v", "0")
        token = manage(env, "apitoken", "bench").splitlines()[-1]
        step(f"Celery worker (concurrency 2, prefork) and {WEB_SERVER}")
        worker = CeleryWorkerProcess(log_path=folder / "worker.log", env=env)
        exits.callback(worker.stop)
        worker.start()
        process, url = exits.enter_context(web(env, folder / "web.log"))
        workdirs = server.view(server.data_dir / "sandboxes")
        yield Stack(server, worker, process, url, token, media, workdirs)


# ---- the upload ----------------------------------------------------------------------------


def multipart_head(name: str) -> bytes:
    return (
        f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n'
        "Content-Type: text/csv\r\n\r\n"
    ).encode()


MULTIPART_TAIL = f"\r\n--{BOUNDARY}--\r\n".encode()


@dataclass
class Sent:
    start: float  # time.time() as the request's first byte went
    body_sent: float  # the last byte handed to the socket
    answered: float  # the whole answer read
    status: int
    answer: dict[str, Any]


def post_file(stack: Stack, session_id: str, path: Path, name: str) -> Sent:
    headers = {"Authorization": f"Bearer {stack.token}"}
    return send_file(stack.url, f"/api/sessions/{session_id}/files", headers, path, name)


def send_file(url: str, target: str, headers: dict[str, str], path: Path, name: str) -> Sent:
    """POST ``path`` as multipart field "file" from a plain socket, the file's bytes by sendfile."""
    head, size = multipart_head(name), path.stat().st_size
    length = len(head) + size + len(MULTIPART_TAIL)
    port = int(url.rsplit(":", 1)[1])
    request = (
        f"POST {target} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
        + "".join(f"{key}: {value}\r\n" for key, value in headers.items())
        + f"Content-Type: multipart/form-data; boundary={BOUNDARY}\r\n"
        f"Content-Length: {length}\r\nConnection: close\r\n\r\n"
    ).encode()
    with socket.create_connection(("127.0.0.1", port)) as sock, path.open("rb") as source:
        start = time.time()
        sock.sendall(request + head)
        offset = 0
        while offset < size:
            offset += os.sendfile(sock.fileno(), source.fileno(), offset, size - offset)
        sock.sendall(MULTIPART_TAIL)
        body_sent = time.time()
        received = b""
        while chunk := sock.recv(1 << 16):
            received += chunk
        answered = time.time()
    head_text, _, body = received.partition(b"\r\n\r\n")
    status = int(head_text.split(b" ", 2)[1])
    try:
        answer = json.loads(body) if body else {}
    except ValueError:
        answer = {"raw": body[:2000].decode(errors="replace")}
    return Sent(start, body_sent, answered, status, answer)


def api(stack: Stack) -> httpx.Client:
    return httpx.Client(base_url=stack.url, headers={"Authorization": f"Bearer {stack.token}"}, timeout=30)


def wait_file_added(
    client: httpx.Client, session_id: str, name: str, after: int
) -> tuple[dict[str, Any], float]:
    """The ``file_added`` event of ``name`` (polling the event log), and when it was seen."""
    deadline = time.monotonic() + DESCRIBED_TIMEOUT
    while time.monotonic() < deadline:
        events = client.get(f"/api/sessions/{session_id}/events", params={"after": after}).json()["events"]
        for event in events:
            after = event["seq"]
            payload = event["payload"]
            if event["type"] == "file_added" and payload.get("name") == name:
                return event, time.time()
            if event["type"] == "error":
                raise RuntimeError(f"the upload of {name} failed: {payload}")
        time.sleep(EVENT_POLL_SECONDS)
    raise TimeoutError(f"no file_added for {name} within {DESCRIBED_TIMEOUT:.0f}s")


def last_seq(client: httpx.Client, session_id: str) -> int:
    events = client.get(f"/api/sessions/{session_id}/events").json()["events"]
    return max((event["seq"] for event in events), default=0)


def created_at(event: dict[str, Any]) -> float:
    from datetime import datetime

    return datetime.fromisoformat(event["created_at"]).timestamp()


# ---- measurements --------------------------------------------------------------------------


@dataclass
class Figures:
    size: int
    rows: int
    cp_seconds: list[float]
    floor_seconds: list[float]
    sent: Sent
    event: dict[str, Any]
    seen: float
    watch: Watch
    rss_before_kib: dict[str, int]
    cpu_seconds: dict[str, float]  # CPU time each group used from the request to file_added
    hwm_kib: dict[str, int]
    load_during: str
    same_disk: bool
    parts: DescriptionParts

    @property
    def described(self) -> float:
        return created_at(self.event)


PART_RUNS = 3


@dataclass
class DescriptionParts:
    """The description's two parts, timed again after the upload in the session's sandbox: a
    fresh code context made, asked for ``1``, closed; and the describer's ``main`` alone,
    timed inside the kernel (both the median of PART_RUNS)."""

    context_seconds: float
    whole_seconds: float  # the describer as the worker runs it: a fresh context, main, closed
    describer_seconds: float
    snapshot_seconds: float  # what follows every turn that ran code: the workdir, the file too
    snapshot_bytes: int


def env_limits(folder: Path) -> dict[str, Any]:
    """ANALYST_READING_LIMITS as the worker has them (the same environment)."""
    code = "import json; from django.conf import settings; print(json.dumps(settings.ANALYST_READING_LIMITS))"
    env = {"DJANGO_SETTINGS_MODULE": "config.settings", "SECRET_KEY": "benchmark", **LIMITS}
    env["DATABASE_URL"] = f"sqlite:///{folder / 'db.sqlite3'}"
    return dict(json.loads(manage(env, "shell", "-c", code).splitlines()[-1]))


def description_parts(running: Stack, folder: Path, limits: dict[str, Any]) -> DescriptionParts:
    with sqlite3.connect(folder / "db.sqlite3") as db:
        (sandbox_id,) = db.execute("SELECT sandbox_id FROM analyst_analysissession").fetchone()
    server = running.sandboxd
    request = json.dumps({"path": f"data/{NAME}", "options": {}, "limits": limits})
    code = (
        f"{describer_source()}\nimport json as _json, time as _time\n_started = _time.perf_counter()\n"
        f"main(_json.loads({request!r}))\nprint('@@seconds', _time.perf_counter() - _started)\n"
    )
    contexts, wholes, describers = [], [], []
    sandbox = Sandbox.connect(sandbox_id, url=server.url, token=server.token)
    try:
        for _ in range(PART_RUNS):
            start = time.perf_counter()
            context = sandbox.create_code_context()
            context.run_code("1")
            context.close()
            contexts.append(time.perf_counter() - start)
            start = time.perf_counter()
            context = sandbox.create_code_context()
            try:
                stdout = context.run_code(code, timeout=120).stdout
            finally:
                context.close()
            wholes.append(time.perf_counter() - start)
            seconds = [line for line in stdout.splitlines() if line.startswith("@@seconds ")]
            if not seconds:
                raise RuntimeError(f"the describer said no time: {stdout[-2000:]}")
            describers.append(float(seconds[-1].split()[1]))
        start = time.perf_counter()
        snapshot = sandbox.snapshot()
        snapshot_seconds = time.perf_counter() - start
        Sandbox.delete_snapshot(snapshot.snapshot_id, url=server.url, token=server.token)
    finally:
        sandbox.close()  # not killed: the session keeps it
    return DescriptionParts(
        statistics.median(contexts),
        statistics.median(wholes),
        statistics.median(describers),
        snapshot_seconds,
        snapshot.size,
    )


def watched_processes(running: Stack) -> dict[str, list[int]]:
    worker = running.worker.process.pid  # type: ignore[union-attr]
    return {
        "web": [running.web.pid],
        "worker": [worker, *descendants(worker)],
        "sandboxd": [running.sandboxd.process.pid],  # type: ignore[union-attr]
    }


def measure(folder: Path) -> Figures:
    source = folder / "source" / NAME
    source.parent.mkdir()
    step(f"generating a CSV of at least {SIZE / 1e9:.1f} GB")
    rows = write_csv(source, SIZE)
    size = source.stat().st_size
    (folder / "media").mkdir()
    same_disk = source.stat().st_dev == (folder / "media").stat().st_dev
    step(f"cp of it, {CP_RUNS} times")
    cp_seconds = cp_runs(source, source.parent)
    step(f"the same upload to the web server alone, throwing the body away, {CP_RUNS} times")
    floor_seconds = floor_runs(source)
    warm_up = folder / "source" / WARM_UP_NAME
    warm_up.write_text("a,b,c\n1,2.5,x\n2,3.5,y\n")
    with stack(folder) as running, api(running) as client:
        session_id = client.post("/api/sessions", json={"title": "upload benchmark"}).json()["id"]
        step("a small CSV first: the session's sandbox is made, every process warmed up")
        sent = post_file(running, session_id, warm_up, WARM_UP_NAME)
        if sent.status != 202:
            raise RuntimeError(f"the warm-up upload was answered {sent.status}: {sent.answer}")
        wait_file_added(client, session_id, WARM_UP_NAME, 0)
        after = last_seq(client, session_id)
        processes = watched_processes(running)
        for pid in (pid for pids in processes.values() for pid in pids):
            reset_peak(pid)
        before = {group: max(status_kib(pid, "VmRSS") for pid in pids) for group, pids in processes.items()}
        ticks = {group: sum(cpu_ticks(pid) for pid in pids) for group, pids in processes.items()}
        os.sync()
        step(f"uploading {size / 1e9:.2f} GB")
        load_start = load_average()
        body = len(multipart_head(NAME)) + size + len(MULTIPART_TAIL)
        with Watcher(running, body, size) as watcher:
            sent = post_file(running, session_id, source, NAME)
            if sent.status != 202:
                raise RuntimeError(f"the upload was answered {sent.status}: {sent.answer}")
            step(f"answered 202 after {sent.answered - sent.start:.1f} s; waiting for file_added")
            event, seen = wait_file_added(client, session_id, NAME, after)
            time.sleep(3 * POLL_SECONDS)
        hwm = {group: max(status_kib(pid, "VmHWM") for pid in pids) for group, pids in processes.items()}
        hertz = os.sysconf("SC_CLK_TCK")
        cpu = {
            group: (sum(cpu_ticks(pid) for pid in pids) - ticks[group]) / hertz
            for group, pids in processes.items()
        }
        if event["payload"].get("size") != size:
            raise RuntimeError(f"file_added says {event['payload'].get('size')} bytes, {size} were sent")
        return Figures(
            size=size,
            rows=rows,
            cp_seconds=cp_seconds,
            floor_seconds=floor_seconds,
            sent=sent,
            event=event,
            seen=seen,
            watch=watcher.seen,
            rss_before_kib=before,
            cpu_seconds=cpu,
            hwm_kib=hwm,
            load_during=f"{load_start} → {load_average()}",
            same_disk=same_disk,
            parts=description_parts(running, folder, env_limits(folder)),
        )


# ---- report --------------------------------------------------------------------------------


def mb_s(size: int, seconds: float) -> str:
    return f"{size / 1e6 / seconds:,.0f} MB/s"


def mib(kib: int) -> str:
    return f"{kib / 1024:,.0f} MiB"


def row(measure: str, value: str, baseline: str = "", target: str = "", passed: bool | None = None) -> str:
    verdict = "" if passed is None else "pass" if passed else "**FAIL**"
    return f"| {measure} | {value} | {baseline} | {target} | {verdict} |"


def web_files(watch: Watch) -> tuple[OpenFile | None, OpenFile | None, OpenFile | None]:
    """The web process's files for the body, in the order they were made: daphne's request body
    (twisted's TemporaryFile; uvicorn has none), Django's spooled body, the multipart parser's
    upload file."""
    anonymous = sorted(
        (f for f in watch.web.values() if "(deleted)" in f.target and ".upload" not in f.target),
        key=lambda f: f.first_seen,
    )
    if WEB_SERVER != "daphne":
        anonymous.insert(0, None)  # type: ignore[arg-type]
    anonymous += [None, None]  # type: ignore[list-item]
    named = [f for f in watch.web.values() if ".upload" in f.target]
    return anonymous[0], anonymous[1], (named[0] if named else None)


def description_start(figures: Figures) -> float | None:
    """When the file was whole in the sandbox (renamed into place), else the worker's last read."""
    watch = figures.watch
    if watch.sandbox_full is not None:
        return watch.sandbox_full
    read = [f.full_at for f in watch.worker.values() if f.full_at]
    return max(read) if read else None


def table(figures: Figures) -> str:
    cp = statistics.median(figures.cp_seconds)
    total = figures.described - figures.sent.start
    ratio = cp / total
    start = description_start(figures)
    description = figures.described - start if start is not None else None
    cp_all = ", ".join(f"{s:.2f}" for s in figures.cp_seconds)
    floor = statistics.median(figures.floor_seconds)
    rows = [
        "| Measure | Upload through the API | `cp` on the same disk (baseline) | Target | Result |",
        "|---|---|---|---|---|",
        row(
            f"Throughput, {figures.size / 1e9:.2f} GB CSV: request's first byte → `file_added` stored",
            f"{mb_s(figures.size, total)} ({total:.1f} s)",
            f"{mb_s(figures.size, cp)} (median {cp:.2f} s of {cp_all})",
        ),
        row(
            "Upload-to-described throughput ÷ cp's",
            f"{ratio:.2g}×",
            "1×",
            f"≥ {THROUGHPUT_RATIO}×",
            ratio >= THROUGHPUT_RATIO,
        ),
        row(
            "Floor: the same upload to the web server alone (scripts/web's flags), body read and"
            " thrown away: first byte → answer, median",
            f"{mb_s(figures.size, floor)} ({floor:.2f} s), {cp / floor:.2g}× cp's",
            f"{mb_s(figures.size, cp)}",
            f"≥ {THROUGHPUT_RATIO}× cp's would need it to be",
            None,
        ),
        row(
            "Description: file whole in the sandbox → `file_added` stored",
            "not seen" if description is None else f"{description:.2f} s",
            "",
            f"≤ {DESCRIPTION_SECONDS:.0f} s",
            None if description is None else description <= DESCRIPTION_SECONDS,
        ),
        row(
            "HTTP upload: first byte → 202",
            f"{mb_s(figures.size, figures.sent.answered - figures.sent.start)}"
            f" ({figures.sent.answered - figures.sent.start:.1f} s)",
        ),
    ]
    for group, label in (("web", f"web ({WEB_SERVER})"), ("worker", "worker (Celery, largest process)")):
        before, peak = figures.rss_before_kib[group], figures.hwm_kib[group]
        rows.append(
            row(
                f"Peak RSS of the {label} during the upload (VmHWM), growth",
                f"{mib(peak)}, +{mib(peak - before)}",
                f"the file: {figures.size / (1 << 20):,.0f} MiB",
                "far below the file",
                peak - before < figures.size / 1024 / 10,
            )
        )
    return "\n".join(rows)


def stage_rows(figures: Figures) -> list[tuple[str, float | None, float | None]]:
    """(stage, began, ended) in time.time(), from the watcher's sightings and the answers."""
    watch, sent = figures.watch, figures.sent
    twisted, spooled, parsed = web_files(watch)
    worker = sorted(watch.worker.values(), key=lambda f: f.first_seen)
    read = worker[0] if worker else None
    start = description_start(figures)

    def at(entry: OpenFile | None, end: bool = True) -> float | None:
        if entry is None:
            return None
        return (entry.full_at or entry.last_growth) if end else entry.first_seen

    if WEB_SERVER == "daphne":
        receive = [
            (
                "Client → daphne: the body into twisted's request file (a TemporaryFile in TMPDIR)",
                sent.start,
                at(twisted),
            ),
            (
                "daphne: twisted parses the multipart body whole in memory (`_getMultiPartArgs`), then"
                " the body is queued whole for the app",
                at(twisted),
                at(spooled, end=False),
            ),
            (
                "Django's ASGIHandler.read_body: the queued body into a SpooledTemporaryFile"
                " (FILE_UPLOAD_TEMP_DIR)",
                at(spooled, end=False),
                at(spooled),
            ),
        ]
    else:
        receive = [
            (
                f"Client → {WEB_SERVER} → Django's ASGIHandler.read_body: the body streamed into a"
                " SpooledTemporaryFile (FILE_UPLOAD_TEMP_DIR)",
                sent.start,
                at(spooled),
            ),
        ]
    return [
        ("Client's last byte handed to the socket", sent.start, sent.body_sent),
        *receive,
        ("MultiPartParser: the file part into a TemporaryUploadedFile (FILE_UPLOAD_TEMP_DIR)",
         at(spooled), at(parsed)),
        ("Upload file whole → the file whole in MEDIA_ROOT (save_whole)", at(parsed), watch.media_full),
        ("→ 202 answered (row saved, placement enqueued)", watch.media_full, sent.answered),
        ("202 → the worker opens the stored file (broker, claim, sandbox connect)",
         sent.answered, at(read, end=False)),
        ("Worker reads the stored file and streams it to sandboxd (`files.write`)",
         at(read, end=False), at(read)),
        ("sandboxd: the `.upload-*` file → renamed into data/ whole",
         watch.sandbox_temp_seen, watch.sandbox_full),
        ("Description: file whole in the sandbox → `file_added` stored", start, figures.described),
        ("`file_added` stored → seen by the client's poll", figures.described, figures.seen),
    ]  # fmt: skip


def parts(figures: Figures) -> str:
    """The description's parts, timed again alone after the upload."""
    parts = figures.parts
    return (
        "| The description's parts, timed again alone (median of"
        f" {PART_RUNS}) | took |\n|---|---|\n"
        f"| A fresh code context made, `1` run in it, closed (the describer runs in one of its own)"
        f" | {parts.context_seconds:.2f} s |\n"
        f"| The describer as the worker runs it: a fresh context, the describer's source run, closed"
        f" | {parts.whole_seconds:.2f} s |\n"
        f"| The describer's `main` on the file, timed inside the kernel | {parts.describer_seconds:.2f} s |\n"
        "| Not part of the upload: a snapshot of the session's sandbox (what follows every turn that"
        f" ran code), the file in it: {parts.snapshot_bytes / 1e9:.2f} GB | {parts.snapshot_seconds:.2f} s |"
    )


def stages(figures: Figures) -> str:
    begin = figures.sent.start
    lines = [
        "| Stage of the upload | starts at | took | throughput |",
        "|---|---|---|---|",
    ]
    for label, began, ended in stage_rows(figures):
        if began is None or ended is None:
            lines.append(f"| {label} | not seen | | |")
            continue
        took = max(ended - began, 0.0)  # a stage seen ending a poll before its start began
        moves_the_file = not label.startswith(("→", "202", "`file_added`"))
        speed = mb_s(figures.size, took) if took > 0.05 and moves_the_file else ""
        lines.append(f"| {label} | {began - begin:.2f} s | {took:.2f} s | {speed} |")
    return "\n".join(lines)


def memory(figures: Figures) -> str:
    watch = figures.watch
    lines = [
        "| Process | RSS before | peak RSS during (VmHWM) | growth | sampled peak (VmRSS) | CPU time used |",
        "|---|---|---|---|---|---|",
    ]
    for group in ("web", "worker", "sandboxd"):
        before, peak = figures.rss_before_kib[group], figures.hwm_kib[group]
        sampled = watch.rss_peak_kib.get(group, 0)
        cpu = f"{figures.cpu_seconds[group]:.1f} s"
        lines.append(
            f"| {group} | {mib(before)} | {mib(peak)} | +{mib(peak - before)} | {mib(sampled)} | {cpu} |"
        )
    kernels = watch.rss_peak_kib.get("sandboxes", 0)
    lines.append(f"| the sandboxes' processes (kernels), together | | | | {mib(kernels)} | |")
    return "\n".join(lines)


def described(figures: Figures) -> str:
    payload = figures.event["payload"]
    keep = ("rows", "columns", "format", "status", "read_error", "notes")
    shown = {key: payload[key] for key in keep if key in payload}
    tables = payload.get("tables") or []
    if tables:
        first = tables[0]
        shown["first table"] = {
            key: first.get(key) for key in ("rows", "rows_exact", "sampled", "sample_rows", "load")
        }
    return f"`file_added` said: `{json.dumps(shown, ensure_ascii=False)[:1500]}`"


def header(figures: Figures, load_at_start: str) -> str:
    defaults = default_limits()
    limits = ", ".join(f"{name}={value}" for name, value in LIMITS.items())
    return (
        f"Upload benchmark, {time.strftime('%Y-%m-%d %H:%M')}, {platform.machine()}, {os.cpu_count()} CPUs,"
        f" load average {load_at_start} at start, {figures.load_during} during the upload,"
        f" {load_average()} at end. A {figures.size:,}-byte CSV ({figures.rows:,} rows × 15 columns:"
        " ints, floats, strings, dates, empty cells, quoted text), uploaded once after a small warm-up"
        f" upload to the same session. Real {WEB_SERVER} (config.asgi), Celery worker (prefork,"
        " concurrency 2), sandboxd, SQLite, Redis; DEBUG off. The source, TMPDIR and MEDIA_ROOT on"
        f" one filesystem: {figures.same_disk}. Limits set for the run: {limits}"
        f" (defaults in config/settings.py now: {defaults})."
    )


def default_limits() -> str:
    """The defaults a deployment gets, read from config/settings.py in a clean environment."""
    code = (
        "from django.conf import settings as s; "
        "print(s.ANALYST_MAX_UPLOAD, s.SANDBOXD_MAX_UPLOAD, s.SANDBOXD_DISK_LIMIT)"
    )
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("ANALYST_", "SANDBOXD_", "DJANGO_"))
    }
    env.update(DJANGO_SETTINGS_MODULE="config.settings", SECRET_KEY="benchmark")
    try:
        out = subprocess.run(
            [sys.executable, "-c", f"import django; django.setup(); {code}"],
            cwd=ROOT, env=env, capture_output=True, text=True, check=True,
        ).stdout.split()  # fmt: skip
    except subprocess.CalledProcessError:
        return "unreadable"
    names = ("ANALYST_MAX_UPLOAD", "SANDBOXD_MAX_UPLOAD", "SANDBOXD_DISK_LIMIT")
    return ", ".join(
        f"{name}={int(value) / (1 << 20):,.0f} MiB" for name, value in zip(names, out, strict=True)
    )


def footnote() -> str:
    return (
        "Throughput: the file's bytes over the time from the request's first byte to the `file_added`"
        " event's `created_at` (stored by the worker once the sandbox has described the file). Baseline:"
        f" `cp` of the same file to a fresh file on the same disk, median of {CP_RUNS}, the page cache"
        " left as it is (the source is as hot for the upload) and dirty pages written back (`sync`,"
        " untimed) before each copy and before the upload. The client sends the multipart body from a"
        " plain socket with `sendfile`. Stages are seen by polling every"
        f" {POLL_SECONDS * 1000:.0f} ms the files the web process and the worker hold open"
        " (/proc/<pid>/fd and fdinfo), MEDIA_ROOT and the sandbox's workdir; a stage ends when its file"
        " reached the whole size (or stopped growing). Peak RSS: each process's VmHWM, reset"
        " (clear_refs) just before the upload; the worker's figure is its largest process. CPU time:"
        " user + system, from the request to `file_added` (the worker's: all its processes)."
    )


def report(folder: Path, load_at_start: str) -> str:
    figures = measure(folder)
    return (
        f"{header(figures, load_at_start)}\n\n{table(figures)}\n\n{stages(figures)}\n\n"
        f"{parts(figures)}\n\n{memory(figures)}\n\n{described(figures)}\n\n{footnote()}\n"
    )


def main() -> int:
    if not TEMPLATE_PYTHON.exists():
        print(f"the code-interpreter template is not built ({TEMPLATE_PYTHON}); run `make template`")
        return 2
    return harness.run("uploads", TIME_BUDGET, report)


if __name__ == "__main__":
    sys.exit(main())
