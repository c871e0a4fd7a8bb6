"""An S3 store (moto's server, tests/s3_server.py) with a bucket holding a CSV under a prefix."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass

from tests.s3_server import CREDENTIALS, s3_client, s3_server

BUCKET, PREFIX = "analytics", "exports/"
ORDERS_CSV = b"id,customer,amount\n1,ada,12.5\n2,grace,7.25\n"


@dataclass(frozen=True)
class S3Store:
    endpoint_url: str
    bucket: str
    prefix: str
    key_id: str
    secret: str
    region: str = "us-east-1"


@contextlib.contextmanager
def s3_store() -> Iterator[S3Store]:
    """The store, its bucket holding ``<prefix>orders.csv``."""
    with s3_server(BUCKET) as url:
        s3_client(url).put_object(Bucket=BUCKET, Key=f"{PREFIX}orders.csv", Body=ORDERS_CSV)
        yield S3Store(
            endpoint_url=url,
            bucket=BUCKET,
            prefix=PREFIX,
            key_id=CREDENTIALS["AWS_ACCESS_KEY_ID"],
            secret=CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
        )
