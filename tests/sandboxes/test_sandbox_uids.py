"""One host uid per sandbox: the kernel's per-user budgets (inotify, epoll, pipe buffers, process
counts) belong to one sandbox, so exhausting them in one leaves the next one whole."""

from __future__ import annotations

import pytest

from sandboxes.errors import CapacityExceeded
from sandboxes.server.uids import UidRange
from tests.conftest import workdir_of
from tests.sandboxes.bwrap_service import host_uid_of, needs_root
from tests.sandboxes.test_escape import host_pids_in, pid_namespace_of, probe

UID_BASE = 61000  # the default of SANDBOXD_UID_BASE
INOTIFY_INSTANCES = """
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
made = []
while len(made) < 100_000:
    fd = libc.inotify_init()
    if fd < 0:
        break
    made.append(fd)
error = os.strerror(ctypes.get_errno()) if fd < 0 else ''
for fd in made:
    os.close(fd)
observed = {'made': len(made), 'error': error}
"""


def test_a_uid_is_held_by_one_sandbox_and_handed_out_again_last():
    uids = UidRange(61000, 3)
    assert [uids.take(name) for name in "abc"] == [(61000, 61000), (61001, 61001), (61002, 61002)]
    assert uids.take("a") == (61000, 61000)  # asked again: the same one, not a second
    with pytest.raises(CapacityExceeded):
        uids.take("d")
    uids.give_back("a")
    uids.give_back("a")  # twice: still one free uid, never handed to two sandboxes
    assert uids.take("d") == (61000, 61000)
    with pytest.raises(CapacityExceeded):
        uids.take("e")
    uids.give_back("b")
    uids.give_back("c")
    assert uids.take("e") == (61001, 61001)  # the uid freed first goes first


@needs_root
def test_two_sandboxes_run_as_two_host_uids_that_own_their_workdirs(bwrap_sandboxd, make_bwrap_sandbox):
    first, second = make_bwrap_sandbox(), make_bwrap_sandbox()  # a pooled one and a cold one
    seen = {}
    for sandbox in (first, second):
        inside = probe(sandbox, "import os\nobserved = [os.getuid(), os.getgid()]")
        assert inside == [1000, 1000]  # inside, every sandbox is user 1000: the host uid is not shown
        owner = workdir_of(bwrap_sandboxd, sandbox).stat()
        kernel_uids = {host_uid_of(pid) for pid in host_pids_in(pid_namespace_of(sandbox))}
        assert kernel_uids == {owner.st_uid}, (kernel_uids, owner.st_uid)
        assert owner.st_gid == owner.st_uid
        assert UID_BASE <= owner.st_uid < UID_BASE + 4096
        seen[sandbox.sandbox_id] = owner.st_uid
    assert len(set(seen.values())) == 2, seen


@needs_root
def test_a_sandbox_that_exhausts_a_per_user_budget_leaves_the_next_one_whole(make_bwrap_sandbox):
    """inotify instances are counted per host user (fs.inotify.max_user_instances): a sandbox
    holding every one of them must not take them from a sandbox started after it."""
    greedy = make_bwrap_sandbox()
    hold = INOTIFY_INSTANCES.replace("for fd in made:\n    os.close(fd)\n", "held = made\n")
    exhausted = probe(greedy, hold)
    assert exhausted["error"] == "Too many open files" and exhausted["made"] > 0, exhausted

    fresh = make_bwrap_sandbox()
    assert fresh.run_code("6 * 7").text == "42"
    whole = probe(fresh, INOTIFY_INSTANCES)
    assert whole["made"] == exhausted["made"], (whole, exhausted)
    assert probe(greedy, "observed = len(held)") == exhausted["made"]  # still held meanwhile
