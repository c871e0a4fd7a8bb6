"""The fork server's own program: it imports a template's heavy modules once, then forks each kernel.

sandboxd runs it (as root, with the template's interpreter, in a mount namespace of its own where
the template is where kernels see it) and asks it for kernels over a socket, one JSON line each.
Each fork shares the imported modules' pages with this process copy-on-write, and confines
itself as bubblewrap confines a kernel before it runs one line the sandbox chose:

- the child joins the kernel's cgroup and takes its rlimits, then makes a pid namespace;
- its child (pid 1 there) enters sandboxd's mount namespace, makes its own mount, network, ipc
  uts and cgroup namespaces, builds the sandbox's root on a tmpfs (the host's system folders and the
  template read-only, the workdir at /home/user, the runtime folder at /run/kernel, its own
  /proc, /dev and /tmp) and pivots into it;
- it becomes the sandbox's host user for good (no capabilities), forbids new privileges, takes the
  seccomp filter (which refuses new namespaces too) and forks the kernel, then only reaps.

This file runs under the template's interpreter, which has none of our packages: it imports only
the standard library and says everything it needs in each request. Nothing here may import after
the pivot but through the sandbox's own view.
"""

from __future__ import annotations

import ctypes
import fcntl
import gc
import glob
import importlib
import json
import multiprocessing
import os
import random
import resource
import runpy
import select
import shutil
import signal
import socket
import struct
import sys
import traceback

LIBC = ctypes.CDLL(None, use_errno=True)
CLONE_NEWNS, CLONE_NEWCGROUP, CLONE_NEWUTS, CLONE_NEWIPC = 0x00020000, 0x02000000, 0x04000000, 0x08000000
CLONE_NEWPID, CLONE_NEWNET = 0x20000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 0x1, 0x2, 0x4, 0x8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 0x20, 0x1000, 0x4000, 1 << 18
MNT_DETACH = 0x2
PR_SET_PDEATHSIG, PR_CAPBSET_DROP, PR_SET_SECCOMP, PR_SET_NO_NEW_PRIVS = 1, 24, 22, 38
SECCOMP_MODE_FILTER = 2
SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41}
SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1
PTYS = "newinstance,ptmxmode=0666,mode=0620,max=64"
SLACK = 1 << 20


