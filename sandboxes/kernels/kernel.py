"""One ipykernel in an isolated process, reached over ipc sockets in its runtime folder."""

from __future__ import annotations

import asyncio
import json
import os
import queue
import secrets
import shutil
import tempfile
import time
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from jupyter_client.asynchronous import AsyncKernelClient

from sandboxes.drivers.base import SANDBOX_HOME, SANDBOX_RUNTIME, Driver, IsolatedProcess, LaunchSpec
from sandboxes.drivers.limits import Limits
from sandboxes.kernels.kernel_relay import KernelRelay
from sandboxes.kernels.messages import Event, error_event, execution_count, is_idle, parent_id, to_event
from sandboxes.kernels.thread_counts import thread_count_environment
from sandboxes.kernels.watched_sockets import WatchedContext
from sandboxes.templates import MOUNT_POINT, Template

POLL_SECONDS = 0.05
LAUNCHER = Path(__file__).with_name("kernel_launcher.py")
# After the shell's execute_reply, how long iopub may stay silent before the cell counts as over:
# its idle status may have been dropped (a full queue). The kernel's IOPub thread may lag its
# reply on a loaded machine: under make test's three workers a quiet cell's result and idle
# status came more than a second after its reply (and were called lost).
QUIET_AFTER_REPLY_SECONDS = 3.0
# How long iopub may stay silent after a cell is sent with no sign that the kernel took it (its
# busy status, or its reply): a kernel that answers does so within milliseconds; one that closed
# its own sockets never.
UNANSWERED_SECONDS = 5.0
PORTS = ("shell_port", "iopub_port", "stdin_port", "control_port", "hb_port")
CHANNELS = ("shell", "iopub", "stdin", "control")  # the ones sandboxd reads (not the heartbeat)
CHANNEL_PORTS = range(1, len(CHANNELS) + 1)  # their ports: the first ones of PORTS


