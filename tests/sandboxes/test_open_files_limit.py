"""sandboxd sets its own open-files limit at start (a kernel holds about 18 of its descriptors, so
the common 1,024 stopped it at its 56th sandbox with a bare 500), and running out of them is a
clear, retryable CapacityExceeded that says so, after which the service serves on."""

from __future__ import annotations

import os
import resource
import subprocess
import sys

import httpx
import pytest

from sandboxes import CapacityExceeded
from tests.conftest import TEST_SETTINGS, sandbox_maker
from tests.sandboxd_process import own_sandboxd_process


def limit_of(process) -> int:
    with open(f"/proc/{process.process.pid}/limits") as limits:
        for line in limits:
            if line.startswith("Max open files"):
                return int(line.split()[3])
    raise AssertionError("no open-files line")


def may_raise_the_hard_limit() -> bool:
    """Root with CAP_SYS_RESOURCE may (a container's root often may not)."""
    code = "import resource; resource.setrlimit(resource.RLIMIT_NOFILE, (1 << 20, 1 << 20))"
    return subprocess.run([sys.executable, "-c", code], check=False, capture_output=True).returncode == 0


def stats(sandboxd) -> dict:
    return httpx.get(f"{sandboxd.url}/stats", headers={"Authorization": f"Bearer {sandboxd.token}"}).json()


def test_the_default_limit_is_raised_as_far_as_it_may_go(sandboxd):
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]  # what sandboxd inherited from us
    assert limit_of(sandboxd) == (1 << 20 if may_raise_the_hard_limit() else hard)
    assert stats(sandboxd)["open_files_limit"] == limit_of(sandboxd)


def test_running_out_of_open_files_is_capacity_exceeded_and_the_service_recovers():
    settings = {**TEST_SETTINGS, "SANDBOXD_OPEN_FILES": "160", "SANDBOXD_POOL_SIZE": "0"}
    with (
        own_sandboxd_process(settings, prefix="sandboxd-nofile-") as sandboxd,
        sandbox_maker(sandboxd) as make,
    ):
        assert limit_of(sandboxd) == 160
        made, refusal = [], None
        for _ in range(20):  # 160 descriptors: a handful of kernels
            try:
                made.append(make())
            except CapacityExceeded as exc:
                refusal = exc
                break
        assert refusal is not None, f"{len(made)} sandboxes under 160 open files"
        assert made, "not even one sandbox started"
        assert refusal.retryable and "open files it may (160)" in refusal.message
        assert "SANDBOXD_OPEN_FILES" in refusal.message
        made[0].run_code("x = 1")  # the ones that started still work
        with pytest.raises(CapacityExceeded):
            made[0].create_code_context()
        for sandbox in made[:2]:
            sandbox.kill()
        assert make().run_code("6 * 7").text == "42"


@pytest.mark.parametrize("number", [24, 23, 11, 12])  # EMFILE ENFILE EAGAIN ENOMEM
def test_each_system_limit_names_its_reason(number):
    from sandboxes.server.system_limits import capacity_error

    error = capacity_error(OSError(number, os.strerror(number)))
    assert isinstance(error, CapacityExceeded) and error.message.startswith("no room for this now: ")
    assert capacity_error(OSError(2, "No such file")) is None and capacity_error(ValueError()) is None
