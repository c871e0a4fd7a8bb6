"""An entry that cannot be stored is logged, and the action goes on (its transaction unharmed)."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from analyst.models import AuditEntry, DataFile
from tests.api.conftest import upload

pytestmark = pytest.mark.django_db


def test_an_upload_goes_on_when_its_entry_fails(
    api: Client, session: Any, media: Any, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
):
    """The INSERT itself fails in the database (its table gone), inside the upload's transaction."""
    monkeypatch.setattr(AuditEntry._meta, "db_table", "no_such_audit_table")
    assert upload(api, session, "sales.csv", b"region,total\nnorth,3\n").status_code == 202
    assert DataFile.objects.filter(session=session, name="sales.csv").exists()
    assert "audit entry upload on session:" in caplog.text and "by alice not stored" in caplog.text
