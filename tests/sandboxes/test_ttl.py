"""A sandbox lives ttl_seconds past its last use; the reaper kills it and frees its workdir."""

import time

from sandboxes import SandboxExpired
from tests.conftest import workdir_of


def _wait_until_gone(sandbox, seconds=30):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            sandbox.get_info()
        except SandboxExpired:
            return True
        time.sleep(0.25)
    return False


def test_reaper_frees_the_workdir(make_sandbox, sandboxd):
    sandbox = make_sandbox(ttl_seconds=3)  # the first use must come within it, on a busy machine too
    sandbox.files.write("big.csv", b"x" * 1000)
    workdir = workdir_of(sandboxd, sandbox)
    assert workdir.exists()
    time.sleep(3.5)  # no use: no touch
    assert _wait_until_gone(sandbox)
    deadline = time.monotonic() + 15  # expired at once; its kernels stop, then the folder goes
    while workdir.exists():
        assert time.monotonic() < deadline, "the expired sandbox's workdir was never freed"
        time.sleep(0.1)


def test_use_keeps_a_sandbox_alive(make_sandbox):
    # Four uses a second apart outlive a TTL of 4 s; the margin is for a loaded machine, where a
    # round trip can take seconds (with 3 s, a fresh-clone run on a busy machine saw it expire).
    sandbox = make_sandbox(ttl_seconds=4)
    for _ in range(6):
        time.sleep(1)
        assert sandbox.run_code("1").text == "1"
    assert sandbox.get_info().expires_in > 0


def test_a_running_cell_is_not_reaped(make_sandbox):
    sandbox = make_sandbox(ttl_seconds=2)  # a cell twice as long as the TTL, begun well within it
    execution = sandbox.run_code("import time; time.sleep(5); 'done'")
    assert execution.text == "'done'"


def test_set_ttl_extends(make_sandbox):
    sandbox = make_sandbox(ttl_seconds=4)
    sandbox.set_ttl(120)
    time.sleep(5)
    info = sandbox.get_info()
    assert info.ttl_seconds == 120
    assert sandbox.run_code("'alive'").text == "'alive'"
