"""A sandbox's egress: a tcp endpoint's port and the proxy inside its own network namespace,
reaching the loopback servers the test started, and nothing else."""

from __future__ import annotations

import json
from collections.abc import Callable

import httpx

from sandboxes import Sandbox
from tests.sandboxd_process import SandboxdProcess
from tests.sandboxes.egress_servers import echo_server, exchange, http_server, run

PROXY = "http://127.0.0.1:17000"


def stats(sandboxd: SandboxdProcess) -> dict[str, int]:
    headers = {"Authorization": f"Bearer {sandboxd.token}"}
    return httpx.get(f"{sandboxd.url}/stats", headers=headers).json()["egress"]


def test_a_tcp_endpoint_reaches_its_server_and_is_logged(
    make_sandbox: Callable[..., Sandbox], sandboxd: SandboxdProcess
) -> None:
    sandbox = make_sandbox()
    before = stats(sandboxd)
    with echo_server(prefix=b"echo:") as port:
        answer = sandbox.set_egress([{"name": "echo", "host": "127.0.0.1", "port": port, "mode": "tcp"}])
        assert answer == {"proxy": None, "ports": {"echo": 17001}}
        assert run(sandbox, exchange(17001, "ping")) == "echo:ping\n"

    egress = sandbox.egress()
    assert egress["endpoints"] == [{"name": "echo", "host": "127.0.0.1", "port": port, "mode": "tcp"}]
    (record,) = egress["log"]
    assert (record["host"], record["port"], record["name"], record["refused"]) == (
        "127.0.0.1",
        port,
        "echo",
        None,
    )
    assert (record["bytes_out"], record["bytes_in"]) == (4, 9)
    assert record["ended_at"] >= record["started_at"] > 0
    after = stats(sandboxd)
    assert after["connections"] == before["connections"] + 1
    assert after["bytes_in"] - before["bytes_in"] == 9
    assert after["bytes_out"] - before["bytes_out"] == 4


def test_the_proxy_admits_the_http_endpoint_alone(make_sandbox: Callable[..., Sandbox]) -> None:
    sandbox = make_sandbox()
    with http_server() as allowed, http_server() as other:
        port, other_port = allowed.server_address[1], other.server_address[1]
        answer = sandbox.set_egress([{"name": "api", "host": "127.0.0.1", "port": port, "mode": "http"}])
        assert answer == {"proxy": PROXY, "ports": {}}
        code = (
            "import urllib.request, urllib.error\n"
            f"opener = urllib.request.build_opener(urllib.request.ProxyHandler({{'http': {PROXY!r}}}))\n"
            f"for url in ({f'http://127.0.0.1:{port}/data?x=1'!r}, {f'http://127.0.0.1:{other_port}/data'!r}):\n"
            "    try:\n"
            "        print(opener.open(url, timeout=10).read().decode(), end='')\n"
            "    except urllib.error.HTTPError as exc:\n"
            "        print(exc.code, exc.read().decode(), end='')\n"
        )
        lines = run(sandbox, code).splitlines()
        assert lines[0] == f"hello from {port}/data?x=1"
        assert lines[1] == f"403 127.0.0.1:{other_port} is not an endpoint of this sandbox"
        assert other.requests == []
        (path, headers) = allowed.requests[0]
        assert headers["Connection"] == "close" and "Proxy-Connection" not in headers

        # CONNECT (what a TLS client does) tunnels to the endpoint, and to nothing else.
        tunnel = (
            "import socket\n"
            "def connect(port):\n"
            f"    s = socket.create_connection(('127.0.0.1', 17000), timeout=10)\n"
            "    s.sendall(f'CONNECT 127.0.0.1:{port} HTTP/1.1\\r\\n\\r\\n'.encode())\n"
            "    head = s.recv(4096)\n"
            "    if head.startswith(b'HTTP/1.1 200'):\n"
            "        s.sendall(b'GET /tunnelled HTTP/1.0\\r\\n\\r\\n')\n"
            "        head = b''\n"
            "        while chunk := s.recv(4096):\n"
            "            head += chunk\n"
            "    print(head.decode().splitlines()[-1])\n"
            f"connect({port}); connect({other_port})\n"
        )
        assert run(sandbox, tunnel).splitlines() == [
            f"hello from {port}/tunnelled",
            f"127.0.0.1:{other_port} is not an endpoint of this sandbox",
        ]
    refused = [r for r in sandbox.egress()["log"] if r["refused"]]
    assert {r["port"] for r in refused} == {other_port}
    assert all(r["bytes_in"] == r["bytes_out"] == 0 for r in refused)


HOSTILE_SCAN = """
import os, socket
# The kernel's own listening sockets (ipykernel keeps one on loopback): not a way out.
inodes = set()
for fd in os.listdir('/proc/self/fd'):
    try:
        inodes.add(os.readlink(f'/proc/self/fd/{fd}'))
    except OSError:
        pass
own = set()
for line in open('/proc/net/tcp').read().splitlines()[1:]:
    fields = line.split()
    if fields[3] == '0A' and f'socket:[{fields[9]}]' in inodes:
        own.add(int(fields[1].split(':')[1], 16))
open_ports = []
for port in range(1, 65536):
    s = socket.socket()
    s.settimeout(1)
    # A connection to a free port from that same port connects to itself (TCP's simultaneous
    # open), within the ephemeral range: that is no listener either.
    if s.connect_ex(('127.0.0.1', port)) == 0 and s.getsockname() != s.getpeername():
        open_ports.append(port)
    s.close()
print(sorted(set(open_ports) - own))
"""


