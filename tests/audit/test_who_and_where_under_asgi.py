"""Under ASGI (the app's server), a service deep below a view still records who made the request
and from where: the remembered request reaches the sync view's thread."""

from __future__ import annotations

from typing import Any

import pytest
from asgiref.sync import async_to_sync
from django.test import AsyncClient

from analyst.models import ApiToken
from tests.audit.conftest import only

pytestmark = pytest.mark.django_db


def test_an_export_over_asgi(alice: Any, session: Any):
    _, secret = ApiToken.issue(alice)
    answer = async_to_sync(AsyncClient().get)(
        f"/api/sessions/{session.id}/export", {"format": "py"}, headers={"Authorization": f"Bearer {secret}"}
    )
    assert answer.status_code == 200, answer.content
    entry = only("export")
    assert (entry.username, entry.address, entry.target) == ("alice", "127.0.0.1", f"session:{session.id}")
