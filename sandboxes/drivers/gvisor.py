"""gVisor: ``runsc run`` starts the kernel on a user-space Linux kernel (the Sentry), not on the host's.

Each launch writes an OCI bundle: config.json and a read-only root holding only mount points, the
merged-usr symlinks and /etc/passwd, /etc/group, /etc/hosts; runsc keeps the container's state in
it too, so launches never share anything. Bind mounts are not overlaid (``--overlay2=none``) and
the Sentry may bind host unix sockets (``--host-uds=all``): the kernel's ZMQ ipc sockets under
SANDBOX_RUNTIME are real sockets in ``runtime_dir``, where the host-side client connects. It may
open host named pipes (``--host-fifo=open``): a snapshot's namespace reaches a restored kernel
through one in its workdir.

runsc drops its own privileges (the Sentry runs as nobody in fresh namespaces). The Sentry checks
guest permissions against host ownership, so the guest runs as ``host_uid``, the unprivileged
user that owns the workdir and the kernel's socket folder. runsc puts the sandbox in its own cgroup
(memory, no swap). Processes are capped by RLIMIT_NPROC, which the Sentry enforces for the guest:
with the ptrace platform one guest process costs several host tasks, so a host pids limit would
crash the Sentry rather than fail a fork.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import shutil
import signal
import subprocess
import tempfile
import uuid
from pathlib import Path
from typing import Any

from sandboxes.drivers.base import (
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
from sandboxes.drivers.limits import CGROUP_ROOT, GROUP_PREFIX

# ptrace, because the kvm platform of runsc 2022 hangs at boot under nested virtualisation.
RUNSC_FLAGS = (
    "--network=none",
    "--host-uds=all",
    "--host-fifo=open",
    "--overlay2=none",
    "--platform=ptrace",
)
INSTALL_HINT = "apt-get install runsc, or see https://gvisor.dev/docs/user_guide/install/"
CAPABILITY_SETS = ("bounding", "effective", "inheritable", "permitted", "ambient")
PR_SET_PDEATHSIG = 1
LIBC = ctypes.CDLL(None, use_errno=True)


class GVisorProcess(IsolatedProcess):
    def __init__(
        self, popen: subprocess.Popen[bytes], runsc: list[str], container_id: str, bundle: Path
    ) -> None:
        super().__init__(popen)
        self.runsc = runsc
        self.container_id = container_id
        self.bundle = bundle

    def kill(self) -> None:
        """SIGKILL every process in the container; ``runsc run`` exits and the Sentry follows."""
        self._runsc("kill", "--all", self.container_id, "KILL")
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.popen.pid, signal.SIGKILL)

    def cleanup(self) -> None:
        self.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.popen.wait(timeout=5)
        self._runsc("delete", "--force", self.container_id)
        shutil.rmtree(self.bundle, ignore_errors=True)

    def _runsc(self, *args: str) -> None:
        """A runsc management command; it fails only when the container is already gone."""
        command = [*self.runsc, *args]
        subprocess.run(command, check=False, stdin=subprocess.DEVNULL, capture_output=True, timeout=30)


class GVisorDriver(Driver):
    name = "gvisor"
    strength = 20
    # A signal reaches a busy kernel slowly on the ptrace platform (~2 s seen here).
    interrupt_grace = 10.0

    def __init__(self, executable: str | None = None) -> None:
        super().__init__()
        self.executable = executable or shutil.which("runsc")

    def probe(self, host_uid: int | None = None, host_gid: int | None = None) -> None:
        if not self.executable or not os.access(self.executable, os.X_OK):
            raise DriverUnavailable("gVisor (runsc) is not installed", INSTALL_HINT)
        if os.geteuid() != 0 or host_uid is None:
            raise DriverUnavailable(
                "runsc needs root to build its sandbox, and an unprivileged user to run it as",
                "run sandboxd as root with SANDBOXD_SANDBOX_UID set",
            )
        code, output, error = self.run_once("id -u", host_uid, host_gid)
        if code != 0 or output != str(host_uid):
            raise DriverUnavailable(
                f"runsc could not start a sandbox: {error or f'exit code {code}'}",
                "runsc needs root, ptrace and writable cgroups; check `runsc --version`, or " + INSTALL_HINT,
            )
        code, _, error = self.run_once("ls / > /dev/null && echo ok", host_uid, host_gid)
        if code != 0:
            self.shortcomings.append(f"this runsc cannot run `ls /` ({error}); it is too old for coreutils")

    def launch(self, spec: LaunchSpec, stderr: Stderr = subprocess.DEVNULL) -> IsolatedProcess:
        assert self.executable
        bundle = Path(tempfile.mkdtemp(prefix="sbx-gvisor-"))
        container_id = f"gvisor-{uuid.uuid4().hex[:16]}"
        write_bundle(spec, bundle, cgroups_path=f"/{GROUP_PREFIX}-{container_id}")
        runsc = [self.executable, "--root", str(bundle / "state"), *RUNSC_FLAGS]
        try:
            popen = subprocess.Popen(
                [*runsc, "run", "--bundle", str(bundle), container_id],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=stderr,
                preexec_fn=_die_with_parent,  # noqa: PLW1509 (no threads touch it)
                env={},
            )
        except OSError:
            shutil.rmtree(bundle, ignore_errors=True)
            raise
        return GVisorProcess(popen, runsc, container_id, bundle)


def write_bundle(spec: LaunchSpec, bundle: Path, cgroups_path: str) -> None:
    """The OCI bundle for ``spec``: its root folder and config.json."""
    mounts = _mounts(spec)
    _make_root(bundle / "rootfs", mounts, _guest_ids(spec))
    config = _config(spec, mounts, cgroups_path)
    (bundle / "config.json").write_text(json.dumps(config, indent=1))


def _die_with_parent() -> None:
    """A preexec_fn: a session of its own, and SIGKILL when sandboxd dies (runsc's sandbox follows)."""
    os.setsid()
    LIBC.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def _guest_ids(spec: LaunchSpec) -> tuple[int, int]:
    """The guest's uid and gid: the host user that owns its files (never 0)."""
    uid = spec.host_uid if spec.host_uid is not None else SANDBOX_UID
    return uid, spec.host_gid if spec.host_gid is not None else uid


def _mounts(spec: LaunchSpec) -> list[dict[str, Any]]:
    """Every mount, parents before children (so /tmp's tmpfs never hides a bind below it)."""
    dirs = [path for path in SYSTEM_DIRS if os.path.isdir(path) and not os.path.islink(path)]
    files = [path for path in SYSTEM_FILES if os.path.exists(path)]
    mounts = [_bind(path, path, readonly=True) for path in dirs]
    mounts += [_bind(os.path.realpath(path), path, readonly=True) for path in files]
    mounts += [_bind(str(host), str(inside), readonly=True) for inside, host in spec.ro_binds.items()]
    mounts += [
        _bind(str(spec.workdir), SANDBOX_HOME, readonly=False),
        _bind(str(spec.runtime_dir), SANDBOX_RUNTIME, readonly=False),
        {"destination": "/tmp", "type": "tmpfs", "source": "tmpfs", "options": [f"size={TMP_SIZE}"]},
        {"destination": "/proc", "type": "proc", "source": "proc"},
        {"destination": "/dev", "type": "tmpfs", "source": "tmpfs"},
        # runsc's own /dev/shm is root's 0755: POSIX semaphores (multiprocessing) need 1777.
        {"destination": "/dev/shm", "type": "tmpfs", "source": "shm", "options": ["mode=1777"]},
    ]
    return sorted(mounts, key=lambda mount: Path(mount["destination"]).parts)


def _bind(source: str, destination: str, *, readonly: bool) -> dict[str, Any]:
    options = ["rbind", "ro" if readonly else "rw"]
    return {"destination": destination, "type": "bind", "source": source, "options": options}


def _make_root(rootfs: Path, mounts: list[dict[str, Any]], ids: tuple[int, int]) -> None:
    """A root holding only the identity files, the merged-usr symlinks and the mount points."""
    (rootfs / "etc").mkdir(parents=True)
    for name, content in identity_files(*ids).items():
        (rootfs / "etc" / name).write_text(content)
    for path in SYSTEM_DIRS:
        if os.path.islink(path):
            (rootfs / path.lstrip("/")).symlink_to(os.readlink(path))
    for mount in mounts:
        point = rootfs / mount["destination"].lstrip("/")
        if mount["type"] == "bind" and not os.path.isdir(mount["source"]):
            point.parent.mkdir(parents=True, exist_ok=True)
            point.touch()
        else:
            point.mkdir(parents=True, exist_ok=True)


def _config(spec: LaunchSpec, mounts: list[dict[str, Any]], cgroups_path: str) -> dict[str, Any]:
    """The OCI runtime spec: SANDBOX_UID without capabilities, exactly ``spec.env``, the limits."""
    limits = spec.limits
    uid, gid = _guest_ids(spec)
    memory = {"limit": limits.memory_bytes}
    if _swap_limitable():
        memory["swap"] = limits.memory_bytes  # memory + swap, so no swap at all
    return {
        "ociVersion": "1.0.2",
        "process": {
            "user": {"uid": uid, "gid": gid},
            "args": list(spec.argv),
            "env": [f"{name}={value}" for name, value in spec.env.items()],
            "cwd": SANDBOX_HOME,
            "capabilities": {kind: [] for kind in CAPABILITY_SETS},
            "noNewPrivileges": True,
            "rlimits": [
                _rlimit("RLIMIT_CORE", 0),
                _rlimit("RLIMIT_FSIZE", limits.disk_bytes),
                _rlimit("RLIMIT_NOFILE", limits.open_files),
                _rlimit("RLIMIT_NPROC", limits.max_processes),
            ],
        },
        "root": {"path": "rootfs", "readonly": True},
        "hostname": "sandbox",
        "mounts": mounts,
        "linux": {
            "namespaces": [{"type": kind} for kind in ("pid", "network", "ipc", "uts", "mount")],
            "resources": {"memory": memory},
            "cgroupsPath": cgroups_path,
        },
    }


def _rlimit(kind: str, value: int) -> dict[str, Any]:
    return {"type": kind, "hard": value, "soft": value}


def _swap_limitable() -> bool:
    """Whether the memory cgroup can limit swap here (runsc fails on a limit it cannot write)."""
    v1_swap = CGROUP_ROOT / "memory" / "memory.memsw.limit_in_bytes"
    return (CGROUP_ROOT / "cgroup.controllers").exists() or v1_swap.exists()
