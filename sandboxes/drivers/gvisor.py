"""gVisor: ``runsc run`` puts the kernel on a user-space Linux kernel (the Sentry), the host kernel behind it.

Each launch writes an OCI bundle (config.json, a generated read-only root holding only mount
points, /etc/passwd, /etc/group and /etc/hosts) and keeps runsc's container state inside it. Bind
mounts are not overlaid (``--overlay2=none``) and the Sentry may create host unix sockets
(``--host-uds=all``), so the kernel's ZMQ ipc sockets under SANDBOX_RUNTIME appear in
``runtime_dir`` where the host-side client connects to them. runsc puts the sandbox in its own
cgroup (memory, swap off); RLIMIT_NPROC, which the Sentry enforces for uid SANDBOX_UID, caps
processes, since with the ptrace platform one guest process costs several host tasks.
"""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path
from typing import Any

from sandboxes.drivers.base import (
    SANDBOX_GID,
    SANDBOX_HOME,
    SANDBOX_RUNTIME,
    SANDBOX_UID,
    Driver,
    DriverUnavailable,
    IsolatedProcess,
    LaunchSpec,
)
from sandboxes.drivers.bwrap import SYSTEM_DIRS, SYSTEM_FILES, TMP_SIZE, _write_identity_files
from sandboxes.drivers.limits import CGROUP_ROOT, GROUP_PREFIX, Limits

RUNSC_FLAGS = ("--network=none", "--host-uds=all", "--overlay2=none", "--platform=ptrace")
PR_SET_PDEATHSIG = 1
LIBC = ctypes.CDLL(None, use_errno=True)
INSTALL_HINT = "apt-get install runsc (or see https://gvisor.dev/docs/user_guide/install/)"


