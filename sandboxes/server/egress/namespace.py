"""Listening sockets inside a kernel's network namespace.

As root, sandboxd enters the namespace in a short-lived thread of its own (a thread may join
another network namespace; its sockets stay there when it ends): no process to start. Not root,
it must first join the user namespace that owns it, which only a single-threaded process may:
netns_listen.py does it in a process of its own and hands the sockets back.
"""

from __future__ import annotations

import errno
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

from sandboxes.server.egress import netns_listen

HELPER = Path(netns_listen.__file__)
HELPER_TIMEOUT = 10.0


def kernel_namespace_pid(root_pid: int) -> int | None:
    """The first process under ``root_pid`` (itself included), breadth first, whose network
    namespace is not ours: the kernel's (bubblewrap's own process stays outside it). None when
    there is none (the kernel ended)."""
    ours = os.stat("/proc/self/ns/net").st_ino
    queue = [root_pid]
    while queue:
        pid = queue.pop(0)
        try:
            if os.stat(f"/proc/{pid}/ns/net").st_ino != ours:
                return pid
            queue.extend(_children(pid))
        except OSError:
            continue
    return None


def _children(pid: int) -> list[int]:
    found = []
    for task in os.listdir(f"/proc/{pid}/task"):
        found += [int(child) for child in Path(f"/proc/{pid}/task/{task}/children").read_text().split()]
    return found


def listen_inside(pid: int, ports: list[int]) -> list[socket.socket]:
    """Listening TCP sockets on 127.0.0.1:<port> in ``pid``'s network namespace, in the order of
    ``ports``. Raises PermissionError when sandboxd may not enter it, OSError otherwise."""
    net_fd = os.open(f"/proc/{pid}/ns/net", os.O_RDONLY | os.O_CLOEXEC)
    try:
        if os.fstat(net_fd).st_ino == os.stat("/proc/self/ns/net").st_ino:
            raise OSError(f"process {pid} shares sandboxd's own network")
        if os.geteuid() == 0:
            return _in_a_thread(net_fd, ports)
        return _in_a_process(net_fd, ports)
    finally:
        os.close(net_fd)


def _in_a_thread(net_fd: int, ports: list[int]) -> list[socket.socket]:
    made: list[socket.socket] = []
    failed: list[OSError] = []

    def enter_and_listen() -> None:
        try:
            netns_listen.enter_network(net_fd)
            made.extend(netns_listen.listen(port) for port in ports)
        except OSError as exc:
            failed.append(exc)

    thread = threading.Thread(target=enter_and_listen, name="egress-netns")
    thread.start()
    thread.join()
    if failed:
        for sock in made:
            sock.close()
        exc = failed[0]
        if exc.errno in (errno.EPERM, errno.EACCES):
            raise PermissionError(str(exc))
        raise OSError(f"cannot listen inside the sandbox: {exc.strerror or exc}")
    return made


def _in_a_process(net_fd: int, ports: list[int]) -> list[socket.socket]:
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        argv = [sys.executable, "-I", "-S", str(HELPER), str(net_fd), str(theirs.fileno())]
        done = subprocess.run(
            argv + [str(port) for port in ports],
            pass_fds=(net_fd, theirs.fileno()),
            capture_output=True,
            timeout=HELPER_TIMEOUT,
            check=False,
        )
        theirs.close()
        problem = done.stderr.decode(errors="replace").strip()
        if done.returncode == netns_listen.NOT_ALLOWED:
            raise PermissionError(problem)
        if done.returncode != 0:
            raise OSError(problem or f"netns_listen exited with {done.returncode}")
        _, fds, _, _ = socket.recv_fds(ours, 16, len(ports))
    finally:
        ours.close()
        theirs.close()
    if len(fds) != len(ports):
        for fd in fds:
            os.close(fd)
        raise OSError("netns_listen sent fewer sockets than asked for")
    return [socket.socket(fileno=fd) for fd in fds]
