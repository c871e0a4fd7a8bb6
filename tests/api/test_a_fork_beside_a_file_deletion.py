"""A fork names its source's stored files, so an upload deleted from the source while a fork copies
it must stay stored for the fork: the deletion waits for the fork (both hold the source's row), and
its check then sees the fork's row. Without that, the fork read the file's row, the deletion
committed and found no other row naming the file, and the fork committed a row naming a deleted
file. Run on Postgres by `make test-postgres` (SQLite serialises the two whole)."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.files.base import ContentFile
from django.db import connection

from analyst.models import AnalysisSession, DataFile
from analyst.sessions import forks
from analyst.uploads import uploads

pytestmark = [pytest.mark.database, pytest.mark.django_db(transaction=True)]


def test_a_file_deleted_while_a_fork_copies_it_stays_stored_for_the_fork(settings, tmp_path, monkeypatch):
    settings.MEDIA_ROOT = tmp_path
    alice = get_user_model().objects.create_user("alice")
    source = AnalysisSession.objects.create(owner=alice, model="anthropic/claude-test", title="Sales")
    data_file = DataFile(session=source, name="q3.csv", path="data/q3.csv", size=4)
    data_file.stored.save("q3.csv", ContentFile(b"a\n1\n"))
    read, deleted = threading.Event(), threading.Event()
    copy = forks.copy_file

    def copy_after_the_deletion(original: DataFile, session: AnalysisSession, **changed: Any) -> DataFile:
        """The worst interleaving: the fork has read the file's row; the deletion runs now. Where
        the deletion waits for the fork, this gives up waiting (no error) and goes on first."""
        read.set()
        deleted.wait(timeout=5)
        return copy(original, session, **changed)

    monkeypatch.setattr(forks, "copy_file", copy_after_the_deletion)
    made: list[AnalysisSession] = []

    def fork() -> None:
        try:
            made.append(forks.do_fork(source=source, owner=alice))
        finally:
            connection.close()

    def delete() -> None:
        try:
            read.wait(timeout=30)
            uploads.do_delete(session=source, file_id=data_file.id)
            deleted.set()
        finally:
            connection.close()

    threads = [threading.Thread(target=fork), threading.Thread(target=delete)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    (copied,) = made[0].files.all()
    assert not source.files.exists()
    assert copied.stored.storage.exists(copied.stored.name), "the fork names a deleted file"
    with copied.stored.open("rb") as content:
        assert content.read() == b"a\n1\n"
