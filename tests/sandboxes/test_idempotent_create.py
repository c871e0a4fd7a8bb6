"""A create that repeats an idempotency key gets the sandbox the first one made, not a second one."""

import time
import uuid

import httpx
import pytest

from sandboxes import AsyncSandbox, RequestTimeout, Sandbox
from tests.conftest import TEST_SETTINGS
from tests.sandboxd_process import own_sandboxd_process


def _live(sandboxd, metadata):
    return Sandbox.list(metadata, url=sandboxd.url, token=sandboxd.token)


def test_two_creates_with_one_key_make_one_sandbox(sandboxd, make_sandbox):
    key = uuid.uuid4().hex
    metadata = {"session": key}
    first = make_sandbox(metadata=metadata, idempotency_key=key)
    first.run_code("kept = 1")
    second = make_sandbox(metadata=metadata, idempotency_key=key)
    assert second.sandbox_id == first.sandbox_id
    assert second.run_code("kept").text == "1"
    assert [info.sandbox_id for info in _live(sandboxd, metadata)] == [first.sandbox_id]
    other = make_sandbox(metadata=metadata, idempotency_key=uuid.uuid4().hex)
    unkeyed = make_sandbox(metadata=metadata)
    assert len({first.sandbox_id, other.sandbox_id, unkeyed.sandbox_id}) == 3


def test_the_key_is_forgotten_with_its_sandbox(make_sandbox):
    key = uuid.uuid4().hex
    first = make_sandbox(idempotency_key=key)
    first.kill()
    again = make_sandbox(idempotency_key=key)
    assert again.sandbox_id != first.sandbox_id
    assert again.run_code("6 * 7").text == "42"


@pytest.mark.asyncio
async def test_the_async_sdk_adopts_too(sandboxd):
    key = uuid.uuid4().hex
    options = {"url": sandboxd.url, "token": sandboxd.token, "idempotency_key": key}
    first = await AsyncSandbox.create(metadata={"session": key}, **options)
    second = await AsyncSandbox.create(metadata={"session": key}, **options)
    try:
        assert second.sandbox_id == first.sandbox_id
        assert len(_live(sandboxd, {"session": key})) == 1
    finally:
        await first.kill()
        await first.close()
        await second.close()


def test_a_create_whose_answer_was_lost_is_adopted_by_its_retry():
    # No warm pool: every create starts a kernel, far longer than the caller waits here.
    settings = {**TEST_SETTINGS, "SANDBOXD_POOL_SIZE": "0"}
    with own_sandboxd_process(settings, prefix="sandboxd-idempotent-") as server:
        key = uuid.uuid4().hex
        metadata = {"session": key}
        with pytest.raises(RequestTimeout):
            Sandbox.create(
                metadata=metadata,
                idempotency_key=key,
                url=server.url,
                token=server.token,
                request_timeout=0.05,
            )
        deadline = time.monotonic() + 30
        while not _live(server, metadata):  # the first create goes on after its caller left
            assert time.monotonic() < deadline, server.read_log()
            time.sleep(0.05)
        headers = {"Authorization": f"Bearer {server.token}", "Idempotency-Key": key}
        retried = httpx.post(
            f"{server.url}/sandboxes", json={"metadata": metadata}, headers=headers, timeout=30
        )
        assert retried.status_code == 200, retried.text  # adopted, not created
        adopted = Sandbox.connect(retried.json()["id"], url=server.url, token=server.token)
        assert adopted.run_code("6 * 7").text == "42"
        assert [info.sandbox_id for info in _live(server, metadata)] == [adopted.sandbox_id]
        adopted.kill()
        adopted.close()
