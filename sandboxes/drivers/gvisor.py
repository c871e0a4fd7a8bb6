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
(memory, no swap); when the host's OOM killer fires in it, sandboxd ends the sandbox (the Sentry
survives a killed stub, but its guest hangs). Processes are capped by RLIMIT_NPROC, which the
Sentry enforces for the guest: one guest process costs several host tasks (stubs), so a host pids
limit would crash the Sentry rather than fail a fork.

The platform (how the Sentry traps system calls) is systrap by default: it needs runsc from 2023
or later (scripts/ensure-system-packages installs Debian 13's where the distribution's is older).
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

from sandboxes.drivers import seccomp_filter
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
from sandboxes.drivers.limits import CGROUP_ROOT, CPU_PERIOD_US, CPU_SHARES_V1, GROUP_PREFIX, Limits

# --oci-seccomp: the Sentry applies config.json's seccomp filter (seccomp_filter.py) to the guest.
RUNSC_FLAGS = ("--network=none", "--host-uds=all", "--host-fifo=open", "--overlay2=none", "--oci-seccomp")
# systrap (seccomp traps, runsc 2023 and later) is the fastest platform that runs without KVM;
# the kvm platform hangs at boot under nested virtualisation, as on these machines.
DEFAULT_PLATFORM = "systrap"
INSTALL_HINT = (
    "scripts/ensure-system-packages (as root) installs a current runsc; "
    "see https://gvisor.dev/docs/user_guide/install/"
)
# What the probe checks a sandbox does: its uid, coreutils (runsc before 2024 fails on them), no
# network but loopback, and a Python with threads and unix sockets (what a kernel needs).
ESSENTIALS = (
    "id -u; ls / > /dev/null && echo ls ok; sed -n 's/^ *\\([^:]*\\):.*/net \\1/p' /proc/net/dev;"
    " python3 -c 'import socket, threading; t = threading.Thread(target=socket.socketpair); t.start();"
    ' t.join(); print("python ok")\''
)
# ...and that the memory limit holds: touching 1 GiB under 256 MiB ends the sandbox.
PROBE_LIMITS = Limits(memory_bytes=256 << 20)
MEMORY_HOG = "python3 -c 'b = bytearray(1 << 30); b[::4096] = bytes(1 << 18)' && echo survived"
CAPABILITY_SETS = ("bounding", "effective", "inheritable", "permitted", "ambient")
PR_SET_PDEATHSIG = 1
LIBC = ctypes.CDLL(None, use_errno=True)