class KernelDied(Exception):
    """The kernel process is gone; ``reason`` says how it ended."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class KernelUnanswered(KernelDied):
    """The kernel process lives but stopped answering on its channels (a cell closed its
    sockets); ``started`` says whether the cell at hand may have run."""

    def __init__(self, reason: str, *, started: bool) -> None:
        super().__init__(reason)
        self.started = started


class KernelStartFailed(Exception):
    pass


@dataclass(frozen=True)
class ChannelLimits:
    """What sandboxd takes from a kernel's sockets: a message whose frames together hold more
    than ``max_message_bytes`` is dropped unread (kernel_relay.py), and at most ``queue`` messages
    wait per socket while nobody reads (and 64 more in the kernel's publisher, kernel_launcher.py;
    the rest are dropped), so a kernel that floods between cells costs us about
    ``(queue + 4) * max_message_bytes`` per socket."""

    max_message_bytes: int = 8 << 20
    queue: int = 2


@dataclass(frozen=True)
class KernelSpec:
    """What a kernel needs besides its workdir: runtime, isolation and quotas."""

    template: Template
    driver: Driver
    limits: Limits
    env: Mapping[str, str]
    owner: tuple[int, int] | None = None  # the unprivileged host (uid, gid) to run as
    sources: Mapping[Path, Path] = field(default_factory=dict)  # staged runtime paths
    channels: ChannelLimits = field(default_factory=ChannelLimits)
    runtime_root: Path | None = None  # where runtime folders are made (default: the temp folder)
    relocated: Mapping[Path, Path] = field(default_factory=dict)  # runtime paths seen elsewhere inside
    warm_up: bool = True  # whether kernels get the template's warm-up imports (pooled, or forked)
    interrupt_grace_seconds: float | None = None  # None: the driver's own

    @property
    def interrupt_grace(self) -> float:
        """Seconds an interrupted cell may take to end before its kernel is restarted."""
        return self.interrupt_grace_seconds or self.driver.interrupt_grace


class Kernel:
    """Start, execute on, interrupt and kill one isolated ipykernel."""

    def __init__(self, spec: KernelSpec, workdir: Path) -> None:
        self.spec = spec
        self.workdir = workdir
        self.runtime_dir = Path(tempfile.mkdtemp(prefix="sbx-k-", dir=spec.runtime_root))
        self.process: IsolatedProcess | None = None
        self.client: AsyncKernelClient | None = None
        self._zmq: WatchedContext | None = None
        self._relay: KernelRelay | None = None
        self._dropped_told = 0  # of the relay's dropped messages, those a cell's output has named
        self.running: str | None = None  # msg_id of the cell being executed
        self._control_lock = asyncio.Lock()

    async def start(self, timeout: float = 60.0) -> None:
        """Launch the kernel and wait until it answers kernel_info (startup file included)."""
        key = secrets.token_hex(32)
        self._write_connection_file(key)
        shutil.copy(LAUNCHER, self.runtime_dir / LAUNCHER.name)
        template = self.spec.template
        binds = template.runtime_binds()
        argv = [
            str(template.inside(template.python)),
            f"{SANDBOX_RUNTIME}/{LAUNCHER.name}",
            "-f",
            f"{SANDBOX_RUNTIME}/connection.json",
            f"--IPKernelApp.exec_files=['{template.inside(template.startup_file)}']",
            "--HistoryManager.enabled=False",
            "--IPKernelApp.parent_handle=0",
        ]
        launch = LaunchSpec(
            argv=argv,
            env=self._environment(),
            workdir=self.workdir,
            runtime_dir=self.runtime_dir,
            ro_binds={
                self.spec.relocated.get(inside, inside): self.spec.sources.get(host, host)
                for inside, host in binds.items()
            },
            limits=self.spec.limits,
            host_uid=self.spec.owner[0] if self.spec.owner else None,
            host_gid=self.spec.owner[1] if self.spec.owner else None,
            preload=template.preload_code(warm_up=self.spec.warm_up),
        )
        if self.spec.owner:  # the kernel creates its sockets here
            os.chown(self.runtime_dir, *self.spec.owner)
        self.process = await asyncio.to_thread(self.spec.driver.launch, launch)
        self._relay = KernelRelay(
            str(self.runtime_dir / "k"),
            CHANNEL_PORTS,
            self.spec.channels.max_message_bytes,
            root=self.spec.runtime_root,
        )
        await self._relay.start()
        self.client = AsyncKernelClient(context=self._bounded_context())
        self.client.load_connection_info(self._connection_info(key, self._relay.prefix))
        self.client.start_channels(hb=False)  # sandboxd watches the process itself
        try:
            await self._wait_ready(timeout)
        except BaseException:
            await self.shutdown()
            raise
        if self.spec.owner:  # sockets made: from now on the kernel may not swap them for links
            os.chown(self.runtime_dir, os.getuid(), os.getgid())
            self.runtime_dir.chmod(0o755)

    def _bounded_context(self) -> WatchedContext:
        """A ZeroMQ context whose sockets (made by the client from now on) carry our limits."""
        limits = self.spec.channels
        self._zmq = WatchedContext(max_message_bytes=limits.max_message_bytes, queue=limits.queue)
        return self._zmq

    async def _wait_ready(self, timeout: float) -> None:
        """Until the kernel answers kernel_info on shell and its status for it reaches us on iopub:
        a subscription takes a moment to reach the kernel's publisher (ZeroMQ's slow joiner), and
        a kernel that answers sooner, as a forked one does, would have its first cell's output
        published to nobody."""
        assert self.client is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self._check_alive()
            msg_id = self.client.kernel_info()
            try:
                while parent_id(await self.client.get_shell_msg(timeout=0.25)) != msg_id:
                    pass
                while parent_id(await self.client.get_iopub_msg(timeout=0.25)) != msg_id:
                    pass
            except queue.Empty:
                continue
            await self._drain_iopub()
            return
        raise KernelStartFailed(f"kernel did not become ready within {timeout:.0f}s")

    async def _drain_iopub(self, quiet: float = 0.01, most: float = 1.0) -> None:
        """Throw away, unread, what iopub holds until it has been ``quiet`` seconds silent (for at
        most ``most`` seconds): messages of no cell of ours, such as a background thread's."""
        assert self.client is not None
        socket = self.client.iopub_channel.socket
        deadline = time.monotonic() + most
        while time.monotonic() < deadline and await socket.poll(quiet * 1000):
            await socket.recv_multipart(copy=False)

    def _check_alive(self) -> None:
        if self.process is None or self.process.poll() is not None:
            reason = self.process.exit_description() if self.process else "never started"
            raise KernelDied(f"the kernel process {reason}")

    def is_alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def memory(self) -> dict[str, int | None]:
        """{"used": bytes now (None when unknown or not running), "limit": the kernel's memory limit}."""
        used = self.process.memory_used() if self.process is not None else None
        return {"used": used, "limit": self.spec.limits.memory_bytes}

    async def execute(
        self, code: str, timeout: float | None, *, silent: bool = False
    ) -> AsyncIterator[Event]:
        """Run ``code``; yield its events as they come. Raises KernelDied, asyncio.TimeoutError.
        A ``silent`` cell is sandboxd's own: no execution count, no history, no Out entry."""
        assert self.client is not None and self._zmq is not None
        self._check_alive()
        if notice := await self._ready_for_cell():
            yield notice
        # stop_on_error=False: cells run one at a time, so nothing queued should be aborted.
        msg_id = self.client.execute(
            code, silent=silent, store_history=not silent, allow_stdin=False, stop_on_error=False
        )
        self.running = msg_id
        deadline = None if timeout is None else time.monotonic() + timeout
        reply: dict[str, object] | None = None  # the shell's execute_reply, once seen
        idle_seen = False  # the reply often comes first: only a missing idle status means loss
        taken = False  # whether the kernel has shown it took the cell (any message of it)
        quiet_since = time.monotonic()
        while True:
            if deadline is not None and time.monotonic() > deadline:
                raise TimeoutError
            try:
                msg = await self.client.get_iopub_msg(timeout=POLL_SECONDS)
            except queue.Empty:
                self._check_alive()
                reply = reply or await self._reply_to(msg_id, timeout=0)
                taken = taken or reply is not None
                # Silence, not only time: a kernel flooding iopub may have dropped our busy status.
                if not taken and time.monotonic() - quiet_since > UNANSWERED_SECONDS:
                    self.running = None
                    raise KernelUnanswered("it did not take the cell", started=False) from None
                if reply is not None and time.monotonic() - quiet_since > QUIET_AFTER_REPLY_SECONDS:
                    break  # the idle status was lost; the cell is over all the same
                continue
            quiet_since = time.monotonic()  # the kernel is sending: its idle status may be queued
            if parent_id(msg) != msg_id:
                continue  # a background thread's output, or a stale cell's: dropped
            taken = True
            if is_idle(msg):
                idle_seen = True
                break
            event = to_event(msg)
            if event is not None:
                yield event
        self.running = None
        if idle_seen:
            reply = reply or await self._reply_to(msg_id, timeout=1.0)
            if self._newly_dropped():
                yield {"type": "stderr", "text": self._lost_output_marker()}
        else:  # we left without the idle status: it, and perhaps more, never came
            self._newly_dropped()  # named by this marker too
            yield {"type": "stderr", "text": self._lost_output_marker()}
            await self._reconnect_iopub()
            await self._zmq.dropped()  # the connection just replaced: nothing more to make anew
        yield {"type": "end_of_execution", "execution_count": execution_count(reply)}

    async def _ready_for_cell(self) -> Event | None:
        """Channels that work and hold nothing stale; the notice of what was dropped since the
        last cell, if anything was."""
        assert self.client is not None and self._zmq is not None
        reconnected = await self._zmq.dropped()
        if reconnected:
            # Between cells a connection to the kernel ended (the relay ends one past its
            # allowance of dropped bytes, or whose stream breaks ZMTP); made anew, with the
            # kernel answering on it, before this cell's output (or reply) could be lost.
            await self._reconnect_channels()
        if await self.client.iopub_channel.socket.poll(0):
            # Stale messages, up to both queues full: the kernel would drop this cell's own
            # messages for want of room while we read through them. Its publisher may hold 64
            # messages of up to the size limit, which take a while to come through.
            await self._drain_iopub(quiet=0.05, most=3.0)
        if self._newly_dropped() or reconnected:  # the relay's count first: it is read anew
            return {"type": "stderr", "text": self._dropped_between_cells_marker()}
        return None

    def _newly_dropped(self) -> bool:
        """Whether the relay dropped a message over the size limit since this was last asked."""
        assert self._relay is not None
        told, self._dropped_told = self._dropped_told, self._relay.dropped
        return self._dropped_told > told

    def _lost_output_marker(self) -> str:
        limit = self.spec.channels.max_message_bytes
        return (
            "\n[some of this cell's output was lost: the kernel sent a message larger than"
            f" {limit} bytes, or sent faster than it could be read]\n"
        )

    def _dropped_between_cells_marker(self) -> str:
        limit = self.spec.channels.max_message_bytes
        return (
            "[sandbox] output sent since the last cell was dropped: the kernel sent a message"
            f" larger than {limit} bytes\n"
        )

    async def _reconnect_channels(self, timeout: float = 5.0) -> None:
        """Fresh sockets for every channel sandboxd reads, waited for until the kernel answers
        on them (ZeroMQ does not make a dropped connection again)."""
        assert self.client is not None and self._zmq is not None
        for name in CHANNELS:
            getattr(self.client, f"{name}_channel").close()
            setattr(self.client, f"_{name}_channel", None)  # jupyter_client makes it again when asked
            getattr(self.client, f"{name}_channel").start()
        try:
            await self._wait_ready(timeout)
        except KernelStartFailed:
            raise KernelUnanswered("it stopped answering on its channels", started=False) from None
        await self._zmq.dropped()  # what the old sockets reported is answered

    async def _reconnect_iopub(self, timeout: float = 5.0) -> None:
        """A fresh iopub socket, waited for until it receives: ZeroMQ drops a connection that
        brought a message over the size limit, and does not make it again."""
        assert self.client is not None
        self.client.iopub_channel.close()
        self.client._iopub_channel = None  # jupyter_client makes the channel again when next asked
        self.client.iopub_channel.start()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and self.is_alive():
            probe = self.client.kernel_info()  # its busy/idle come on iopub once we are subscribed
            try:
                while parent_id(await self.client.get_iopub_msg(timeout=0.2)) != probe:
                    pass
            except queue.Empty:
                continue
            await self._drain_iopub()
            return
        if self.is_alive():  # its publisher is gone (the cell closed it): no cell will reach us
            raise KernelUnanswered("it stopped publishing its output", started=True)

    async def _reply_to(self, msg_id: str, timeout: float) -> dict[str, object] | None:
        """The shell reply to ``msg_id`` if it comes within ``timeout``; other replies are dropped."""
        assert self.client is not None
        try:
            while True:
                reply = await self.client.get_shell_msg(timeout=timeout)
                if parent_id(reply) == msg_id:
                    return reply
        except queue.Empty:
            return None

    async def interrupt(self) -> bool:
        """Send an interrupt; True once the kernel acknowledged it (the cell then ends with
        KeyboardInterrupt, seen by whoever iterates execute()). Reads only the control channel."""
        assert self.client is not None
        async with self._control_lock:
            msg = self.client.session.msg("interrupt_request", {})
            self.client.control_channel.send(msg)
            deadline = time.monotonic() + self.spec.interrupt_grace
            while time.monotonic() < deadline and self.is_alive():
                try:
                    reply = await self.client.get_control_msg(timeout=POLL_SECONDS)
                except queue.Empty:
                    continue
                if parent_id(reply) == msg["header"]["msg_id"]:
                    return True
            return False

    async def wait_idle(self) -> bool:
        """After an abandoned execute(): wait for that cell to end; False if it will not.

        Only for the task that owned the execute() iteration: iopub has one reader at a time.
        """
        assert self.client is not None
        msg_id, deadline = self.running, time.monotonic() + self.spec.interrupt_grace
        while msg_id is not None and time.monotonic() < deadline:
            try:
                msg = await self.client.get_iopub_msg(timeout=POLL_SECONDS)
            except queue.Empty:
                if not self.is_alive():
                    return False
                continue
            if parent_id(msg) == msg_id and is_idle(msg):
                self.running = msg_id = None
                await self._drain_shell()
        return msg_id is None

    async def _drain_shell(self) -> None:
        assert self.client is not None
        while True:
            try:
                await self.client.get_shell_msg(timeout=0.05)
            except queue.Empty:
                return

    async def shutdown(self) -> None:
        """Kill the process and free its sockets; safe to call twice."""
        if self.client is not None:
            self.client.stop_channels()
            self.client = None
        if self._zmq is not None:
            self._zmq.destroy(linger=0)
            self._zmq = None
        if self._relay is not None:
            self._relay.close()
            self._relay = None
        if self.process is not None:
            await asyncio.to_thread(self.process.cleanup)
        shutil.rmtree(self.runtime_dir, ignore_errors=True)

    def _environment(self) -> dict[str, str]:
        env = {
            "PATH": f"{self.spec.template.inside(self.spec.template.venv)}/bin:/usr/local/bin:/usr/bin:/bin",
            "HOME": SANDBOX_HOME,
            "USER": "user",
            "LANG": "C.UTF-8",
            "TMPDIR": "/tmp",
            "MPLCONFIGDIR": "/tmp/matplotlib",
            "XDG_CACHE_HOME": "/tmp/.cache",
            "IPYTHONDIR": "/tmp/ipython",
            "PYTHONDONTWRITEBYTECODE": "1",
            "SANDBOX_TEMPLATE": str(MOUNT_POINT),
            "PYDEVD_DISABLE_FILE_VALIDATION": "1",
            # What debugpy sets as ipykernel imports it: here, a kernel forked from a zygote that
            # imported it already has it too.
            "PYDEVD_USE_FRAME_EVAL": "NO",
            **thread_count_environment(self.spec.limits),
        }
        env.update(self.spec.env)  # the host's OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE, if set
        return env

    def _connection_info(self, key: str, ip: str) -> dict[str, object]:
        info: dict[str, object] = dict(zip(PORTS, range(1, len(PORTS) + 1), strict=True))
        info.update(transport="ipc", ip=ip, key=key, signature_scheme="hmac-sha256")
        return info

    def _write_connection_file(self, key: str) -> None:
        info = self._connection_info(key, f"{SANDBOX_RUNTIME}/k")
        (self.runtime_dir / "connection.json").write_text(json.dumps(info))


def in_own_namespace(code: str, name: str) -> str:
    """A cell that runs ``code`` in a namespace of its own (its ``__name__`` is ``name``), so the
    user's namespace gains no names from it."""
    return f"exec({code!r}, {{'__name__': {name!r}}})"


def error_for(exc: KernelDied) -> Event:
    return error_event(
        "KernelDied",
        f"The kernel died ({exc.reason}). It was restarted: variables and imports are gone,"
        " files in the workdir are kept.",
        [],
    )
