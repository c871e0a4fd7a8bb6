"""The isolation driver interface: how and where a kernel process runs, provisioner-shaped."""

from __future__ import annotations

import abc
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from sandboxes.drivers.limits import Limits

# Paths as the sandboxed process sees them.
SANDBOX_HOME = "/home/user"
SANDBOX_RUNTIME = "/run/kernel"
SANDBOX_UID = 1000
SANDBOX_GID = 1000


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
    connection file and ipc sockets) at SANDBOX_RUNTIME; every path in ``ro_binds`` is bound
    read-only at the same path. Nothing else of the host is visible.
    """

    argv: Sequence[str]
    env: Mapping[str, str]
    workdir: Path
    runtime_dir: Path
    ro_binds: Sequence[Path]
    limits: Limits
    # Where to bind a ro_binds path from, when not from itself (see server/staging.py).
    sources: Mapping[Path, Path] = field(default_factory=dict)
    # The unprivileged host user the sandbox runs as when sandboxd is root (see limits.py).
    host_uid: int | None = None
    host_gid: int | None = None
    name: str = "sandbox"
    extra: Mapping[str, str] = field(default_factory=dict)


class IsolatedProcess(abc.ABC):
    """A process started by a driver (the shape of jupyter_client's provisioners)."""

    pid: int

    @abc.abstractmethod
    def poll(self) -> int | None:
        """Return the exit code, or None while it runs."""

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

    def __init__(self) -> None:
        # Set by probe(): what works here, but badly enough that "auto" should not choose it.
        self.shortcomings: list[str] = []

    @abc.abstractmethod
    def probe(self, host_uid: int | None = None, host_gid: int | None = None) -> None:
        """Raise DriverUnavailable unless isolated processes really start on this machine
        (as ``host_uid``/``host_gid`` where given, as launches will)."""

    @abc.abstractmethod
    def launch(self, spec: LaunchSpec) -> IsolatedProcess:
        """Start ``spec.argv`` isolated; return at once (the process may still be starting)."""
