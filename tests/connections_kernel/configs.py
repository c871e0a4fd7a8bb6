"""Connection entries of egress.json as the web app writes them (contract section 2), for the
test servers. The URL names a loopback address no test server listens on (and a literal one:
no name is looked up): the kernel must use the forwarder's port on 127.0.0.1, never the URL's
own host and port."""

from __future__ import annotations

from typing import Any

from tests.servers.database import Database
from tests.servers.http_api import HttpApi
from tests.servers.s3 import S3Store

ELSEWHERE = "127.0.0.2"


def postgres(db: Database, *, read_only: bool = True, **changes: Any) -> dict[str, Any]:
    user, database = changes.get("user", db.user), changes.get("database", db.database)
    url = f"postgresql://{user}@{ELSEWHERE}:6543/{database}"
    return {
        "kind": "postgres",
        "url": url,
        "secret": changes.get("secret", db.password),
        "read_only": read_only,
    }


def mysql(db: Database, *, read_only: bool = True, **changes: Any) -> dict[str, Any]:
    user, database = changes.get("user", db.user), changes.get("database", db.database)
    url = f"mysql://{user}@{ELSEWHERE}:3307/{database}"
    return {"kind": "mysql", "url": url, "secret": changes.get("secret", db.password), "read_only": read_only}


def s3(store: S3Store, **changes: Any) -> dict[str, Any]:
    options = {
        "endpoint_url": store.endpoint_url,
        "bucket": changes.get("bucket", store.bucket),
        "prefix": store.prefix,
        "key_id": store.key_id,
        "region": store.region,
    }
    return {"kind": "s3", "url": "", "secret": store.secret, "read_only": True, "options": options}


def http(api: HttpApi, **changes: Any) -> dict[str, Any]:
    options = {"header": "Authorization", "scheme": "Bearer"}
    return {"kind": "http", "url": api.url, "secret": changes.get("secret", api.token), "options": options}
