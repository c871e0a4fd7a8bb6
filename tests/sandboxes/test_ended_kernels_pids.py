"""Once a kernel's first process has been reaped, its pid (and process group id) is free for any
process on the host (pid_max is often 32768). So a forked kernel's end is reported by the id of
the request that made it, never by pid, and sandboxd (root) never signals the pid or group of a
kernel process that has been reaped: a late clean-up must not kill whatever holds it now."""

from __future__ import annotations

import json
import socket
import subprocess
import threading
from pathlib import Path
from types import SimpleNamespace

from sandboxes.drivers.bwrap import BwrapProcess
from sandboxes.forkserver.driver import ForkedProcess
from sandboxes.forkserver.server import LOST_WITH_ZYGOTE, ForkServer


def still_running(process: subprocess.Popen[bytes]) -> bool:
    """Whether ``process`` is alive half a second on (a signal's effect is not immediate)."""
    try:
        process.wait(timeout=0.5)
    except subprocess.TimeoutExpired:
        return True
    return False


def send(channel: socket.socket, message: dict[str, object]) -> None:
    channel.sendall(json.dumps(message).encode() + b"\n")


def test_a_reused_pid_is_not_taken_for_the_kernel_that_ended(tmp_path):
    server = ForkServer(
        python="python3", env={}, relocated={}, preload="", seccomp=b"", holding=tmp_path / "held"
    )
    ours, zygote = socket.socketpair()
    reader = threading.Thread(target=server._read, args=(ours,))
    reader.start()
    try:
        send(zygote, {"ready": True})
        send(zygote, {"id": 1, "pid": 4242})
        send(zygote, {"exited": 1, "code": 0})
        send(zygote, {"id": 2, "pid": 4242})  # the host gave the freed pid to the next kernel
        with server._changed:
            assert server._changed.wait_for(lambda: 2 in server._replies, timeout=5)
        assert server.exit_code(1) == 0
        assert server.exit_code(2) is None
    finally:
        zygote.close()
        reader.join(timeout=5)
        ours.close()
    assert server.exit_code(2) == LOST_WITH_ZYGOTE  # the zygote is gone, and its kernels with it
    assert server.exit_code(1) == 0


class EndedKernelsServer:
    """What the zygote has said of the kernel: it ended, killed."""

    def exit_code(self, ident: int) -> int:
        return 137

    def forget(self, ident: int) -> None:
        pass


class EmptyCgroup:
    def kill_all(self) -> None:
        pass

    def remove(self) -> None:
        pass


def test_cleaning_up_an_ended_kernel_signals_no_pid(tmp_path: Path):
    """The process that holds the pid now (here one of ours) is left alone."""
    bystander = subprocess.Popen(["sleep", "60"])
    try:
        root = tmp_path / "root"
        root.mkdir()
        ended = ForkedProcess(EndedKernelsServer(), 1, bystander.pid, EmptyCgroup(), root)  # type: ignore[arg-type]
        ended.cleanup()
        assert still_running(bystander), "the process now holding the kernel's old pid was killed"
        assert not root.exists()
    finally:
        bystander.kill()
        bystander.wait()


def test_killing_a_reaped_bubblewrap_process_signals_no_group():
    """bubblewrap starts in a session of its own, so its pid is its process group's id."""
    bystander = subprocess.Popen(["sleep", "60"], start_new_session=True)  # a group with that id now
    try:
        reaped = SimpleNamespace(pid=bystander.pid, returncode=0)  # a Popen that was waited for
        BwrapProcess(reaped, None, None).kill()  # type: ignore[arg-type]
        assert still_running(bystander), "the process group now holding the old pid was killed"
    finally:
        bystander.kill()
        bystander.wait()
