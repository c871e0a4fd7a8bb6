"""Run by sandboxd (namespace.py), alone in its process: enter a kernel's network namespace, bind
and listen on 127.0.0.1 ports there, and hand the listening sockets back.

    python netns_listen.py NET_FD REPLY_FD PORT...

NET_FD is the kernel's /proc/<pid>/ns/net, opened by sandboxd; REPLY_FD a unix socket on which
the sockets are sent (socket.send_fds), in the order of the ports. A sandboxd that is not root
enters the user namespace owning that network namespace first, which only a single-threaded
process may do: hence a process of its own. Standard library only, so it starts in milliseconds.
A failure is one line on stderr and exit code 1 (77: not allowed to enter).
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import os
import socket
import sys

CLONE_NEWNET = 0x40000000
CLONE_NEWUSER = 0x10000000
NS_GET_USERNS = 0xB701  # _IO(0xb7, 0x1): the user namespace that owns a namespace
NOT_ALLOWED = 77
LIBC = ctypes.CDLL(None, use_errno=True)


def enter(net_fd: int) -> None:
    """Join the network namespace (first its owning user namespace when we are not root)."""
    if os.geteuid() != 0:
        user_fd = fcntl.ioctl(net_fd, NS_GET_USERNS)
        if LIBC.setns(user_fd, CLONE_NEWUSER) != 0:
            raise OSError(ctypes.get_errno(), "setns(user namespace)")
    enter_network(net_fd)


def enter_network(net_fd: int) -> None:
    """Join the network namespace: this thread only, where the process has other threads."""
    if LIBC.setns(net_fd, CLONE_NEWNET) != 0:
        raise OSError(ctypes.get_errno(), "setns(network namespace)")


def listen(port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(128)
    return sock


def main(argv: list[str]) -> int:
    """The helper's process, for a sandboxd that is not root (as root, namespace.py enters the
    network namespace in a thread of its own instead, without starting a process)."""
    net_fd, reply_fd, *ports = (int(arg) for arg in argv[1:])
    try:
        enter(net_fd)
    except OSError as exc:
        print(f"cannot enter the kernel's network namespace: {os.strerror(exc.errno or 0)}", file=sys.stderr)
        return NOT_ALLOWED if exc.errno in (errno.EPERM, errno.EACCES) else 1
    try:
        sockets = [listen(port) for port in ports]
    except OSError as exc:
        print(f"cannot listen inside the sandbox: {exc.strerror}", file=sys.stderr)
        return 1
    with socket.socket(fileno=reply_fd) as reply:
        socket.send_fds(reply, [b"ok"], [sock.fileno() for sock in sockets])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