class SockFilterProgram(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def _check(result: int, what: str) -> None:
    if result != 0:
        code = ctypes.get_errno()
        raise OSError(code, f"{what}: {os.strerror(code)}")


def _mount(source: str | None, target: str, kind: str | None, flags: int, data: str | None = None) -> None:
    encode = lambda text: None if text is None else text.encode()  # noqa: E731
    _check(LIBC.mount(encode(source), target.encode(), encode(kind), flags, encode(data)), f"mount {target}")


def _bind(source: str, target: str, *, readonly: bool, device: bool = False) -> None:
    """Bind ``source`` at ``target`` (made as a folder or an empty file), nosuid and (but for a
    ``device``) nodev, keeping the source's noexec and read-only, as bubblewrap does."""
    if os.path.isdir(source):
        os.makedirs(target, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        if not os.path.exists(target):
            os.close(os.open(target, os.O_CREAT | os.O_WRONLY, 0o444))
    _mount(source, target, None, MS_BIND | MS_REC)
    kept = os.statvfs(target).f_flag & (MS_RDONLY | MS_NOEXEC)  # statvfs's ST_* are these bits
    flags = (
        MS_REMOUNT | MS_BIND | MS_NOSUID | kept | (0 if device else MS_NODEV) | (MS_RDONLY if readonly else 0)
    )
    _mount(None, target, None, flags)


def preload(code: str) -> None:
    """Import what every kernel imports (ipykernel and the template's warm-up), binding nothing a
    kernel sees; matplotlib first finds the template's prebuilt font list, as in a kernel."""
    config_dir = os.environ.get("MPLCONFIGDIR")
    if config_dir:
        os.makedirs(config_dir, exist_ok=True)
        for cached in glob.glob(
            os.path.join(os.environ.get("SANDBOX_TEMPLATE", ""), "mplconfig", "fontlist-*.json")
        ):
            shutil.copy(cached, config_dir)
    for name in (
        "ipykernel.kernelapp",
        "ipykernel.ipkernel",
        "ipykernel.zmqshell",
        "ipykernel.debugger",  # debugpy's pydevd, which each kernel's start imported: 0.25 s of CPU
        "IPython.core.interactiveshell",
        "jupyter_client.session",
    ):  # not matplotlib_inline's backend: imported without a shell, it never hooks into one
        importlib.import_module(name)
    exec(compile(code, "<preload>", "exec"), {"__name__": "__preload__"})  # noqa: S102 (the template's own)
    # What is imported now lives as long as every fork: out of the collector's sight, so that no
    # collection in a kernel writes to (and so copies) the pages it shares with us.
    gc.collect()
    gc.freeze()


def serve(channel: socket.socket, mount_namespace: int, seccomp: bytes) -> None:
    """Answer requests until sandboxd closes the socket; report each child's end.

    sandboxd sends one request at a time and waits for its answer (ForkServer.spawn), so the
    buffered reader never holds a second line that select() could not see."""
    reader = channel.makefile("rb")
    children: dict[int, int] = {}  # pid → the id of the request it answers, until it is reaped
    _send(channel, {"ready": True})
    while True:
        readable, _, _ = select.select([channel], [], [], 0.05)
        _reap(channel, children)
        if not readable:
            continue
        line = reader.readline()
        if not line:
            return
        request = json.loads(line)
        try:
            pid = os.fork()
        except OSError as exc:
            _send(channel, {"id": request["id"], "error": str(exc)})
            continue
        if pid == 0:
            code = 127
            try:
                reader.close()
                channel.close()
                code = _outer(request, mount_namespace, seccomp)
            except BaseException:  # noqa: BLE001 (the child must end here, never return to the loop)
                traceback.print_exc()
            finally:
                os._exit(code)
        children[pid] = request["id"]
        _send(channel, {"id": request["id"], "pid": pid})


def _send(channel: socket.socket, message: dict[str, object]) -> None:
    channel.sendall(json.dumps(message).encode() + b"\n")


def _reap(channel: socket.socket, children: dict[int, int]) -> None:
    """Report each child that ended by its request's id: once reaped, its pid may be another's."""
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        ident = children.pop(pid, None)
        if ident is not None:  # else no kernel's: nothing for sandboxd to hear
            _send(channel, {"exited": ident, "code": _exit_code(status)})


def _exit_code(status: int) -> int:
    code = os.waitstatus_to_exitcode(status)
    return 128 - code if code < 0 else code


def _outer(request: dict, mount_namespace: int, seccomp: bytes) -> int:
    """The first fork (root, outside): the cgroup, the rlimits, a pid namespace; waits for pid 1."""
    LIBC.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    for group in request["cgroups"]:
        with open(os.path.join(group, "cgroup.procs"), "w") as procs:
            procs.write(str(os.getpid()))
    limits = request["limits"]
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_FSIZE, (limits["disk_bytes"],) * 2)
    resource.setrlimit(resource.RLIMIT_NOFILE, (limits["open_files"],) * 2)
    _check(LIBC.unshare(CLONE_NEWPID), "unshare(CLONE_NEWPID)")
    init = os.fork()
    if init == 0:
        code = 127
        try:
            code = _init(request, mount_namespace, seccomp)
        except BaseException:  # noqa: BLE001
            traceback.print_exc()
        finally:
            os._exit(code)
    _, status = os.waitpid(init, 0)
    return _exit_code(status)


def _init(request: dict, mount_namespace: int, seccomp: bytes) -> int:
    """pid 1 of the sandbox: confine, fork the kernel, reap until it ends; its exit code."""
    _check(LIBC.setns(mount_namespace, CLONE_NEWNS), "setns(sandboxd's mount namespace)")
    os.close(mount_namespace)
    namespaces = CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS
    _check(LIBC.unshare(namespaces), "unshare")
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    hostname = b"sandbox"
    _check(LIBC.sethostname(hostname, len(hostname)), "sethostname")
    _loopback_up()
    null = os.open("/dev/null", os.O_RDWR)
    _build_root(request)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.closerange(3, 1 << 16)
    _become(request["uid"], request["gid"])
    _confine(seccomp)
    kernel = os.fork()
    if kernel == 0:
        code = 1
        try:
            code = _run_kernel(request)
        finally:
            os._exit(code)
    while True:
        pid, status = os.waitpid(-1, 0)
        if pid == kernel:
            return _exit_code(status)


def _loopback_up() -> None:
    """A new network namespace's lo is down; a kernel may serve on localhost, as under bubblewrap."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        request = struct.pack("16sH14x", b"lo", 0)
        flags = struct.unpack("16sH14x", fcntl.ioctl(probe, SIOCGIFFLAGS, request))[1]
        fcntl.ioctl(probe, SIOCSIFFLAGS, struct.pack("16sH14x", b"lo", flags | IFF_UP))


def _build_root(request: dict) -> None:
    """The sandbox's root on a tmpfs at request["root"] (root's, so mountinfo names no owner),
    laid out as bubblewrap's scaffold is (drivers/scaffold.py, drivers/bwrap.py); pivots into it."""
    top, uid, gid = request["root"], request["uid"], request["gid"]
    _mount("tmpfs", top, "tmpfs", MS_NOSUID | MS_NODEV, f"size={request['tmp_size'] + SLACK},mode=0755")
    base, scratch, devices = (os.path.join(top, name) for name in ("base", "scratch", "devices"))
    for folder, mode in ((base, 0o755), (scratch, 0o1777), (devices, 0o755)):
        os.mkdir(folder)
        os.chmod(folder, mode)
    os.chown(scratch, uid, gid)
    _mount(base, base, None, MS_BIND)  # a mount point of its own, for pivot_root
    os.mkdir(os.path.join(devices, "pts"))
    _mount("devpts", os.path.join(devices, "pts"), "devpts", MS_NOSUID | MS_NOEXEC, PTYS)
    for name in request["device_nodes"]:
        _bind(f"/dev/{name}", os.path.join(devices, name), readonly=False, device=True)
    for name, target in request["device_links"].items():
        os.symlink(target, os.path.join(devices, name))
    os.mkdir(os.path.join(devices, "shm"))
    os.chmod(os.path.join(devices, "shm"), 0o1777)  # noqa: S103 (as bubblewrap's --perms 1777)
    os.chown(os.path.join(devices, "shm"), uid, gid)
    inside = lambda path: os.path.join(base, path.lstrip("/"))  # noqa: E731
    for path, target in request["symlinks"].items():
        os.symlink(target, inside(path))
    for path in request["system_paths"]:
        _bind(path, inside(path), readonly=True)
    for name, content in request["etc"].items():
        os.makedirs(inside("/etc"), exist_ok=True)
        with open(inside(f"/etc/{name}"), "w") as placed:
            placed.write(content)
    os.mkdir(inside("/proc"))
    _mount("proc", inside("/proc"), "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    views = os.path.join(top, "views")  # the sandbox's own /proc and /sys files (drivers/procfiles.py)
    os.mkdir(views)
    for index, (path, content) in enumerate(request["views"].items()):
        view = os.path.join(views, str(index))
        with open(view, "w") as placed:
            placed.write(content)
        _bind(view, inside(path), readonly=True)
    _bind(devices, inside("/dev"), readonly=False)
    _bind(scratch, inside("/tmp"), readonly=False)
    for path, host in request["ro_binds"]:
        _bind(host, inside(path), readonly=True)
    _bind(request["workdir"], inside(request["home"]), readonly=False)
    _bind(request["runtime_dir"], inside(request["runtime"]), readonly=False)
    _mount(None, base, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)
    os.chdir(base)
    call = SYS_PIVOT_ROOT[os.uname().machine]
    _check(LIBC.syscall(call, b".", b"."), "pivot_root")
    _check(LIBC.umount2(b".", MNT_DETACH), "detaching the old root")
    os.chdir("/")


def _become(uid: int, gid: int) -> None:
    """The sandbox's unprivileged host user, for good: from root to a uid that is not, the
    kernel clears every capability; the bounding set goes first, while we may still drop it."""
    for capability in range(64):
        if LIBC.prctl(PR_CAPBSET_DROP, capability, 0, 0, 0) != 0:
            break  # past the last capability this kernel knows
    os.setgroups([])
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)
    LIBC.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # a change of user cleared it
    with open("/proc/self/status") as status:
        effective = next(line for line in status if line.startswith("CapEff:"))
    if int(effective.split()[1], 16) != 0:
        raise PermissionError(f"capabilities survived the change of user: {effective.strip()}")


