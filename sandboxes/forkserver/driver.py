"""bubblewrap's isolation, with each kernel forked from a zygote that has imported its template.

A kernel started afresh spends ~2 s of CPU and ~150 MiB of its own memory importing ipykernel,
pandas, matplotlib and the rest; a fork shares those pages with its zygote until it writes them
(benchmarks/density.py measures both). Forking needs sandboxd to be root (the fork confines itself
as bubblewrap would: zygote.py says how) and cgroups (its memory and process limits); any other
launch, and every launch where those are missing, is bubblewrap's own.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
from pathlib import Path

from sandboxes.drivers import procfiles, seccomp_filter
from sandboxes.drivers import scaffold as scaffold_module
from sandboxes.drivers.base import (
    SANDBOX_HOME,
    SANDBOX_RUNTIME,
    SYSTEM_DIRS,
    SYSTEM_FILES,
    TMP_SIZE,
    IsolatedProcess,
    LaunchSpec,
    Stderr,
    identity_files,
)
from sandboxes.drivers.bwrap import DEVICE_LINKS, DEVICE_NODES, BwrapDriver
from sandboxes.drivers.limits import Cgroup
from sandboxes.forkserver.server import ForkServer, top_folder

# Where a relocated runtime path may be seen inside: the zygote hides the host's folder of that
# name from itself to bind it there, which it may not do to the system's own folders.
RELOCATABLE_TOPS = ("/opt",)


class ForkedProcess(IsolatedProcess):
    """A kernel forked by a zygote: not our child, so its end is what the zygote reports, and
    its pid is ours to signal only until then (reaped, the pid may be any process's)."""

    def __init__(self, server: ForkServer, ident: int, pid: int, cgroup: Cgroup, root: Path) -> None:
        self.server = server
        self.ident = ident
        self.pid = pid
        self.cgroup = cgroup
        self.root = root
        self._code: int | None = None  # kept once known: the server forgets it at cleanup

    def poll(self) -> int | None:
        if self._code is None:
            self._code = self.server.exit_code(self.ident)
        return self._code

    def memory_used(self) -> int | None:
        return self.cgroup.memory_used() if self.poll() is None else None

    def kill(self) -> None:
        self.cgroup.kill_all()
        if self.poll() is None:  # its first process may not have joined the cgroup yet
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)

    def cleanup(self) -> None:
        self.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.wait(timeout=5)
            self.server.forget(self.ident)
        self.cgroup.remove()
        with contextlib.suppress(OSError):
            self.root.rmdir()


class ForkingDriver(BwrapDriver):
    """BwrapDriver whose kernels (``python SCRIPT``, as root) come from one zygote per
    interpreter and set of runtime folders, started at the first such launch."""

    def __init__(self, executable: str | None = None, stderr: Stderr | None = None) -> None:
        super().__init__(executable)
        self.stderr = stderr
        self.servers: dict[tuple[object, ...], ForkServer] = {}
        self._lock = threading.Lock()

    @classmethod
    def replacing(cls, driver: BwrapDriver) -> ForkingDriver:
        forking = cls(driver.executable)
        forking.shortcomings = list(driver.shortcomings)
        return forking

    def launch(self, spec: LaunchSpec, stderr: Stderr = subprocess.DEVNULL) -> IsolatedProcess:
        if not self.can_fork(spec):
            return super().launch(spec, stderr)
        cgroup = Cgroup.create(spec.limits)
        if cgroup is None:
            return super().launch(spec, stderr)
        root = spec.runtime_dir.with_name(spec.runtime_dir.name + "-root")
        try:
            server = self._server_for(spec)
            root.mkdir(mode=0o755)
            ident, pid = server.spawn(self._request(spec, cgroup, root))
        except BaseException:
            cgroup.remove()
            with contextlib.suppress(OSError):
                root.rmdir()
            raise
        return ForkedProcess(server, ident, pid, cgroup, root)

    def can_fork(self, spec: LaunchSpec) -> bool:
        relocated = [inside for inside, host in spec.ro_binds.items() if inside != host]
        return (
            scaffold_module.can_mount()
            and spec.host_uid is not None
            and len(spec.argv) > 1
            and spec.argv[1].endswith(".py")
            and all(top_folder(inside) in RELOCATABLE_TOPS for inside in relocated)
        )

    def _server_for(self, spec: LaunchSpec) -> ForkServer:
        key = (spec.argv[0], tuple(sorted(spec.ro_binds.items())), spec.preload)
        with self._lock:
            server = self.servers.get(key)
            if server is None or not server.alive():
                if server is not None:
                    server.stop()
                server = ForkServer(
                    python=spec.argv[0],
                    env=spec.env,
                    relocated={
                        str(inside): str(host) for inside, host in spec.ro_binds.items() if inside != host
                    },
                    preload=spec.preload,
                    seccomp=seccomp_filter.program(),
                    holding=spec.runtime_dir.with_name(f"zygote-{len(self.servers)}-{os.getpid()}"),
                    stderr=self.stderr,
                )
                server.start()
                self.servers[key] = server
        return server

    def _request(self, spec: LaunchSpec, cgroup: Cgroup, root: Path) -> dict[str, object]:
        """Everything the zygote's fork needs to confine itself as bubblewrap would confine it."""
        assert spec.host_uid is not None
        uid = spec.host_uid
        gid = uid if spec.host_gid is None else spec.host_gid
        symlinks = {path: os.readlink(path) for path in SYSTEM_DIRS if os.path.islink(path)}
        system = [path for path in SYSTEM_DIRS if os.path.isdir(path) and not os.path.islink(path)]
        system += [path for path in SYSTEM_FILES if os.path.exists(path)]
        return {
            "argv": list(spec.argv),
            "env": dict(spec.env),
            "uid": uid,
            "gid": gid,
            "cgroups": [str(path) for path in cgroup.paths],
            "limits": {"disk_bytes": spec.limits.disk_bytes, "open_files": spec.limits.open_files},
            "root": str(root),
            "tmp_size": TMP_SIZE,
            "home": SANDBOX_HOME,
            "runtime": SANDBOX_RUNTIME,
            "workdir": str(spec.workdir),
            "runtime_dir": str(spec.runtime_dir),
            "ro_binds": sorted((str(inside), str(host)) for inside, host in spec.ro_binds.items()),
            "symlinks": symlinks,
            "system_paths": system,
            "etc": identity_files(uid, gid),
            "views": procfiles.views(spec.limits.memory_bytes, spec.limits.cpu_cores),
            "device_nodes": list(DEVICE_NODES),
            "device_links": DEVICE_LINKS,
        }
