"""A live table downloaded as CSV (the grid's "Download CSV") is a download in the log; an unknown
table, which downloads nothing, is not."""

from __future__ import annotations

from typing import Any

import pytest
from asgiref.sync import async_to_sync
from django.test import Client

from tests.audit.conftest import ALICE_ADDRESS, only, recorded

pytestmark = pytest.mark.django_db


async def read_all(chunks: Any) -> bytes:
    return b"".join([chunk async for chunk in chunks])


@pytest.fixture
def live_session(session: Any, sandbox: Any, sandboxd: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("SANDBOXD_URL", sandboxd.url)
    monkeypatch.setenv("SANDBOXD_TOKEN", sandboxd.token)
    assert sandbox.run_code("import pandas as pd\ndf = pd.DataFrame({'n': [1, 2]})").error is None
    session.sandbox_id = sandbox.sandbox_id
    session.save(update_fields=["sandbox_id"])
    return session


def test_a_variables_csv(api: Client, live_session: Any):
    assert api.get(f"/api/sessions/{live_session.id}/variables/nothing/rows.csv").status_code == 404
    assert recorded("download") == []
    got = api.get(f"/api/sessions/{live_session.id}/variables/df/rows.csv")
    assert async_to_sync(read_all)(got.streaming_content) == b"index,n\n0,1\n1,2\n"
    entry = only("download")
    assert (entry.username, entry.address, entry.target) == (
        "alice",
        ALICE_ADDRESS,
        f"session:{live_session.id}",
    )
    assert entry.detail == {"variable": "df", "format": "csv"}