def test_a_hostile_cell_finds_nothing_but_its_own_ports(
    make_sandbox: Callable[..., Sandbox], sandboxd: SandboxdProcess
) -> None:
    sandbox, neighbour = make_sandbox(), make_sandbox()
    with echo_server(prefix=b"mine:") as mine, echo_server(prefix=b"theirs:") as theirs:
        sandbox.set_egress([{"name": "db", "host": "127.0.0.1", "port": mine, "mode": "tcp"}])
        neighbour.set_egress(
            [
                {"name": "db", "host": "127.0.0.1", "port": theirs, "mode": "tcp"},
                {"name": "other", "host": "127.0.0.1", "port": theirs, "mode": "tcp"},
                {"name": "web", "host": "127.0.0.1", "port": theirs, "mode": "http"},
            ]
        )
        assert run(sandbox, HOSTILE_SCAN) == "[17001]\n"  # no proxy: no http endpoint
        assert run(neighbour, HOSTILE_SCAN) == "[17000, 17001, 17002]\n"
        assert run(sandbox, exchange(17001, "x")) == "mine:x\n"
        assert run(neighbour, exchange(17001, "x")) == "theirs:x\n"

        # Through the neighbour's proxy: sandboxd itself, Redis, Postgres, and its own tcp
        # endpoint's server in http mode under another port: all refused. (The metadata service
        # and other addresses past loopback are never named here, even to be refused: the policy
        # that refuses them is tested as a function, test_egress_policy.py.)
        targets = [
            f"127.0.0.1:{sandboxd.port}",
            "127.0.0.1:6379",
            "127.0.0.1:5432",
            f"127.0.0.1:{mine}",
            f"localhost:{theirs}",
        ]
        probe = (
            "import socket\n"
            f"for target in {targets!r}:\n"
            "    s = socket.create_connection(('127.0.0.1', 17000), timeout=10)\n"
            "    s.sendall(f'CONNECT {target} HTTP/1.1\\r\\n\\r\\n'.encode())\n"
            "    print(s.recv(4096).split(b'\\r\\n')[0].decode())\n"
        )
        assert run(neighbour, probe).splitlines() == ["HTTP/1.1 403 Forbidden"] * len(targets)
    log = neighbour.egress()["log"]
    refused = {f"{r['host']}:{r['port']}": r["refused"] for r in log if r["refused"]}
    assert set(refused) == set(targets)
    assert all(r["bytes_in"] == r["bytes_out"] == 0 for r in log if r["refused"])


def test_the_sandbox_has_only_loopback_and_no_route(make_sandbox: Callable[..., Sandbox]) -> None:
    sandbox = make_sandbox()
    with echo_server() as port:
        sandbox.set_egress([{"name": "db", "host": "127.0.0.1", "port": port, "mode": "http"}])
        code = (
            "import json, pathlib\n"
            "read = lambda name: pathlib.Path('/proc/net', name).read_text().splitlines()\n"
            "print(json.dumps({'dev': [l.split(':')[0].strip() for l in read('dev')[2:]],"
            " 'route': read('route')[1:], 'inet6': [l.split()[-1] for l in read('if_inet6')]}))\n"
        )
        seen = json.loads(run(sandbox, code))
    assert seen["dev"] == ["lo"]
    assert seen["route"] == []
    assert set(seen["inet6"]) <= {"lo"}


def test_the_kernel_reads_its_egress_file_and_the_workdir_does_not_hold_it(
    make_sandbox: Callable[..., Sandbox],
) -> None:
    sandbox = make_sandbox()
    config = {"connections": {"db": {"kind": "postgres", "secret": "s3cret"}}, "sql_timeout": 60}
    with echo_server() as port:
        sandbox.set_egress([{"name": "db", "host": "127.0.0.1", "port": port, "mode": "tcp"}], config)
        code = (
            "import json, os, stat\n"
            "info = os.stat('/run/kernel/egress.json')\n"
            "print(json.dumps({'mode': stat.S_IMODE(info.st_mode), 'mine': info.st_uid == os.getuid(),"
            " 'file': json.load(open('/run/kernel/egress.json'))}))\n"
        )
        seen = json.loads(run(sandbox, code))
    assert seen["mode"] == 0o400 and seen["mine"]
    assert seen["file"] == {"proxy": None, "ports": {"db": 17001}, "config": config}
    assert "egress.json" not in [entry.name for entry in sandbox.files.list(".")]


def test_a_cell_holding_many_connections_gets_32_at_once(make_sandbox: Callable[..., Sandbox]) -> None:
    sandbox = make_sandbox()
    with echo_server() as port:
        sandbox.set_egress([{"name": "db", "host": "127.0.0.1", "port": port, "mode": "tcp"}])
        code = (
            "import socket\n"
            "held, answered = [], 0\n"
            "for _ in range(40):\n"
            "    s = socket.create_connection(('127.0.0.1', 17001), timeout=10)\n"
            "    try:\n"
            "        s.sendall(b'x')\n"
            "        answered += s.recv(1) == b'x'\n"
            "    except OSError:  # refused: closed at once\n"
            "        pass\n"
            "    held.append(s)\n"
            "print(answered)\n"
            "for s in held:\n"
            "    s.close()\n"
        )
        assert run(sandbox, code) == "32\n"
    refused = [r["refused"] for r in sandbox.egress()["log"] if r["refused"]]
    assert refused == ["more than 32 connections at once"] * 8
