"""Egress through sandboxd's forwarder, beside the same done directly on the host in the same run:

(a) a 1 GB stream read by a kernel through a tcp endpoint's forwarder (127.0.0.1:17001 inside
    the sandbox → sandboxd → a local server), timed inside the kernel, against the same read by
    this process straight from the same server, the two in turns, three times (target: the
    medians' ratio ≥ 0.5×);
(b) the first query of a fresh session: a new sandbox's PUT of its egress and then a cell that
    connects and sends one query, timed from the PUT to the cell's answer, against the host
    connecting and sending the same query (target: ≤ +100 ms). The "database" is a request/
    response server on loopback (one line in, one line out), not Postgres: the figure is the
    path's, the same for any protocol's first round trip;
(c) the same with the real thing: a fresh session's first ``sql("warehouse", "select 1")`` on the
    Postgres at 127.0.0.1:5432 (trust auth), the kernel importing SQLAlchemy and psycopg as a
    first query does, timed from the PUT to the cell's answer, against the template's own Python
    on the host doing the same (imports, engine, connect, query), timed inside that process.
    Skipped, and said so, where no Postgres answers there.

Run from the project root: ``.venv/bin/python benchmarks/egress.py`` (``--quick``: 256 MB twice and
5 sessions). Starts its own sandboxd (SANDBOXD_EGRESS_LOOPBACK=1) in a temporary folder, and each
server in a process of its own. Prints a Markdown table and writes it to benchmarks/results/egress.md.
"""

from __future__ import annotations

import socket
import socketserver
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import harness  # noqa: E402
from benchmarks.harness import load_average, step  # noqa: E402
from sandboxes import Sandbox  # noqa: E402

QUICK = "--quick" in sys.argv[1:]
STREAM_BYTES = (256 if QUICK else 1024) << 20
SESSIONS = 5 if QUICK else 15
ROUNDS = 2 if QUICK else 3
CHUNK = 1 << 20
THROUGHPUT_TARGET = 0.5
FIRST_QUERY_TARGET_MS = 100.0
TIME_BUDGET = 300

READ_ALL = """
import socket, time
started = time.perf_counter()
s = socket.create_connection((HOST, PORT))
s.sendall(b'%d\\n' % WANTED)
buffer, got = bytearray(1 << 20), 0
while size := s.recv_into(buffer):
    got += size
seconds = time.perf_counter() - started
s.close()
assert got == WANTED, got
print(seconds)
"""
QUERY = """
import socket
s = socket.create_connection((HOST, PORT))
s.sendall(b'select 1\\n')
answer = s.recv(100)
s.close()
print(answer.decode().strip())
"""


POSTGRES = ("127.0.0.1", 5432)
WAREHOUSE = {
    "kind": "postgres",
    "url": f"postgresql://postgres@{POSTGRES[0]}:{POSTGRES[1]}/postgres",
    "secret": "unused-with-trust-auth",
    "read_only": True,
    "options": {},
}
FIRST_SQL = 'print(sql("warehouse", "select 1 as one")["one"][0])'
ON_HOST_SQL = f"""
import time
started = time.perf_counter()
import sqlalchemy
engine = sqlalchemy.create_engine("postgresql+psycopg://postgres@{POSTGRES[0]}:{POSTGRES[1]}/postgres")
with engine.connect() as connection:
    one = connection.execute(sqlalchemy.text("select 1")).scalar()
assert one == 1
print((time.perf_counter() - started) * 1000)
"""


class _Stream(socketserver.BaseRequestHandler):
    """Sends as many bytes as the first line asks for, then closes."""

    def handle(self) -> None:
        wanted = int(self.request.makefile("rb").readline())
        block = memoryview(b"x" * CHUNK)
        while wanted > 0:
            self.request.sendall(block[: min(CHUNK, wanted)])
            wanted -= min(CHUNK, wanted)


