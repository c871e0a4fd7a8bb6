"""A tcp endpoint's port inside the sandbox: each connection forwarded to its one host and port."""

from __future__ import annotations

import socket

from sandboxes.server.egress.connection_log import ConnectionLog
from sandboxes.server.egress.endpoints import Endpoint
from sandboxes.server.egress.listener import Handler, Listener
from sandboxes.server.egress.policy import Policy, Refused
from sandboxes.server.egress.relay import connect, relay


def forwarder(endpoint: Endpoint, policy: Policy, log: ConnectionLog) -> Handler:
    async def forward(inside: socket.socket, listener: Listener) -> None:
        record = log.open(endpoint.host, endpoint.port, endpoint.name)
        try:
            address = await policy.resolve(endpoint.host, endpoint.port)
            outside = await connect(address, endpoint.port)
        except Refused as exc:
            record.refuse(exc.message)
            return
        except (OSError, TimeoutError) as exc:
            record.refuse(f"could not connect to {endpoint.host}:{endpoint.port}: {exc or 'timed out'}")
            return
        record.made()
        await relay(inside, outside, record)

    return forward
