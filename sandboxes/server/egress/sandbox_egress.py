"""One sandbox's egress on each of its kernels: the listeners inside every kernel's network
namespace, and the ``egress.json`` in every kernel's runtime folder (/run/kernel inside)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import socket
from collections.abc import Callable, Iterable

from sandboxes.errors import EgressUnavailable, SandboxError
from sandboxes.kernels.kernel import Kernel
from sandboxes.server.egress.connection_log import ConnectionLog, Totals
from sandboxes.server.egress.endpoints import PROXY_PORT, EgressSpec, Endpoint
from sandboxes.server.egress.forwarder import forwarder
from sandboxes.server.egress.listener import Handler, Listener
from sandboxes.server.egress.namespace import kernel_namespace_pid, listen_inside
from sandboxes.server.egress.policy import Policy
from sandboxes.server.egress.proxy import Admission, proxy

log = logging.getLogger(__name__)
CONFIG_FILE = "egress.json"
MAX_CONNECTIONS = 32  # a sandbox's connections out at once (a database pool holds a few)
Rule = Endpoint | str  # what a port inside serves: a tcp endpoint, or "proxy"


class SandboxEgress:
    def __init__(self, policy: Policy, totals: Totals, owner: tuple[int, int] | None) -> None:
        self.policy = policy
        self.owner = owner  # the sandbox's host (uid, gid): egress.json is its alone
        self.spec: EgressSpec | None = None  # None until the first PUT
        self.log = ConnectionLog(totals)
        self.kernels: dict[int, KernelEgress] = {}  # by id() of the Kernel
        self.connections = 0  # being served now, in all its kernels
        self._lock = asyncio.Lock()

    def info(self) -> dict[str, object]:
        spec = self.spec or EgressSpec()
        return {
            "endpoints": [endpoint.info() for endpoint in spec.endpoints],
            **spec.answer(),
            "log": self.log.info(),
        }

    async def apply(self, spec: EgressSpec, kernels: Iterable[Kernel]) -> None:
        """Replace the sandbox's egress with ``spec`` on each of ``kernels``; the same spec again
        changes nothing (live connections go on). Raises EgressUnavailable when sandboxd may
        not enter a kernel's namespace, SandboxError when it cannot listen there."""
        async with self._lock:
            try:
                if spec != self.spec:
                    self.spec = spec
                    for attached in self.kernels.values():
                        await attached.update(spec, self._handler, self._admits, strict=True)
                await self._follow(kernels, strict=True)
            except BaseException:
                self.spec = None  # half applied: the proxy admits nothing, the same PUT applies anew
                raise

    async def follow(self, kernels: Iterable[Kernel]) -> None:
        """The sandbox's kernels changed (one started, restarted or closed): egress follows, and
        what fails is logged (a kernel's restart does not fail for it)."""
        async with self._lock:
            await self._follow(kernels, strict=False)

    async def _follow(self, kernels: Iterable[Kernel], *, strict: bool) -> None:
        current = {id(kernel): kernel for kernel in kernels if kernel.is_alive()}
        for key, attached in list(self.kernels.items()):
            if current.get(key) is not attached.kernel:
                await self.kernels.pop(key).close()
        if self.spec is None:
            return
        for key, kernel in current.items():
            if key not in self.kernels:
                attached = KernelEgress(kernel, self.owner)
                self.kernels[key] = attached
                await attached.update(self.spec, self._handler, self._admits, strict=strict)

    def _handler(self, rule: Rule) -> Handler:
        """What serves a connection to ``rule``'s port: at most MAX_CONNECTIONS at once in the
        whole sandbox (each forwarded one costs sandboxd two threads and two descriptors)."""
        if isinstance(rule, Endpoint):
            serve, host, port, name = forwarder(rule, self.policy, self.log), rule.host, rule.port, rule.name
        else:
            serve, host, port, name = proxy(self._admits, self.policy, self.log), "proxy", PROXY_PORT, None

        async def limited(inside: socket.socket, listener: Listener) -> None:
            if self.connections >= MAX_CONNECTIONS:
                self.log.open(host, port, name).refuse(f"more than {MAX_CONNECTIONS} connections at once")
                return
            self.connections += 1
            try:
                await serve(inside, listener)
            finally:
                self.connections -= 1

        return limited

    def _admits(self, host: str, port: int) -> str | bool:
        """The http endpoint's name for ``host``:``port``, True if allow-listed, else False."""
        for endpoint in self.spec.endpoints if self.spec else ():
            if endpoint.mode == "http" and (endpoint.host, endpoint.port) == (host, port):
                return endpoint.name
        return self.policy.allow_listed(host, port)

    async def close(self) -> None:
        """End every listener and connection (the sandbox is killed or paused)."""
        async with self._lock:
            kernels, self.kernels = list(self.kernels.values()), {}
            for attached in kernels:
                await attached.close()