class GVisorProcess(IsolatedProcess):
    def __init__(self, popen: subprocess.Popen[bytes], runsc: list[str], container_id: str, bundle: Path) -> None:
        self.popen = popen
        self.pid = popen.pid
        self.runsc = runsc
        self.container_id = container_id
        self.bundle = bundle

    def poll(self) -> int | None:
        return self.popen.poll()

    def kill(self) -> None:
        """Destroy the whole sandbox (every process in it, its cgroup and state)."""
        subprocess.run(
            [*self.runsc, "delete", "--force", self.container_id],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=30,
        )
        try:
            os.killpg(self.popen.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    def cleanup(self) -> None:
        self.kill()
        try:
            self.popen.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        shutil.rmtree(self.bundle, ignore_errors=True)


class GVisorDriver(Driver):
    name = "gvisor"
    strength = 20

    def __init__(self, executable: str | None = None) -> None:
        self.executable = executable or shutil.which("runsc")

    def probe(self) -> None:
        if not self.executable:
            raise DriverUnavailable("gVisor (runsc) is not installed", INSTALL_HINT)
        if os.geteuid() != 0:
            raise DriverUnavailable("runsc needs root to set up its sandbox", "run the sandbox service as root")
        with tempfile.TemporaryDirectory() as tmp:
            spec = LaunchSpec(
                argv=[sys.executable, "-c", "import os; print(os.getuid())"],
                env={},
                workdir=Path(tmp),
                runtime_dir=Path(tmp),
                ro_binds=[Path(sys.base_prefix), Path(sys.prefix)],
                limits=Limits(),
            )
            bundle = Path(tempfile.mkdtemp(prefix="sbx-gvisor-"))
            try:
                argv = self.command(spec, bundle, _container_id())
                done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
            finally:
                shutil.rmtree(bundle, ignore_errors=True)
        if done.returncode != 0 or done.stdout.strip() != str(SANDBOX_UID).encode():
            raise DriverUnavailable(
                f"runsc could not start a sandbox: {done.stderr.decode(errors='replace').strip()}",
                f"{INSTALL_HINT}; runsc needs root, ptrace and writable cgroups",
            )

    def launch(self, spec: LaunchSpec) -> IsolatedProcess:
        bundle = Path(tempfile.mkdtemp(prefix="sbx-gvisor-"))
        container_id = _container_id()
        popen = subprocess.Popen(
            self.command(spec, bundle, container_id),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=_die_with_parent,  # noqa: PLW1509 (no threads touch it)
            close_fds=True,
            env={},
        )
        return GVisorProcess(popen, self.runsc(bundle), container_id, bundle)

    def runsc(self, bundle: Path) -> list[str]:
        """runsc with this launch's private state directory and the isolation flags."""
        assert self.executable
        return [self.executable, "--root", str(bundle / "state"), *RUNSC_FLAGS]

    def command(self, spec: LaunchSpec, bundle: Path, container_id: str) -> list[str]:
        """Write the OCI bundle and return the ``runsc run`` argv that starts it."""
        for path in (spec.workdir, spec.runtime_dir):
            _give_to_sandbox_user(path)
        mounts = _mounts(spec)
        _make_root(bundle / "rootfs", mounts)
        config = _config(spec, mounts, cgroups_path=f"/{GROUP_PREFIX}-{container_id}")
        (bundle / "config.json").write_text(json.dumps(config, indent=1))
        return [*self.runsc(bundle), "run", "--bundle", str(bundle), container_id]


def _container_id() -> str:
    return f"gvisor-{uuid.uuid4().hex[:16]}"


def _die_with_parent() -> None:
    """A preexec_fn: own session, and SIGKILL when the service dies (runsc takes the sandbox along)."""
    os.setsid()
    LIBC.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def _give_to_sandbox_user(root: Path) -> None:
    """The Sentry checks host ownership, so uid SANDBOX_UID must own what it may write."""
    os.chown(root, SANDBOX_UID, SANDBOX_GID)
    for parent, dirs, files in os.walk(root):
        for name in dirs + files:
            os.chown(os.path.join(parent, name), SANDBOX_UID, SANDBOX_GID, follow_symlinks=False)


def _mounts(spec: LaunchSpec) -> list[dict[str, Any]]:
    """Every mount, parents before children: system dirs, ro_binds, home, runtime, /tmp, /proc, /dev."""
    mounts = [_bind(path, path, readonly=True) for path in SYSTEM_DIRS if os.path.isdir(path) and not os.path.islink(path)]
    mounts += [_bind(os.path.realpath(path), path, readonly=True) for path in SYSTEM_FILES if os.path.exists(path)]
    mounts += [_bind(str(path), str(path), readonly=True) for path in spec.ro_binds]
    mounts += [
        _bind(str(spec.workdir), SANDBOX_HOME, readonly=False),
        _bind(str(spec.runtime_dir), SANDBOX_RUNTIME, readonly=False),
        {"destination": "/tmp", "type": "tmpfs", "source": "tmpfs", "options": [f"size={TMP_SIZE}"]},
        {"destination": "/proc", "type": "proc", "source": "proc"},
        {"destination": "/dev", "type": "tmpfs", "source": "tmpfs"},
    ]
    return sorted(mounts, key=lambda mount: Path(mount["destination"]).parts)


def _bind(source: str, destination: str, *, readonly: bool) -> dict[str, Any]:
    options = ["rbind", "ro" if readonly else "rw"]
    return {"destination": destination, "type": "bind", "source": source, "options": options}


def _make_root(rootfs: Path, mounts: list[dict[str, Any]]) -> None:
    """A root holding only mount points, the merged-usr symlinks and the identity files."""
    (rootfs / "etc").mkdir(parents=True)
    _write_identity_files(rootfs / "etc")
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
    rootfs.chmod(0o755)


def _config(spec: LaunchSpec, mounts: list[dict[str, Any]], cgroups_path: str) -> dict[str, Any]:
    """The OCI runtime spec: uid SANDBOX_UID without capabilities, exactly spec.env, the limits."""
    limits = spec.limits
    memory: dict[str, int] = {"limit": limits.memory_bytes}
    if _swap_accounting():
        memory["swap"] = limits.memory_bytes  # memory + swap: no swap at all
    return {
        "ociVersion": "1.0.2",
        "process": {
            "user": {"uid": SANDBOX_UID, "gid": SANDBOX_GID},
            "args": list(spec.argv),
            "env": [f"{name}={value}" for name, value in spec.env.items()],
            "cwd": SANDBOX_HOME,
            "capabilities": {key: [] for key in ("bounding", "effective", "inheritable", "permitted", "ambient")},
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


def _swap_accounting() -> bool:
    """Whether the host's memory cgroup can limit swap (runsc fails writing a limit it cannot)."""
    return (CGROUP_ROOT / "cgroup.controllers").exists() or (CGROUP_ROOT / "memory" / "memory.memsw.limit_in_bytes").exists()