class _Query(socketserver.BaseRequestHandler):
    """One line in, one line out: a query and its answer."""

    def handle(self) -> None:
        if self.request.makefile("rb").readline():
            self.request.sendall(b"1\n")


HANDLERS: dict[str, type[socketserver.BaseRequestHandler]] = {"stream": _Stream, "query": _Query}


@contextmanager
def serving(kind: str) -> Iterator[int]:
    """A server of ``kind`` in a process of its own (as a database is: not sharing our GIL); its port."""
    process = subprocess.Popen([sys.executable, __file__, "--serve", kind], stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        yield int(process.stdout.readline())
    finally:
        process.terminate()
        process.wait()


def serve(kind: str) -> None:
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), HANDLERS[kind])
    server.daemon_threads = True
    print(server.server_address[1], flush=True)
    server.serve_forever()


def cell(code: str, host: str, port: int, wanted: int = 0) -> str:
    return f"HOST, PORT, WANTED = {host!r}, {port}, {wanted}\n" + code


def on_host(code: str) -> str:
    """``code`` run here, as it runs in the kernel: what it prints."""
    out: list[str] = []
    exec(code, {"print": lambda *args: out.append(" ".join(map(str, args)))})  # noqa: S102
    return out[-1]


def throughput(connect: dict[str, str], port: int) -> tuple[list[float], list[float]]:
    """MB/s of each read directly here, and of each through the forwarder from a kernel, the two
    taken in turns (ROUNDS of each), so that a neighbour's burst of load weighs on both alike."""
    direct, forwarded = [], []
    with Sandbox.create(**connect) as sandbox:
        answer = sandbox.set_egress([{"name": "blob", "host": "127.0.0.1", "port": port, "mode": "tcp"}])
        for round in range(1, ROUNDS + 1):
            step(f"round {round}: {STREAM_BYTES >> 20} MB from the host, then through the forwarder")
            direct.append(
                STREAM_BYTES / 1e6 / float(on_host(cell(READ_ALL, "127.0.0.1", port, STREAM_BYTES)))
            )
            execution = sandbox.run_code(cell(READ_ALL, "127.0.0.1", answer["ports"]["blob"], STREAM_BYTES))
            assert execution.error is None, execution.error
            forwarded.append(STREAM_BYTES / 1e6 / float(execution.stdout.strip()))
    return direct, forwarded


def first_queries(connect: dict[str, str], port: int) -> tuple[list[float], list[float]]:
    """Per fresh session, ms from its egress PUT to its first query's answer; and the host's
    connect + query, as many times."""
    step(f"{SESSIONS} fresh sessions' first query (load {load_average()})")
    sessions, host = [], []
    for _ in range(SESSIONS):
        with Sandbox.create(**connect) as sandbox:
            sandbox.run_code("1+1")  # the session's kernel is up, as when its first turn runs
            started = time.perf_counter()
            answer = sandbox.set_egress([{"name": "db", "host": "127.0.0.1", "port": port, "mode": "tcp"}])
            execution = sandbox.run_code(cell(QUERY, "127.0.0.1", answer["ports"]["db"]))
            sessions.append((time.perf_counter() - started) * 1000)
            assert execution.stdout.strip() == "1", execution
        started = time.perf_counter()
        assert on_host(cell(QUERY, "127.0.0.1", port)) == "1"
        host.append((time.perf_counter() - started) * 1000)
        time.sleep(1)  # the pool refills
    return sessions, host


def postgres_answers() -> bool:
    try:
        socket.create_connection(POSTGRES, timeout=1).close()
    except OSError:
        return False
    return True


