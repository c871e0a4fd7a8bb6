"""sandboxd's egress as a whole: its settings and totals, each sandbox's egress, and the check
that an endpoint can be reached from sandboxd."""

from __future__ import annotations

import asyncio
import time

from sandboxes.errors import EgressUnavailable
from sandboxes.kernels.kernel import KernelSpec
from sandboxes.server.egress.connection_log import Totals
from sandboxes.server.egress.endpoints import Endpoint
from sandboxes.server.egress.policy import Policy, Refused
from sandboxes.server.egress.relay import connect
from sandboxes.server.egress.sandbox_egress import SandboxEgress

CHECK_SECONDS = 5.0


class EgressService:
    def __init__(self, policy: Policy) -> None:
        self.policy = policy
        self.totals = Totals()

    def for_kernels(self, spec: KernelSpec) -> SandboxEgress:
        """A sandbox's egress, empty, for kernels started by ``spec``. Raises EgressUnavailable
        when its driver's network is not a namespace sandboxd can enter."""
        if not spec.driver.namespace_network:
            raise EgressUnavailable(
                f"the {spec.driver.name} isolation driver runs kernels on a network stack of its own,"
                " which sandboxd cannot open egress ports in; use the bubblewrap driver for sandboxes"
                " that connect to data"
            )
        return SandboxEgress(self.policy, self.totals, spec.owner)

    async def check(self, endpoint: Endpoint) -> dict[str, object]:
        """Whether sandboxd can open a TCP connection to ``endpoint`` (within CHECK_SECONDS):
        {"ok": True, "address"} or {"ok": False, "category", "message"}."""
        deadline = time.monotonic() + CHECK_SECONDS
        where = f"{endpoint.host}:{endpoint.port}"
        try:
            address = await asyncio.wait_for(self.policy.resolve(endpoint.host, endpoint.port), CHECK_SECONDS)
            sock = await connect(address, endpoint.port, timeout=max(0.1, deadline - time.monotonic()))
        except Refused as exc:
            return failed(exc.category, exc.message)
        except TimeoutError:
            return failed("timeout", f"{where} did not answer within {CHECK_SECONDS:g} seconds")
        except ConnectionRefusedError:
            return failed("refused", f"{where} refused the connection: nothing listens on that port")
        except OSError as exc:
            return failed("unreachable", f"{where} cannot be reached: {exc.strerror or exc}")
        sock.close()
        return {"ok": True, "address": address}


def failed(category: str, message: str) -> dict[str, object]:
    return {"ok": False, "category": category, "message": message}
