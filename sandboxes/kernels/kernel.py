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
from sandboxes.kernels.messages import Event, error_event, is_idle, to_event
from sandboxes.templates import MOUNT_POINT, Template

POLL_SECONDS = 0.05
PORTS = ("shell_port", "iopub_port", "stdin_port", "control_port", "hb_port")


class KernelDied(Exception):
    """The kernel process is gone; ``reason`` says how it ended."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class KernelStartFailed(Exception):
    pass


@dataclass(frozen=True)
class KernelSpec:
    """What a kernel needs besides its workdir: runtime, isolation and quotas."""

    template: Template
    driver: Driver
    limits: Limits
    env: Mapping[str, str]
    owner: tuple[int, int] | None = None  # the unprivileged host (uid, gid) to run as
    sources: Mapping[Path, Path] = field(default_factory=dict)  # staged runtime paths


class Kernel:
    """Start, execute on, interrupt and kill one isolated ipykernel."""

    def __init__(self, spec: KernelSpec, workdir: Path) -> None:
        self.spec = spec
        self.workdir = workdir
        self.runtime_dir = Path(tempfile.mkdtemp(prefix="sbx-k-"))
        self.process: IsolatedProcess | None = None
        self.client: AsyncKernelClient | None = None
        self.running: str | None = None  # msg_id of the cell being executed
        self._control_lock = asyncio.Lock()

    async def start(self, timeout: float = 60.0) -> None:
        """Launch the kernel and wait until it answers kernel_info (startup file included)."""
        key = secrets.token_hex(32)
        self._write_connection_file(key)
        template = self.spec.template
        binds = template.runtime_binds()
        argv = [
            str(template.inside(template.python)),
            "-m",
            "ipykernel_launcher",
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
            ro_binds={inside: self.spec.sources.get(host, host) for inside, host in binds.items()},
            limits=self.spec.limits,
            host_uid=self.spec.owner[0] if self.spec.owner else None,
            host_gid=self.spec.owner[1] if self.spec.owner else None,
        )
        if self.spec.owner:  # the kernel creates its sockets here
            os.chown(self.runtime_dir, *self.spec.owner)
        self.process = await asyncio.to_thread(self.spec.driver.launch, launch)
        self.client = AsyncKernelClient()
        self.client.load_connection_info(self._host_connection_info(key))
        self.client.start_channels()
        try:
            await self._wait_ready(timeout)
        except BaseException:
            await self.shutdown()
            raise
        if self.spec.owner:  # sockets made: from now on the kernel may not swap them for links
            os.chown(self.runtime_dir, os.getuid(), os.getgid())
            self.runtime_dir.chmod(0o755)

    async def _wait_ready(self, timeout: float) -> None:
        assert self.client is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self._check_alive()
            msg_id = self.client.kernel_info()
            try:
                while True:
                    reply = await self.client.get_shell_msg(timeout=0.25)
                    if reply["parent_header"].get("msg_id") == msg_id:
                        await self._drain_iopub()
                        return
            except queue.Empty:
                continue
        raise KernelStartFailed(f"kernel did not become ready within {timeout:.0f}s")

    async def _drain_iopub(self) -> None:
        assert self.client is not None
        while True:
            try:
                await self.client.get_iopub_msg(timeout=0.01)
            except queue.Empty:
                return

    def _check_alive(self) -> None:
        if self.process is None or self.process.poll() is not None:
            reason = self.process.exit_description() if self.process else "never started"
            raise KernelDied(f"the kernel process {reason}")

    def is_alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    async def execute(
        self, code: str, timeout: float | None, *, silent: bool = False
    ) -> AsyncIterator[Event]:
        """Run ``code``; yield its events as they come. Raises KernelDied, asyncio.TimeoutError.
        A ``silent`` cell is sandboxd's own: no execution count, no history, no Out entry."""
        assert self.client is not None
        self._check_alive()
        # stop_on_error=False: cells run one at a time, so nothing queued should be aborted.
        msg_id = self.client.execute(
            code, silent=silent, store_history=not silent, allow_stdin=False, stop_on_error=False
        )
        self.running = msg_id
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            if deadline is not None and time.monotonic() > deadline:
                raise TimeoutError
            try:
                msg = await self.client.get_iopub_msg(timeout=POLL_SECONDS)
            except queue.Empty:
                self._check_alive()
                continue
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            if is_idle(msg):
                break
            event = to_event(msg)
            if event is not None:
                yield event
        self.running = None
        yield {"type": "end_of_execution", "execution_count": await self._execution_count(msg_id)}

    async def _execution_count(self, msg_id: str) -> int | None:
        assert self.client is not None
        try:
            while True:
                reply = await self.client.get_shell_msg(timeout=1.0)
                if reply["parent_header"].get("msg_id") == msg_id:
                    return reply["content"].get("execution_count")
        except queue.Empty:
            return None

    async def interrupt(self) -> bool:
        """Send an interrupt; True once the kernel acknowledged it (the cell then ends with
        KeyboardInterrupt, seen by whoever iterates execute()). Reads only the control channel."""
        assert self.client is not None
        async with self._control_lock:
            msg = self.client.session.msg("interrupt_request", {})
            self.client.control_channel.send(msg)
            deadline = time.monotonic() + self.spec.driver.interrupt_grace
            while time.monotonic() < deadline and self.is_alive():
                try:
                    reply = await self.client.get_control_msg(timeout=POLL_SECONDS)
                except queue.Empty:
                    continue
                if reply["parent_header"].get("msg_id") == msg["header"]["msg_id"]:
                    return True
            return False

    async def wait_idle(self) -> bool:
        """After an abandoned execute(): wait for that cell to end; False if it will not.

        Only for the task that owned the execute() iteration: iopub has one reader at a time.
        """
        assert self.client is not None
        msg_id, deadline = self.running, time.monotonic() + self.spec.driver.interrupt_grace
        while msg_id is not None and time.monotonic() < deadline:
            try:
                msg = await self.client.get_iopub_msg(timeout=POLL_SECONDS)
            except queue.Empty:
                if not self.is_alive():
                    return False
                continue
            if msg["parent_header"].get("msg_id") == msg_id and is_idle(msg):
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
        }
        env.update(self.spec.env)
        return env

    def _connection_info(self, key: str, ip: str) -> dict[str, object]:
        info: dict[str, object] = dict(zip(PORTS, range(1, len(PORTS) + 1), strict=True))
        info.update(transport="ipc", ip=ip, key=key, signature_scheme="hmac-sha256")
        return info

    def _write_connection_file(self, key: str) -> None:
        info = self._connection_info(key, f"{SANDBOX_RUNTIME}/k")
        (self.runtime_dir / "connection.json").write_text(json.dumps(info))

    def _host_connection_info(self, key: str) -> dict[str, object]:
        return self._connection_info(key, str(self.runtime_dir / "k"))


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