class KernelEgress:
    """The listeners in one kernel's namespace, by port, with the rule each serves."""

    def __init__(self, kernel: Kernel, owner: tuple[int, int] | None) -> None:
        self.kernel = kernel
        self.owner = owner
        self.listeners: dict[int, tuple[Rule, Listener]] = {}

    async def update(
        self, spec: EgressSpec, handler: Callable[[Rule], Handler], admits: Admission, *, strict: bool
    ) -> None:
        wanted: dict[int, Rule] = {spec.ports[e.name]: e for e in spec.endpoints if e.mode == "tcp"}
        if spec.proxied:
            wanted[PROXY_PORT] = "proxy"
        for port, (rule, listener) in list(self.listeners.items()):
            if wanted.get(port) != rule:
                del self.listeners[port]
                await listener.close()
            elif rule == "proxy":
                listener.drop(lambda host, port: bool(admits(host, port)))
        missing = sorted(port for port in wanted if port not in self.listeners)
        try:
            if missing:
                sockets = await self._listen(missing)
                for port, sock in zip(missing, sockets, strict=True):
                    self.listeners[port] = (wanted[port], Listener(sock, handler(wanted[port])))
            await asyncio.to_thread(self._write_config, spec)
        except (SandboxError, OSError) as exc:
            if not strict:  # a kernel's restart does not fail for its egress
                log.warning("egress: could not follow a kernel of the sandbox", exc_info=True)
            elif isinstance(exc, SandboxError):
                raise
            else:
                raise SandboxError(f"could not write the kernel's egress.json: {exc}") from None

    async def _listen(self, ports: list[int]) -> list[socket.socket]:
        process = self.kernel.process
        pid = await asyncio.to_thread(kernel_namespace_pid, process.pid) if process else None
        if pid is None:
            raise SandboxError("the kernel's network namespace was not found (has it ended?)")
        try:
            return await asyncio.to_thread(listen_inside, pid, ports)
        except PermissionError as exc:
            raise EgressUnavailable(
                f"sandboxd may not enter this sandbox's network namespace ({exc}); run it as root"
                " or as the user that starts bubblewrap"
            ) from None
        except OSError as exc:
            raise SandboxError(f"could not open the sandbox's egress ports: {exc}") from None

    def _write_config(self, spec: EgressSpec) -> None:
        """egress.json in the runtime folder, readable by the sandbox's user alone, replaced whole."""
        folder = self.kernel.runtime_dir
        content = json.dumps({**spec.answer(), "config": spec.config}).encode()
        partial = folder / f".{CONFIG_FILE}.partial"
        with contextlib.suppress(FileNotFoundError):
            partial.unlink()
        try:
            fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o400)
        except FileNotFoundError:
            return  # the kernel was shut down meanwhile
        with os.fdopen(fd, "wb") as file:
            if self.owner:
                os.fchown(fd, *self.owner)
            file.write(content)
        os.replace(partial, folder / CONFIG_FILE)

    async def close(self) -> None:
        listeners, self.listeners = list(self.listeners.values()), {}
        for _, listener in listeners:
            await listener.close()
        with contextlib.suppress(OSError):
            (self.kernel.runtime_dir / CONFIG_FILE).unlink()
