"""The escape suite (test_escape.py) again, every attack, with sandboxd under gVisor (marked slow:
three minutes; `make test` runs gVisor's contract and seccomp tests, `make test-slow` this).

Each test of test_escape.py runs here against the gVisor sandboxd, with the host processes of a
kernel found from runsc's bundles rather than a pid namespace. Three are gVisor's own, below,
for two differences: a kernel that forks itself runs out of memory before it runs out of
processes (the Sentry copies a forked process's memory in 2 MiB pieces as either side writes,
so each child of a 250 MB kernel costs tens of MB), and the process limit is the guest's
RLIMIT_NPROC, which the Sentry enforces, not a host pids cgroup (the Sentry's own threads and
stubs would count against it).
"""

from __future__ import annotations

import pytest

from sandboxes.drivers.limits import CGROUP_ROOT, GROUP_PREFIX
from tests.sandboxes import gvisor_service
from tests.sandboxes.test_escape import *  # noqa: F403  (every attack, collected again here)
from tests.sandboxes.test_escape import FORK_BOMB, MEMORY_LIMIT, PROCESS_LIMIT, probe, run

pytestmark = [pytest.mark.escape, pytest.mark.slow, gvisor_service.needs_runsc]


@pytest.fixture
def sandboxd(gvisor_sandboxd):
    """The escape suite's sandboxd (and so its make_sandbox and service_still_serves) is gVisor's."""
    return gvisor_sandboxd


@pytest.fixture
def kernel_processes():
    return gvisor_service.kernel_processes


def test_the_suite_runs_on_gvisor(sandboxd):
    assert "isolation driver: gvisor" in sandboxd.read_log()


def test_fork_bomb_hits_the_process_limit(sandbox, service_still_serves):
    """A small process forking without end gets EAGAIN at the limit, as under bubblewrap."""
    bomb = FORK_BOMB + "\nimport json\nprint(json.dumps(observed))"
    observed = probe(
        sandbox,
        f"""
        import json, subprocess, sys
        done = subprocess.run([sys.executable, '-c', {bomb!r}], capture_output=True, text=True, timeout=100)
        observed = json.loads(done.stdout)
    """,
    )
    assert isinstance(observed, dict)
    assert 0 < observed["forks"] < PROCESS_LIMIT and observed["errno"] == "EAGAIN", observed
    assert sandbox.run_code("6 * 7").text == "42"
    service_still_serves()


def test_a_kernel_forking_itself_is_stopped_by_its_memory_limit(sandbox, service_still_serves):
    execution = run(
        sandbox,
        """
        import os, time
        for _ in range(1000):
            if os.fork() == 0:
                time.sleep(120)
                os._exit(0)
        """,
        timeout=120,
    )
    assert execution.error is not None and execution.error.name == "KernelDied", execution.error
    assert "memory limit" in execution.error.value
    assert sandbox.run_code("6 * 7").text == "42"  # a fresh kernel, in the same sandbox
    service_still_serves()


def test_cgroup_limits_are_out_of_reach_and_applied(sandbox, service_still_serves):
    observed = probe(
        sandbox,
        """
        import os, resource
        cgroupfs = sorted(os.listdir('/sys/fs/cgroup')) if os.path.isdir('/sys/fs/cgroup') else []
        observed = {'cgroupfs': cgroupfs, 'nproc': list(resource.getrlimit(resource.RLIMIT_NPROC))}
    """,
    )
    assert isinstance(observed, dict)
    assert observed["cgroupfs"] == [], "cgroupfs is mounted inside"
    assert observed["nproc"] == [PROCESS_LIMIT, PROCESS_LIMIT]  # the guest cannot raise it: no capability

    # From the host: the whole sandbox (the Sentry and its stubs) is in a group holding the memory limit.
    [container] = gvisor_service.containers_of(sandbox)
    group = f"{GROUP_PREFIX}-{container}"
    v1, v2 = CGROUP_ROOT / "memory" / group / "memory.limit_in_bytes", CGROUP_ROOT / group / "memory.max"
    limit = v1.read_text() if v1.exists() else v2.read_text()
    assert int(limit) == MEMORY_LIMIT
    assert gvisor_service.container_pids(container)
    service_still_serves()
