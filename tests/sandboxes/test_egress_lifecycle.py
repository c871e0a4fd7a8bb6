"""A sandbox's egress over its life: the same PUT again keeps live connections, a new one replaces
them, kernels started later (a restart, a new context) get it too, and the API's checks."""

from __future__ import annotations

import socket
from collections.abc import Callable

import pytest

from sandboxes import InvalidRequest, Sandbox
from tests.sandboxes.egress_servers import echo_server, exchange, run

OPEN = """
import socket
kept = socket.create_connection(('127.0.0.1', 17001), timeout=10)
kept.sendall(b'first'); print(kept.recv(100).decode())
"""
AGAIN = """
try:
    kept.sendall(b'again'); print(kept.recv(100).decode() or 'closed')
except OSError as exc:
    print('closed')
"""


def endpoint(port: int, name: str = "db") -> dict[str, object]:
    return {"name": name, "host": "127.0.0.1", "port": port, "mode": "tcp"}


def test_the_same_put_keeps_live_connections_and_another_replaces_them(
    make_sandbox: Callable[..., Sandbox],
) -> None:
    sandbox = make_sandbox()
    with echo_server(prefix=b"a:") as first, echo_server(prefix=b"b:") as second:
        sandbox.set_egress([endpoint(first)], {"n": 1})
        assert run(sandbox, OPEN) == "a:first\n"
        assert sandbox.set_egress([endpoint(first)], {"n": 1}) == {"proxy": None, "ports": {"db": 17001}}
        assert run(sandbox, AGAIN) == "a:again\n"

        sandbox.set_egress([endpoint(second)], {"n": 2})
        assert run(sandbox, AGAIN) == "closed\n"
        assert run(sandbox, exchange(17001, "new")) == "b:new\n"
        assert run(sandbox, "print(open('/run/kernel/egress.json').read())").count('"n": 2') == 1

        sandbox.set_egress([])
        closed = "import socket\nprint(socket.socket().connect_ex(('127.0.0.1', 17001)) != 0)"
        assert run(sandbox, closed) == "True\n"
    assert sandbox.egress()["endpoints"] == []


def test_kernels_started_later_get_the_egress(make_sandbox: Callable[..., Sandbox]) -> None:
    sandbox = make_sandbox()
    with echo_server(prefix=b"e:") as port:
        sandbox.set_egress([endpoint(port)], {"k": "v"})
        sandbox.default_context.restart()
        assert run(sandbox, exchange(17001, "after restart")) == "e:after restart\n"
        context = sandbox.create_code_context()
        execution = context.run_code(
            exchange(17001, "new context") + "print(open('/run/kernel/egress.json').read())"
        )
        assert execution.error is None
        assert execution.stdout.startswith("e:new context\n") and '"k": "v"' in execution.stdout
        # A cell that kills its own kernel: the kernel sandboxd starts instead has egress too.
        dead = sandbox.run_code("import os, signal; os.kill(os.getpid(), signal.SIGKILL)")
        assert dead.error is not None and dead.error.name == "KernelDied"
        assert run(sandbox, exchange(17001, "after death")) == "e:after death\n"


def test_a_sandbox_without_egress_has_none(make_sandbox: Callable[..., Sandbox]) -> None:
    sandbox = make_sandbox()
    assert sandbox.egress() == {"endpoints": [], "proxy": None, "ports": {}, "log": []}
    code = "import socket\nprint(socket.socket().connect_ex(('127.0.0.1', 17001)) != 0)"
    assert run(sandbox, code) == "True\n"
    assert run(sandbox, "import os\nprint(os.path.exists('/run/kernel/egress.json'))") == "False\n"


def test_the_check_says_what_sandboxd_reaches(make_sandbox: Callable[..., Sandbox]) -> None:
    sandbox = make_sandbox()
    with echo_server() as live, echo_server() as gone:
        pass  # `gone`'s port is closed now: nothing listens there
    with echo_server() as live:
        sandbox.set_egress([endpoint(live, "live"), endpoint(gone, "gone")])
        assert sandbox.check_egress("live") == {"ok": True, "address": "127.0.0.1"}
        result = sandbox.check_egress("gone")
        assert (result["ok"], result["category"]) == (False, "refused")
        assert "refused" in result["message"]
        with pytest.raises(InvalidRequest):
            sandbox.check_egress("missing")


def test_a_put_the_api_refuses(make_sandbox: Callable[..., Sandbox]) -> None:
    sandbox = make_sandbox()
    bad = [
        [{"name": "1db", "host": "h", "port": 5432, "mode": "tcp"}],
        [{"name": "db", "host": "h", "port": 70000, "mode": "tcp"}],
        [{"name": "db", "host": "h", "port": 5432, "mode": "ftp"}],
        [{"name": f"e{i}", "host": "h", "port": 1, "mode": "tcp"} for i in range(33)],
    ]
    for endpoints in bad:
        with pytest.raises(InvalidRequest):
            sandbox.set_egress(endpoints)
    assert sandbox.egress()["endpoints"] == []


@pytest.mark.parametrize("ending", ["kill", "pause"])
def test_a_sandbox_killed_or_paused_ends_its_connections(
    make_sandbox: Callable[..., Sandbox], ending: str
) -> None:
    with socket.create_server(("127.0.0.1", 0)) as server:
        server.settimeout(20)
        sandbox = make_sandbox()
        sandbox.set_egress([endpoint(server.getsockname()[1])])
        run(sandbox, "import socket\nkept = socket.create_connection(('127.0.0.1', 17001), timeout=10)")
        connection, _ = server.accept()
        with connection:
            connection.settimeout(20)
            getattr(sandbox, ending)()
            assert connection.recv(10) == b""  # sandboxd closed its side
    if ending == "pause":  # resumed (by this call), it has no egress until the next PUT
        assert sandbox.egress()["endpoints"] == []
