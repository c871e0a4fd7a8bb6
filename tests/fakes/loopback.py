"""An httpx client that delivers every request to a local test server, whatever host its URL names.

For behaviour that depends on a provider's real address (``https://api.openai.com/v1`` ...)
without a packet leaving the machine: the URL keeps its path and query, the ``Host`` header keeps
the name asked for, and only the connection goes to the loopback server instead::

    with loopback_client(server.url) as http:
        provider, model = provider_for("openai/gpt-4.1", env={"OPENAI_API_KEY": "k"}, http=http)
        ...
    assert server.requests[0].headers["host"] == "api.openai.com"
"""

from __future__ import annotations

import ipaddress

import httpx


class _ToLoopback(httpx.HTTPTransport):
    def __init__(self, target: httpx.URL) -> None:
        super().__init__()
        self._target = target

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        request.url = request.url.copy_with(
            scheme=self._target.scheme, host=self._target.host, port=self._target.port
        )
        return super().handle_request(request)


def loopback_client(server_url: str) -> httpx.Client:
    """A client whose every request connects to ``server_url`` (which must be a loopback address)."""
    target = httpx.URL(server_url)
    if not ipaddress.ip_address(target.host).is_loopback:
        raise ValueError(f"{server_url} is not a loopback address")
    return httpx.Client(transport=_ToLoopback(target))