def first_sql_queries(connect: dict[str, str]) -> tuple[list[float], list[float]]:
    """Per fresh session, ms from its egress PUT to its first sql() on Postgres answered; and the
    template's Python on the host doing the same, as many times (each a fresh process)."""
    step(f"{SESSIONS} fresh sessions' first sql() on Postgres (load {load_average()})")
    python = harness.template_python()
    sessions, host = [], []
    for _ in range(SESSIONS):
        with Sandbox.create(**connect) as sandbox:
            sandbox.run_code("1+1")  # the session's kernel is up, as when its first turn runs
            started = time.perf_counter()
            sandbox.set_egress(
                [{"name": "warehouse", "host": POSTGRES[0], "port": POSTGRES[1], "mode": "tcp"}],
                {"connections": {"warehouse": WAREHOUSE}, "sql_timeout": 60, "sql_max_rows": 1000},
            )
            execution = sandbox.run_code(FIRST_SQL)
            sessions.append((time.perf_counter() - started) * 1000)
            assert execution.stdout.strip() == "1", execution
        done = subprocess.run([python, "-c", ON_HOST_SQL], capture_output=True, text=True, check=True)
        host.append(float(done.stdout.strip()))
        time.sleep(1)  # the pool refills
    return sessions, host


def report(folder: Path, load_at_start: str) -> str:
    with harness.sandboxd(folder / "sandboxd", {"SANDBOXD_EGRESS_LOOPBACK": "1"}) as server:
        connect = {"url": server.url, "token": server.token}
        with serving("stream") as stream_port, serving("query") as query_port:
            direct, forwarded = throughput(connect, stream_port)
            sessions, host = first_queries(connect, query_port)
        real = first_sql_queries(connect) if postgres_answers() else None
    ratio = statistics.median(forwarded) / statistics.median(direct)
    added = statistics.median(sessions) - statistics.median(host)
    verdicts = [
        "pass" if ratio >= THROUGHPUT_TARGET else "**FAIL**",
        "pass" if added <= FIRST_QUERY_TARGET_MS else "**FAIL**",
    ]
    lines = [
        f"Default isolation driver; load average at start {load_at_start}, at end {load_average()}.",
        "",
        "| Measure | Through sandboxd's forwarder | Baseline, on the host | Target | Result |",
        "|---|---|---|---|---|",
        f"| {STREAM_BYTES >> 20} MB stream read from a local server, median of {ROUNDS} (each:"
        f" {', '.join(f'{v:,.0f}' for v in forwarded)}) | {statistics.median(forwarded):,.0f} MB/s"
        f" ({ratio:.2f}×) | {statistics.median(direct):,.0f} MB/s ({', '.join(f'{v:,.0f}' for v in direct)})"
        f" | ≥ {THROUGHPUT_TARGET}× | {verdicts[0]} |",
        f"| Fresh session: egress PUT → first query's answer, p50 of {SESSIONS} (a request/response"
        f" server, not Postgres) | {statistics.median(sessions):.1f} ms (+{added:.1f} ms; max"
        f" {max(sessions):.1f} ms) | connect + query: {statistics.median(host):.2f} ms"
        f" | ≤ +{FIRST_QUERY_TARGET_MS:g} ms | {verdicts[1]} |",
    ]
    if real is None:
        lines.append("| Fresh session's first sql() on Postgres | skipped: none at 127.0.0.1:5432 | | | |")
    else:
        sql_sessions, sql_host = real
        sql_added = statistics.median(sql_sessions) - statistics.median(sql_host)
        verdict = "pass" if sql_added <= FIRST_QUERY_TARGET_MS else "**FAIL**"
        lines.append(
            f'| Fresh session: egress PUT → first `sql("warehouse", "select 1")` on Postgres'
            f" answered (SQLAlchemy and psycopg imported by it), p50 of {SESSIONS}"
            f" | {statistics.median(sql_sessions):.1f} ms (+{sql_added:.1f} ms;"
            f" max {max(sql_sessions):.1f} ms)"
            f" | the template's Python on the host, imports + engine + connect + query:"
            f" {statistics.median(sql_host):.1f} ms | ≤ +{FIRST_QUERY_TARGET_MS:g} ms | {verdict} |"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    if sys.argv[1:2] == ["--serve"]:
        serve(sys.argv[2])
    else:
        sys.exit(harness.run("egress", TIME_BUDGET, report))
