"""AsyncSandbox: the same contract for asyncio code."""

import asyncio

import pytest
import pytest_asyncio

from sandboxes import AsyncSandbox, FileNotFound


@pytest_asyncio.fixture
async def async_sandbox(sandboxd):
    sandbox = await AsyncSandbox.create(url=sandboxd.url, token=sandboxd.token, metadata={"kind": "async"})
    yield sandbox
    await sandbox.kill()
    await sandbox.close()


@pytest.mark.asyncio
async def test_state_output_results_and_errors(async_sandbox):
    lines = []

    async def on_stdout(text):
        lines.append(text)

    await async_sandbox.run_code("x = 20")
    execution = await async_sandbox.run_code("print('hi')\nx * 2 + 2", on_stdout=on_stdout)
    assert execution.text == "42"
    assert lines == ["hi\n"]
    assert (await async_sandbox.run_code("1/0")).error.name == "ZeroDivisionError"
    chart = await async_sandbox.run_code("import matplotlib.pyplot as plt; plt.plot([1]); plt.show()")
    assert chart.png


@pytest.mark.asyncio
async def test_files_and_contexts(async_sandbox):
    await async_sandbox.files.write("data/a.csv", b"n\n1\n2\n")
    assert (await async_sandbox.run_code("int(pd.read_csv('data/a.csv').n.sum())")).text == "3"
    assert [e.path for e in await async_sandbox.files.list("data")] == ["data/a.csv"]
    with pytest.raises(FileNotFound):
        await async_sandbox.files.read("data/b.csv")
    other = await async_sandbox.create_code_context()
    assert (await other.run_code("'x' in dir()")).text == "False"


@pytest.mark.asyncio
async def test_a_large_file_is_read_in_chunks(async_sandbox):
    await async_sandbox.run_code("open('out.bin', 'wb').write(bytes(range(256)) * 16384)")  # 4 MiB
    chunks = [chunk async for chunk in async_sandbox.files.read_chunks("out.bin")]
    assert len(chunks) > 1 and b"".join(chunks) == bytes(range(256)) * 16384
    with pytest.raises(FileNotFound):
        await anext(aiter(async_sandbox.files.read_chunks("missing.bin")))


@pytest.mark.asyncio
async def test_two_sandboxes_run_concurrently(sandboxd, async_sandbox):
    other = await AsyncSandbox.create(url=sandboxd.url, token=sandboxd.token)
    try:
        first, second = await asyncio.gather(
            async_sandbox.run_code("import time; time.sleep(0.5); 'a'"),
            other.run_code("import time; time.sleep(0.5); 'b'"),
        )
        assert (first.text, second.text) == ("'a'", "'b'")
    finally:
        await other.kill()
        await other.close()


@pytest.mark.asyncio
async def test_snapshot_restore_and_fork(async_sandbox, sandboxd):
    await async_sandbox.run_code("x = 41")
    snapshot = await async_sandbox.snapshot()
    assert snapshot.metadata == {"kind": "async"}
    service = {"url": sandboxd.url, "token": sandboxd.token}
    restored = await AsyncSandbox.restore(snapshot.snapshot_id, metadata={"kind": "restored"}, **service)
    fork = await async_sandbox.fork()
    try:
        assert (await restored.run_code("x + 1")).text == "42"
        assert restored.metadata == {"kind": "restored"}
        await fork.run_code("x = 0")
        assert (await async_sandbox.run_code("x")).text == "41"
        assert (await AsyncSandbox.get_snapshot(snapshot.snapshot_id, **service)) == snapshot
        await AsyncSandbox.delete_snapshot(snapshot.snapshot_id, **service)
    finally:
        for made in (restored, fork):
            await made.kill()
            await made.close()
