"""The host side of one fork server: start its zygote, ask it for kernels, learn how they end."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shlex
import signal
import socket
import subprocess
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sandboxes.drivers.base import Stderr

log = logging.getLogger(__name__)

ZYGOTE = Path(__file__).with_name("zygote.py")
START_SECONDS = 120.0
# What a forked kernel's end is reported as when the zygote died first (its children die with it).
LOST_WITH_ZYGOTE = 128 + signal.SIGKILL


class ForkServerFailed(RuntimeError):
    pass


def top_folder(path: str | Path) -> str:
    """The first folder of an absolute path ("/opt" for "/opt/template"): where the zygote lays
    a tmpfs over the host's folder to bind a relocated path below it."""
    return "/" + Path(path).parts[1]


class ForkServer:
    """One zygote: ``python`` (a path as kernels see it) with ``env``, in a mount namespace where
    each of ``relocated`` (path inside → host path) is where kernels see it."""

    def __init__(
        self,
        *,
        python: str,
        env: Mapping[str, str],
        relocated: Mapping[str, str],
        preload: str,
        seccomp: bytes,
        holding: Path,
        stderr: Stderr | None = None,  # None: sandboxd's own, where the zygote's errors belong
    ) -> None:
        self.python = python
        self.env = dict(env)
        self.relocated = dict(relocated)
        self.preload = preload
        self.seccomp = seccomp
        self.holding = holding
        self.stderr = stderr
        self.process: subprocess.Popen[bytes] | None = None
        self._channel: socket.socket | None = None
        self._lock = threading.Lock()  # one request on the socket at a time
        self._changed = threading.Condition()
        self._ready = False
        # Kernels are known by the id of the request that made them, never by pid: the host
        # reuses a pid once the zygote has reaped it (pid_max is often 32768).
        self._replies: dict[int, dict[str, Any]] = {}
        self._exits: dict[int, int] = {}
        self._children: set[int] = set()
        self._next_id = 0

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None and self._channel is not None

    def start(self) -> None:
        """Start the zygote and wait until it has imported everything (a few seconds)."""
        ours, theirs = socket.socketpair()
        namespace = os.open("/proc/self/ns/mnt", os.O_RDONLY)
        seccomp = os.memfd_create("seccomp", 0)
        os.write(seccomp, self.seccomp)
        os.lseek(seccomp, 0, os.SEEK_SET)
        self.holding.mkdir(mode=0o700, exist_ok=True)
        argv = [
            "unshare", "--mount", "--propagation", "private", "--",
            "/bin/sh", "-c", self._namespace_script(), "zygote",
            self.python, "-s", "-c", ZYGOTE.read_text(),  # -s: root imports no user site
            str(theirs.fileno()), str(namespace), str(seccomp), self.preload,
        ]  # fmt: skip
        try:
            self.process = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=self.stderr,
                pass_fds=(theirs.fileno(), namespace, seccomp),
                env=self.env,
                cwd="/",
                start_new_session=True,
            )
        finally:
            theirs.close()
            os.close(namespace)
            os.close(seccomp)
        self._channel = ours
        threading.Thread(target=self._read, args=(ours,), name="fork-server", daemon=True).start()
        with self._changed:
            if not self._changed.wait_for(lambda: self._ready or self._channel is None, START_SECONDS):
                self.stop()
                raise ForkServerFailed(f"the fork server did not start within {START_SECONDS:.0f}s")
        if not self._ready:
            raise ForkServerFailed(f"the fork server ended as it started (exit code {self._exit_status()})")
        log.info("fork server for %s ready (pid %d)", self.python, self.process.pid)

    def _namespace_script(self) -> str:
        """Shell that lays out the zygote's own mount namespace: each relocated path bound where
        kernels see it (through a holding folder, so a source under a hidden folder stays
        reachable), and a /tmp of its own; then runs the rest of its arguments."""
        quote = shlex.quote
        lines = ["set -eu", f"mount -t tmpfs -o size=1m,mode=0700 zygote {quote(str(self.holding))}"]
        tops = []
        for index, (inside, host) in enumerate(self.relocated.items()):
            held = quote(str(self.holding / str(index)))
            lines.append(f"mkdir {held} && mount --rbind {quote(host)} {held}")
            top = top_folder(inside)
            if top not in tops:
                tops.append(top)
        for top in tops:
            lines.append(f"mount -t tmpfs -o size=1m,mode=0755 zygote {quote(top)}")
        for index, inside in enumerate(self.relocated):
            held = quote(str(self.holding / str(index)))
            lines.append(f"mkdir -p {quote(inside)} && mount --rbind {held} {quote(inside)}")
            lines.append(f"mount -o remount,bind,ro {quote(inside)}")
        lines += ["mount -t tmpfs -o size=256m,mode=1777 zygote /tmp", 'exec "$@"']
        return "\n".join(lines)

    def spawn(self, request: dict[str, Any], timeout: float = 30.0) -> tuple[int, int]:
        """Ask for one kernel; (its id here, the host pid of its first process, which ends with
        the kernel)."""
        with self._lock:
            if not self.alive():
                raise ForkServerFailed("the fork server is not running")
            self._next_id += 1
            ident = self._next_id
            assert self._channel is not None
            self._channel.sendall(json.dumps({**request, "id": ident}).encode() + b"\n")
            with self._changed:
                if not self._changed.wait_for(lambda: ident in self._replies or not self.alive(), timeout):
                    raise ForkServerFailed(f"the fork server did not answer within {timeout:.0f}s")
                reply = self._replies.pop(ident, None)
        if reply is None:
            raise ForkServerFailed("the fork server ended while starting a kernel")
        if "error" in reply:
            raise ForkServerFailed(f"the fork server could not fork: {reply['error']}")
        return ident, int(reply["pid"])

    def exit_code(self, ident: int) -> int | None:
        """How the kernel ``ident`` (spawn's) ended, or None while it runs."""
        with self._changed:
            return self._exits.get(ident)

    def forget(self, ident: int) -> None:
        """Drop what is known of a kernel that has been cleaned up."""
        with self._changed:
            self._children.discard(ident)
            self._exits.pop(ident, None)

    def _read(self, channel: socket.socket) -> None:
        with contextlib.suppress(OSError, ValueError), channel.makefile("rb") as lines:
            for line in lines:
                message = json.loads(line)
                with self._changed:
                    if message.get("ready"):
                        self._ready = True
                    elif "exited" in message:
                        self._exits[message["exited"]] = message["code"]
                    else:  # the answer to a request: a pid, or why there is none
                        self._children.update([message["id"]] if "pid" in message else [])
                        self._replies[message["id"]] = message
                    self._changed.notify_all()
        with self._changed:  # the zygote is gone, and its children with it (PR_SET_PDEATHSIG)
            for ident in self._children:
                self._exits.setdefault(ident, LOST_WITH_ZYGOTE)
            self._channel = None
            self._changed.notify_all()
        log.warning("fork server for %s ended (exit code %s)", self.python, self._exit_status())

    def _exit_status(self) -> int | None:
        if self.process is None:
            return None
        with contextlib.suppress(subprocess.TimeoutExpired):
            return self.process.wait(timeout=5)
        return None

    def stop(self) -> None:
        if self.process is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
        if self._channel is not None:
            with contextlib.suppress(OSError):
                self._channel.shutdown(socket.SHUT_RDWR)
