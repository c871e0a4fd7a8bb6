"""Listening sockets made inside another network namespace, both ways sandboxd makes them (a
thread of its own as root; the netns_listen.py process otherwise), and the namespace's process
found under the one a driver started: against a namespace made here with unshare(1)."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from sandboxes.server.egress import namespace

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="making a network namespace needs root")


@pytest.fixture
def holder() -> Iterator[int]:
    """The pid of a shell whose child holds a new network namespace (its loopback up)."""
    script = "unshare --net sh -c 'ip link set lo up; sleep 60' & wait"
    process = subprocess.Popen(["sh", "-c", script], start_new_session=True)
    try:
        deadline = time.monotonic() + 10
        while (found := namespace.kernel_namespace_pid(process.pid)) is None:
            assert time.monotonic() < deadline, "the namespace did not come up"
            time.sleep(0.05)
        time.sleep(0.2)  # its loopback is being brought up
        yield found
    finally:
        os.killpg(process.pid, signal.SIGKILL)  # its group: the shell, unshare's and sleep
        process.wait()


def listening_inside(pid: int) -> set[int]:
    lines = Path(f"/proc/{pid}/net/tcp").read_text().splitlines()[1:]
    return {int(fields[1].split(":")[1], 16) for fields in map(str.split, lines) if fields[3] == "0A"}


@pytest.mark.parametrize("way", ["_in_a_thread", "_in_a_process"])
def test_sockets_made_inside_listen_there_and_not_here(holder: int, way: str) -> None:
    assert holder != os.getpid()
    net_fd = os.open(f"/proc/{holder}/ns/net", os.O_RDONLY)
    try:
        sockets = getattr(namespace, way)(net_fd, [17005, 17006])
    finally:
        os.close(net_fd)
    try:
        assert [sock.getsockname() for sock in sockets] == [("127.0.0.1", 17005), ("127.0.0.1", 17006)]
        assert {17005, 17006} <= listening_inside(holder)
        assert not {17005, 17006} & listening_inside(os.getpid())
    finally:
        for sock in sockets:
            sock.close()
    assert not {17005, 17006} & listening_inside(holder)


def test_a_port_taken_inside_is_an_error_that_says_so(holder: int) -> None:
    net_fd = os.open(f"/proc/{holder}/ns/net", os.O_RDONLY)
    try:
        (first,) = namespace._in_a_thread(net_fd, [17007])
        with first, pytest.raises(OSError, match="in use"):
            namespace._in_a_process(net_fd, [17007])
    finally:
        os.close(net_fd)
