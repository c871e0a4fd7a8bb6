"""A handler that raises ends the cell: the caller gets its exception, the context is free at once."""

import pytest

from sandboxes import AsyncSandbox

LONG_CELL = (
    "import time\nkept = 2\nprint('started', flush=True)\nfor _ in range(600): time.sleep(0.1)\nkept = 3"
)


class StorageBroke(Exception):
    pass


def fail(text: str) -> None:
    raise StorageBroke(text)


def test_a_raising_handler_ends_the_cell(sandbox):
    sandbox.run_code("kept = 1")
    with pytest.raises(StorageBroke) as raised:
        sandbox.run_code(LONG_CELL, on_stdout=fail)
    assert str(raised.value) == "started\n"
    # While the exception is still held (a traceback keeps every frame alive), the context is free.
    assert sandbox.run_code("kept").text == "2"


def test_a_raising_result_handler_ends_the_cell(sandbox):
    def fail_on_result(result: object) -> None:
        raise StorageBroke("no room")

    code = "import time\ndisplay(1)\nfor _ in range(600): time.sleep(0.1)"
    with pytest.raises(StorageBroke) as raised:
        sandbox.run_code(code, on_result=fail_on_result)
    assert sandbox.run_code("6 * 7").text == "42"
    assert str(raised.value) == "no room"


@pytest.mark.asyncio
async def test_a_raising_async_handler_ends_the_cell(sandboxd):
    sandbox = await AsyncSandbox.create(url=sandboxd.url, token=sandboxd.token)
    try:
        await sandbox.run_code("kept = 1")

        async def fail_async(text: str) -> None:
            raise StorageBroke(text)

        # The exceptions stay held, as a caller that logs or reports them holds them.
        with pytest.raises(StorageBroke) as first:
            await sandbox.run_code(LONG_CELL, on_stdout=fail_async)
        assert (await sandbox.run_code("kept")).text == "2"
        with pytest.raises(StorageBroke) as second:
            await sandbox.run_code(LONG_CELL, on_stdout=fail)  # a plain function too
        assert (await sandbox.run_code("kept")).text == "2"
        assert str(first.value) == str(second.value) == "started\n"
    finally:
        await sandbox.kill()
        await sandbox.close()