class GVisorProcess(IsolatedProcess):
    def __init__(
        self, popen: subprocess.Popen[bytes], runsc: list[str], container_id: str, bundle: Path, group: str
    ) -> None:
        super().__init__(popen)
        self.runsc = runsc
        self.container_id = container_id
        self.bundle = bundle
        self.group = group
        self.out_of_memory = False

    def poll(self) -> int | None:
        code = self.popen.poll()
        if code is None and not self.out_of_memory and _oom_kills(self.group) > 0:
            # The host's OOM killer took one of the Sentry's processes (on systrap, a stub that
            # maps the guest's memory): the Sentry lives on but the guest hangs, so end it here.
            self.out_of_memory = True
            self.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                code = self.popen.wait(timeout=5)
        if self.out_of_memory and code is not None:
            return 128 + signal.SIGKILL  # described as the memory limit
        return code

    def memory_used(self) -> int | None:
        """The sandbox's memory cgroup's figure (the Sentry and the guest it holds)."""
        if self.poll() is not None:
            return None
        v1, v2 = CGROUP_ROOT / "memory" / self.group, CGROUP_ROOT / self.group
        for counter in (v2 / "memory.current", v1 / "memory.usage_in_bytes"):
            with contextlib.suppress(OSError, ValueError):
                return int(counter.read_text())
        return super().memory_used()

    def kill(self) -> None:
        """SIGKILL every process in the container; ``runsc run`` exits and the Sentry follows."""
        self._runsc("kill", "--all", self.container_id, "KILL")
        self._kill_own_group()

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
    namespace_network = False

    def __init__(self, executable: str | None = None, platform: str = DEFAULT_PLATFORM) -> None:
        super().__init__()
        self.executable = executable or shutil.which("runsc")
        self.platform = platform

    def probe(self, host_uid: int | None = None, host_gid: int | None = None) -> None:
        if not self.executable or not os.access(self.executable, os.X_OK):
            raise DriverUnavailable("gVisor (runsc) is not installed", INSTALL_HINT)
        if os.geteuid() != 0 or host_uid is None:
            raise DriverUnavailable(
                "runsc needs root to build its sandbox, and an unprivileged user to run it as",
                "run sandboxd as root (sandboxes run as SANDBOXD_UID_BASE and up)",
            )
        code, output, error = self.run_once(ESSENTIALS, host_uid, host_gid)
        lines = output.splitlines()
        if code != 0 or not lines or lines[0] != str(host_uid):
            raise DriverUnavailable(
                f"runsc could not start a sandbox: {error or f'exit code {code}'}",
                f"runsc needs root and writable cgroups, and a build with the {self.platform} platform"
                " (2023 or later); check `runsc --version`; " + INSTALL_HINT,
            )
        interfaces = [line.removeprefix("net ") for line in lines if line.startswith("net ")]
        if interfaces != ["lo"]:
            raise DriverUnavailable(f"a sandbox has networks besides lo: {interfaces}", INSTALL_HINT)
        if "python ok" not in lines:
            raise DriverUnavailable(f"Python does not start under runsc: {error}", INSTALL_HINT)
        if "ls ok" not in lines:
            self.shortcomings.append(f"this runsc cannot run `ls /` ({error}); it is too old for coreutils")
        code, output, error = self.run_once(MEMORY_HOG, host_uid, host_gid, PROBE_LIMITS)
        if "survived" in output:
            raise DriverUnavailable(
                f"a sandbox kept 1 GiB under a {PROBE_LIMITS.memory_bytes >> 20} MiB memory limit",
                "runsc needs a memory cgroup it can write; " + INSTALL_HINT,
            )

    def launch(self, spec: LaunchSpec, stderr: Stderr = subprocess.DEVNULL) -> IsolatedProcess:
        assert self.executable
        bundle = Path(tempfile.mkdtemp(prefix="sbx-gvisor-"))
        container_id = f"gvisor-{uuid.uuid4().hex[:16]}"
        group = f"{GROUP_PREFIX}-{container_id}"
        write_bundle(spec, bundle, cgroups_path=f"/{group}")
        state = str(bundle / "state")
        runsc = [self.executable, "--root", state, *RUNSC_FLAGS, f"--platform={self.platform}"]
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
        return GVisorProcess(popen, runsc, container_id, bundle, group)


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
    resources: dict[str, Any] = {"memory": memory}
    if limits.cpu_cores > 0:  # the whole sandbox (Sentry, gofer, stubs): its cores, and an equal weight
        quota = round(limits.cpu_cores * CPU_PERIOD_US)
        resources["cpu"] = {"quota": quota, "period": CPU_PERIOD_US, "shares": CPU_SHARES_V1}
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
            "resources": resources,
            "cgroupsPath": cgroups_path,
            "seccomp": seccomp_filter.oci_profile(),
        },
    }


def _rlimit(kind: str, value: int) -> dict[str, Any]:
    return {"type": kind, "hard": value, "soft": value}


def _oom_kills(group: str) -> int:
    """How many processes the host's OOM killer has killed in the sandbox's memory cgroup."""
    v1, v2 = CGROUP_ROOT / "memory" / group / "memory.oom_control", CGROUP_ROOT / group / "memory.events"
    for events in (v1, v2):
        with contextlib.suppress(OSError):
            for line in events.read_text().splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill":
                    return int(value)
    return 0


def _swap_limitable() -> bool:
    """Whether the memory cgroup can limit swap here (runsc fails on a limit it cannot write)."""
    v1_swap = CGROUP_ROOT / "memory" / "memory.memsw.limit_in_bytes"
    return (CGROUP_ROOT / "cgroup.controllers").exists() or v1_swap.exists()
