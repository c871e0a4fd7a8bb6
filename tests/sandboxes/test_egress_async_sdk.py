"""AsyncSandbox speaks the egress API as Sandbox does, and the Postgres the tests run answers a
kernel through a tcp endpoint (its SSLRequest: the first bytes any driver sends it)."""

from __future__ import annotations

import pytest

from sandboxes import AsyncSandbox, InvalidRequest
from tests.sandboxd_process import SandboxdProcess

SSL_REQUEST = """
import socket, struct
s = socket.create_connection(('127.0.0.1', 17001), timeout=10)
s.sendall(struct.pack('!ii', 8, 80877103))
print(s.recv(1))
"""


@pytest.mark.asyncio
async def test_the_async_sdk_sets_reads_and_checks_egress_to_postgres(sandboxd: SandboxdProcess) -> None:
    sandbox = await AsyncSandbox.create(url=sandboxd.url, token=sandboxd.token)
    try:
        postgres = {"name": "warehouse", "host": "127.0.0.1", "port": 5432, "mode": "tcp"}
        answer = await sandbox.set_egress([postgres], {"connections": {}})
        assert answer == {"proxy": None, "ports": {"warehouse": 17001}}
        assert await sandbox.check_egress("warehouse") == {"ok": True, "address": "127.0.0.1"}
        execution = await sandbox.run_code(SSL_REQUEST)
        assert execution.error is None, execution.error
        assert execution.stdout in ("b'S'\n", "b'N'\n")  # Postgres: TLS offered, or not
        egress = await sandbox.egress()
        assert egress["endpoints"] == [postgres]
        assert egress["log"][-1]["bytes_out"] == 8 and egress["log"][-1]["bytes_in"] == 1
        with pytest.raises(InvalidRequest):
            await sandbox.set_egress([{**postgres, "port": 0}])
    finally:
        await sandbox.kill()
        await sandbox.close()
