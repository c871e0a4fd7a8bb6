"""/metrics exports sandboxd's egress totals (its /stats "egress") as Prometheus counters."""

from __future__ import annotations

import pytest

from tests.ops.test_metrics import scrape
from tests.sandboxes.egress_servers import echo_server, exchange, run

pytestmark = pytest.mark.django_db

NAMES = ("connections", "refused", "bytes_in", "bytes_out")


def egress_totals(client) -> dict[str, float]:
    got = scrape(client)
    return {name: got[(f"analyst_sandbox_egress_{name}_total", ())] for name in NAMES}


def test_egress_connections_refusals_and_bytes_are_counted(client, redis_keys, with_sandboxd, make_sandbox):
    before = egress_totals(client)
    sandbox = make_sandbox()
    with echo_server(prefix=b">") as port:
        sandbox.set_egress(
            [
                {"name": "echo", "host": "127.0.0.1", "port": port, "mode": "tcp"},
                {"name": "web", "host": "127.0.0.1", "port": port, "mode": "http"},
            ]
        )
        assert run(sandbox, exchange(17001, "abc")) == ">abc\n"
        refused = (
            "import socket\n"
            "s = socket.create_connection(('127.0.0.1', 17000), timeout=10)\n"
            "s.sendall(b'CONNECT 127.0.0.1:6379 HTTP/1.1\\r\\n\\r\\n')\n"
            "print(s.recv(100).split(b'\\r\\n')[0].decode())\n"
        )
        assert run(sandbox, refused) == "HTTP/1.1 403 Forbidden\n"
    after = egress_totals(client)
    assert after["connections"] - before["connections"] == 1
    assert after["refused"] - before["refused"] == 1
    assert after["bytes_out"] - before["bytes_out"] == 3
    assert after["bytes_in"] - before["bytes_in"] == 4
