"""Snapshots in an S3-compatible store, shared by sandboxd hosts: a sandbox saved on one host is
restored on another, which never saw its file; deleting it removes the object. The store is moto's
S3 server (a real HTTP server speaking S3's wire protocol, started here on loopback)."""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Iterator

import pytest

from sandboxes import Sandbox, ServiceUnavailable, SnapshotNotFound
from tests.conftest import TEST_SETTINGS, sandbox_maker
from tests.s3_server import CREDENTIALS, s3_client, s3_server
from tests.sandboxd_process import SandboxdProcess, own_sandboxd_process

BUCKET = "analyst-snapshots"


@pytest.fixture(scope="module")
def s3() -> Iterator[str]:
    with s3_server(BUCKET) as url:
        yield url


def host(url: str, name: str) -> contextlib.AbstractContextManager[SandboxdProcess]:
    settings = {
        **TEST_SETTINGS,
        **CREDENTIALS,
        "SANDBOXD_SNAPSHOT_STORE": "s3",
        "SANDBOXD_S3_BUCKET": BUCKET,
        "SANDBOXD_S3_PREFIX": "test/",
        "SANDBOXD_S3_ENDPOINT_URL": url,
        "SANDBOXD_S3_REGION": "us-east-1",
    }
    return own_sandboxd_process(settings, prefix=f"sandboxd-s3-{name}-")


def keys(url: str) -> list[str]:
    return [item["Key"] for item in s3_client(url).list_objects_v2(Bucket=BUCKET).get("Contents", [])]


def test_a_snapshot_taken_on_one_host_is_restored_on_another(s3):
    with host(s3, "a") as first, sandbox_maker(first) as make:
        sandbox = make()
        sandbox.run_code("import pandas as pd\nframe = pd.DataFrame({'v': [1, 2, 3]})\nx = 41")
        sandbox.files.write("data/notes.txt", b"kept")
        snapshot = sandbox.snapshot()
    assert keys(s3) == [f"test/{snapshot.snapshot_id}.snapshot"]

    with host(s3, "b") as second, sandbox_maker(second):
        again = Sandbox.restore(snapshot.snapshot_id, url=second.url, token=second.token)
        try:
            assert again.run_code("print(x + 1, frame['v'].sum())").stdout == "42 6\n"
            assert again.files.read("data/notes.txt") == "kept"
        finally:
            again.kill()
            again.close()
        info = Sandbox.get_snapshot(snapshot.snapshot_id, url=second.url, token=second.token)
        assert info.snapshot_id == snapshot.snapshot_id and info.size == snapshot.size
        Sandbox.delete_snapshot(snapshot.snapshot_id, url=second.url, token=second.token)
        assert keys(s3) == []
        with pytest.raises(SnapshotNotFound):
            Sandbox.restore(snapshot.snapshot_id, url=second.url, token=second.token)
        with pytest.raises(SnapshotNotFound):
            Sandbox.delete_snapshot(snapshot.snapshot_id, url=second.url, token=second.token)


def test_a_store_that_cannot_be_reached_is_a_clear_retryable_error(s3):
    with socket.socket() as closed:  # a port nothing listens on
        closed.bind(("127.0.0.1", 0))
        nowhere = f"http://127.0.0.1:{closed.getsockname()[1]}"
    with host(nowhere, "down") as down, sandbox_maker(down) as make:
        sandbox = make()
        sandbox.run_code("x = 1")
        with pytest.raises(ServiceUnavailable, match="the snapshot store cannot be reached") as refused:
            sandbox.snapshot()
        assert refused.value.retryable
        assert sandbox.run_code("x + 1").text == "2"  # the sandbox goes on


def test_s3_without_a_bucket_does_not_start(tmp_path):
    settings = {**TEST_SETTINGS, "SANDBOXD_SNAPSHOT_STORE": "s3"}
    with pytest.raises(RuntimeError, match="SANDBOXD_SNAPSHOT_STORE=s3 needs SANDBOXD_S3_BUCKET"):
        with own_sandboxd_process(settings, prefix="sandboxd-s3-none-"):
            pass
