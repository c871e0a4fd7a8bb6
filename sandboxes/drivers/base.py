"""The isolation driver interface: how and where a kernel process runs, provisioner-shaped."""

from __future__ import annotations

import abc
import contextlib
import os
import signal
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, ClassVar

from sandboxes.drivers.limits import Limits, tree_rss

# Paths as the sandboxed process sees them.
SANDBOX_HOME = "/home/user"
SANDBOX_RUNTIME = "/run/kernel"
SANDBOX_UID = 1000
SANDBOX_GID = 1000

# The OS runtime every Python needs; nothing else of the host (no /etc, /home, /root, /var, /tmp).
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
SYSTEM_FILES = ("/etc/ld.so.cache", "/etc/localtime")
TMP_SIZE = 256 << 20

Stderr = IO[bytes] | int


def identity_files(uid: int = SANDBOX_UID, gid: int = SANDBOX_GID) -> dict[str, str]:
    """The /etc files a sandbox gets instead of the host's."""
    return {
        "passwd": (
            f"user:x:{uid}:{gid}:sandbox:{SANDBOX_HOME}:/bin/sh\n"
            "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"
        ),
        "group": f"user:x:{gid}:\nnogroup:x:65534:\n",
        "hosts": "127.0.0.1 localhost sandbox\n",
    }


class DriverUnavailable(RuntimeError):
    """The driver cannot run on this machine; ``hint`` says what to install or change."""

    def __init__(self, reason: str, hint: str = "") -> None:
        super().__init__(reason + (f" ({hint})" if hint else ""))
        self.reason = reason
        self.hint = hint


@dataclass(frozen=True)
class LaunchSpec:
    """Everything a driver needs to start one isolated process.

    ``workdir`` is bound read-write at SANDBOX_HOME and ``runtime_dir`` (the kernel's
    connection file and ipc sockets) at SANDBOX_RUNTIME; ``ro_binds`` maps each read-only path
    inside to the host path bound there. Nothing else of the host is visible.
    """

    argv: Sequence[str]
    env: Mapping[str, str]
    workdir: Path
    runtime_dir: Path
    ro_binds: Mapping[Path, Path]
    limits: Limits
    # The unprivileged host user the sandbox runs as when sandboxd is root (see limits.py).
    host_uid: int | None = None
    host_gid: int | None = None
    # Python a fork server may run once for every kernel it forks (sandboxes/forkserver): imports.
    preload: str = ""


class IsolatedProcess(abc.ABC):
    """A process started by a driver (the shape of jupyter_client's provisioners)."""

    def __init__(self, popen: subprocess.Popen[bytes]) -> None:
        self.popen = popen
        self.pid = popen.pid

    def poll(self) -> int | None:
        """The exit code, or None while it runs."""
        return self.popen.poll()

    def wait(self, timeout: float) -> int:
        """The exit code once poll() has one; TimeoutExpired after ``timeout`` seconds. Through
        poll(), which each kind of process answers in its own way (gVisor's sees the OOM
        killer, a forked kernel's is what its zygote reports)."""
        deadline = time.monotonic() + timeout
        while (code := self.poll()) is None:
            if time.monotonic() > deadline:
                raise subprocess.TimeoutExpired(f"isolated process {self.pid}", timeout)
            time.sleep(0.02)
        return code

    def _kill_own_group(self) -> None:
        """SIGKILL the process group our child leads (it starts a session of its own), only while
        it is unreaped: once reaped, its pid, and so its group's id, may be another process's."""
        if self.popen.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.popen.pid, signal.SIGKILL)

    def memory_used(self) -> int | None:
        """The bytes the process and everything it started use now, as its memory limit counts
        them where a cgroup holds it (else their resident memory); None once it has ended."""
        return tree_rss(self.pid) if self.poll() is None else None

    @abc.abstractmethod
    def kill(self) -> None:
        """Kill the process and everything it started."""

    @abc.abstractmethod
    def cleanup(self) -> None:
        """Release what the launch acquired (cgroups, bundles). Safe to call twice."""

    def exit_description(self) -> str:
        """A human sentence about how the process ended, for error messages."""
        code = self.poll()
        if code is None:
            return "still running"
        if code < 0:
            return f"killed by signal {-code}"
        if code in (128 + 9, 137):
            return "killed (signal 9, most often the memory limit)"
        return f"exited with code {code}"


class Driver(abc.ABC):
    """One isolation technology. ``strength`` orders drivers when choosing a default."""

    name: ClassVar[str]
    strength: ClassVar[int]
    # How long an interrupted cell may take to stop before its kernel is restarted instead.
    interrupt_grace: ClassVar[float] = 3.0
    # Whether its kernels' network is a kernel network namespace sandboxd can enter to open
    # egress ports in (sandboxes/server/egress); not gVisor's, which has a network stack of its own.
    namespace_network: ClassVar[bool] = True

    def __init__(self) -> None:
        # Set by probe(): what works here, but badly enough that "auto" should not choose it.
        self.shortcomings: list[str] = []

    @abc.abstractmethod
    def probe(self, host_uid: int | None = None, host_gid: int | None = None) -> None:
        """Raise DriverUnavailable unless isolated processes really start on this machine
        (as ``host_uid``/``host_gid`` where given, as launches will)."""

    @abc.abstractmethod
    def launch(self, spec: LaunchSpec, stderr: Stderr = subprocess.DEVNULL) -> IsolatedProcess:
        """Start ``spec.argv`` isolated; return at once (the process may still be starting)."""

    def run_once(
        self, command: str, uid: int | None, gid: int | None, limits: Limits | None = None
    ) -> tuple[int, str, str]:
        """Run a shell command in a throwaway sandbox: (exit code, its output, the driver's errors).

        For probes. Raises OSError when the driver's own program cannot be started.
        """
        with tempfile.TemporaryDirectory() as tmp, tempfile.TemporaryFile() as errors:
            if uid is not None:
                os.chown(tmp, uid, gid if gid is not None else uid)
            spec = LaunchSpec(
                argv=["/bin/sh", "-c", f"({command}) > {SANDBOX_HOME}/out 2>&1"],
                env={"PATH": "/usr/bin:/bin"},
                workdir=Path(tmp),
                runtime_dir=Path(tmp),
                ro_binds={},
                limits=limits or Limits(),
                host_uid=uid,
                host_gid=gid,
            )
            process = self.launch(spec, errors)
            try:
                code = process.wait(timeout=60)
            finally:
                process.cleanup()
            out = Path(tmp, "out")
            output = out.read_text().strip() if out.exists() else ""
            errors.seek(0)
            problem = errors.read().decode(errors="replace").strip()
        return code, output, problem or output