def _confine(seccomp: bytes) -> None:
    _check(LIBC.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "PR_SET_NO_NEW_PRIVS")
    buffer = ctypes.create_string_buffer(seccomp, len(seccomp))
    program = SockFilterProgram(len(seccomp) // 8, ctypes.cast(buffer, ctypes.c_void_p))
    _check(LIBC.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(program), 0, 0), "seccomp")


def _run_kernel(request: dict) -> int:
    """Run ``python SCRIPT ARGS`` in this process, as a kernel started afresh would."""
    os.setsid()
    os.chdir(request["home"])
    os.environ.clear()
    os.environ.update(request["env"], PWD=request["home"])  # as bubblewrap's --chdir sets it
    python, script, *arguments = request["argv"]
    sys.orig_argv = list(request["argv"])
    sys.argv = [script, *arguments]
    sys.path[0] = os.path.dirname(script)
    _fresh_random_state()
    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    return 0


def _fresh_random_state() -> None:
    """Every fork would otherwise draw the zygote's random numbers, and hold its multiprocessing
    authkey (which authenticates connections between a kernel's own processes: one kernel that
    learns another's could speak to its managers and pools). The str hash secret cannot change
    after the interpreter starts: every fork keeps the zygote's (docs/security.md says why that
    is tolerable)."""
    random.seed()
    multiprocessing.current_process().authkey = os.urandom(32)
    numpy_random = sys.modules.get("numpy.random")
    if numpy_random is not None:
        numpy_random.seed()


def main() -> None:
    channel_fd, namespace_fd = int(sys.argv[1]), int(sys.argv[2])
    with open(int(sys.argv[3]), "rb") as filter_file:
        seccomp = filter_file.read()
    preload(sys.argv[4])
    channel = socket.socket(fileno=channel_fd)
    try:
        serve(channel, namespace_fd, seccomp)
    except (BrokenPipeError, ConnectionResetError):
        pass


if __name__ == "__main__":
    main()
