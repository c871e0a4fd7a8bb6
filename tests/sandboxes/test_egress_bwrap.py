"""Egress under bubblewrap's own launches (the kernel in bubblewrap's user namespace, what a
sandboxd that is not root runs), and its 409 under gVisor, which has a network stack of its own."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from sandboxes import Sandbox, SandboxError
from tests.sandboxd_process import SandboxdProcess
from tests.sandboxes.egress_servers import echo_server, exchange, run
from tests.sandboxes.gvisor_service import needs_runsc


def test_a_tcp_endpoint_under_bubblewrap_survives_a_restart(
    make_bwrap_sandbox: Callable[[], Sandbox],
) -> None:
    sandbox = make_bwrap_sandbox()
    with echo_server(prefix=b"bw:") as port:
        sandbox.set_egress([{"name": "db", "host": "127.0.0.1", "port": port, "mode": "tcp"}], {"a": 1})
        assert run(sandbox, exchange(17001, "one")) == "bw:one\n"
        sandbox.default_context.restart()
        assert run(sandbox, exchange(17001, "two")) == "bw:two\n"
        assert '"a": 1' in run(sandbox, "print(open('/run/kernel/egress.json').read())")


@needs_runsc
def test_gvisor_answers_that_egress_is_unavailable(gvisor_sandboxd: SandboxdProcess) -> None:
    with Sandbox.create(url=gvisor_sandboxd.url, token=gvisor_sandboxd.token) as sandbox:
        with pytest.raises(SandboxError) as refused:
            sandbox.set_egress([{"name": "db", "host": "127.0.0.1", "port": 5432, "mode": "tcp"}])
        assert refused.value.code == "egress_unavailable"
        assert "gvisor" in refused.value.message and "network stack of its own" in refused.value.message
        assert sandbox.egress()["endpoints"] == []
