"""moto's S3 server (a real HTTP server speaking S3's wire protocol) on loopback, for the tests of
snapshots in an S3-compatible store; and a client of it."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import boto3

from tests.sandboxd_process import free_port

# What sandboxd is given to sign its requests with; moto accepts any.
CREDENTIALS = {"AWS_ACCESS_KEY_ID": "test-key", "AWS_SECRET_ACCESS_KEY": "test-secret"}


@contextlib.contextmanager
def s3_server(bucket: str) -> Iterator[str]:
    """The server on a free port, with ``bucket`` made; yields its URL."""
    from moto.server import ThreadedMotoServer

    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    try:
        url = f"http://127.0.0.1:{port}"
        s3_client(url).create_bucket(Bucket=bucket)
        yield url
    finally:
        server.stop()


def s3_client(url: str):
    return boto3.client(
        "s3",
        endpoint_url=url,
        region_name="us-east-1",
        aws_access_key_id=CREDENTIALS["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
    )
