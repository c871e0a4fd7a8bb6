"""A paused sandbox costs no memory: its kernels are stopped and their state kept on disk, and any
use brings it back under the same id with its files and every context's variables (E2B's
``pause()`` and ``connect()``)."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path

import pytest

from sandboxes import AsyncSandbox, ContextBusy, Sandbox, SandboxExpired
from tests.conftest import workdir_of


def processes_of(uid: int) -> list[int]:
    """The processes running as host ``uid`` (each sandbox has its own: its kernels)."""
    pids = []
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            if f"Uid:\t{uid}\t" in status.read_text():
                pids.append(int(status.parent.name))
        except OSError:
            continue
    return pids


def test_a_paused_sandbox_comes_back_with_its_files_and_variables(make_sandbox, sandboxd):
    sandbox = make_sandbox()
    other = sandbox.create_code_context()
    sandbox.files.write("data/sales.csv", "region,amount\nnorth,3\nsouth,4\n")
    sandbox.run_code("import pandas as pd\ndf = pd.read_csv('data/sales.csv')\ntotal = int(df.amount.sum())")
    other.run_code("mine = 'second context'")
    before = sandbox.get_info()

    paused = sandbox.pause()

    assert paused.state == "paused"
    assert sandbox.get_info().state == "paused"  # looking does not resume it
    assert paused.context_ids == before.context_ids
    assert sandbox.run_code("total").text == "7"  # any call resumes it
    info = sandbox.get_info()
    assert (info.state, info.sandbox_id, info.context_ids) == (
        "running",
        before.sandbox_id,
        before.context_ids,
    )
    assert info.resumed is not None and info.resumed.why == "asked" and info.resumed.unsaved == []
    assert other.run_code("mine").text == "'second context'"
    assert sandbox.files.read("data/sales.csv").startswith("region,amount")
    assert sandbox.run_code("df.shape").text == "(2, 2)"


def test_pausing_stops_the_kernels_and_frees_the_workdir(make_sandbox, sandboxd):
    sandbox = make_sandbox()
    sandbox.run_code("x = 1")
    uid = workdir_of(sandboxd, sandbox).stat().st_uid
    assert processes_of(uid)
    sandbox.pause()
    assert not workdir_of(sandboxd, sandbox).exists()
    deadline = time.monotonic() + 10
    while processes_of(uid):
        assert time.monotonic() < deadline, "the paused sandbox's kernel still runs"
        time.sleep(0.1)


def test_connect_resumes_a_paused_sandbox(make_sandbox, sandboxd):
    sandbox = make_sandbox()
    sandbox.run_code("n = 41")
    sandbox.pause()
    connected = Sandbox.connect(sandbox.sandbox_id, url=sandboxd.url, token=sandboxd.token)
    try:
        assert connected.get_info().state == "running"
        assert connected.run_code("n + 1").text == "42"
    finally:
        connected.close()


def test_what_cannot_be_pickled_is_named_when_it_resumes(make_sandbox):
    sandbox = make_sandbox()
    sandbox.run_code("kept = [1, 2]\nnumbers = (i for i in range(3))")  # a generator cannot be pickled
    sandbox.pause()
    assert sandbox.run_code("kept").text == "[1, 2]"
    resumed = sandbox.get_info().resumed
    assert resumed is not None and resumed.unsaved == ["numbers"]
    assert sandbox.run_code("numbers").error.name == "NameError"


def test_a_running_cell_is_never_paused(make_sandbox):
    sandbox = make_sandbox()
    running = threading.Thread(target=sandbox.run_code, args=("import time; time.sleep(4)",))
    running.start()
    time.sleep(1)
    try:
        with pytest.raises(ContextBusy):
            sandbox.pause()
    finally:
        running.join()
    assert sandbox.get_info().state == "running"


def test_pause_twice_and_kill_a_paused_sandbox(make_sandbox, sandboxd):
    sandbox = make_sandbox()
    sandbox.pause()
    assert sandbox.pause().state == "paused"
    paused_records = sandboxd.view(sandboxd.data_dir / "paused")
    assert (paused_records / f"{sandbox.sandbox_id}.json").exists()
    sandbox.kill()
    assert not (paused_records / f"{sandbox.sandbox_id}.json").exists()
    with pytest.raises(Exception) as gone:
        sandbox.get_info()
    assert gone.value.code == "sandbox_not_found"


def test_a_paused_sandbox_still_expires(make_sandbox):
    sandbox = make_sandbox(ttl_seconds=5)  # room for the pause on a loaded machine
    sandbox.pause()
    deadline = time.monotonic() + 30
    while True:
        try:
            sandbox.get_info()
        except SandboxExpired:
            break
        assert time.monotonic() < deadline, "the paused sandbox never expired"
        time.sleep(0.25)
    with pytest.raises(SandboxExpired):
        sandbox.run_code("1")


def test_listing_shows_paused_sandboxes(make_sandbox, sandboxd):
    sandbox = make_sandbox(metadata={"suite": "pause-listing"})
    sandbox.pause()
    listed = Sandbox.list({"suite": "pause-listing"}, url=sandboxd.url, token=sandboxd.token)
    assert [(info.sandbox_id, info.state) for info in listed] == [(sandbox.sandbox_id, "paused")]


def test_a_snapshot_restored_paused_starts_no_kernel_until_used(make_sandbox, sandboxd):
    source = make_sandbox()
    source.files.write("notes.txt", "kept")
    source.run_code("answer = 42")
    snapshot = source.snapshot()
    restored = Sandbox.restore(snapshot.snapshot_id, paused=True, url=sandboxd.url, token=sandboxd.token)
    try:
        assert restored.get_info().state == "paused"
        Sandbox.delete_snapshot(
            snapshot.snapshot_id, url=sandboxd.url, token=sandboxd.token
        )  # it owns a copy
        assert restored.run_code("answer").text == "42"
        assert restored.files.read("notes.txt") == "kept"
        assert restored.get_info().resumed.why == "restored"
    finally:
        restored.kill()
        restored.close()


def test_the_async_sdk_pauses_and_resumes(sandboxd):
    async def scenario() -> None:
        sandbox = await AsyncSandbox.create(url=sandboxd.url, token=sandboxd.token)
        async with sandbox:
            await sandbox.run_code("value = 'async'")
            assert (await sandbox.pause()).state == "paused"
            assert (await sandbox.run_code("value")).text == "'async'"
            assert (await sandbox.get_info()).state == "running"

    asyncio.run(scenario())
