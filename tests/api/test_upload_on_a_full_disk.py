"""An upload that does not fit on the server's disk is 507 storage_full, and leaves nothing behind:
no partial file in MEDIA_ROOT, no DataFile row, and the file it would have replaced kept whole."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from analyst.models import DataFile
from tests.api.conftest import stored_files, upload
from tests.small_tmpfs import small_tmpfs

ROWS = b"region,units\n" + b"north,3\n" * 400_000  # 3.2 MB: over Django's in-memory upload size


@pytest.fixture
def small_media(settings: Any) -> Iterator[Path]:
    """MEDIA_ROOT on a 2 MiB tmpfs of its own."""
    with small_tmpfs() as folder:
        settings.MEDIA_ROOT = folder
        yield folder


def fill(folder: Path, leave: int) -> Path:
    """A file that takes all of ``folder``'s free space but ``leave`` bytes."""
    free = shutil.disk_usage(folder).free
    filler = folder / "filler.bin"
    filler.write_bytes(b"\0" * (free - leave))
    return filler


def assert_storage_full(response: Any) -> None:
    assert response.status_code == 507, response.content
    error = response.json()["error"]
    assert error["code"] == "storage_full"
    assert error["message"].startswith("The server's storage is full, so sales.csv could not be saved.")


def test_a_file_larger_than_the_free_space_is_507_and_nothing_is_kept(api, session, small_media):
    assert_storage_full(upload(api, session, "sales.csv", ROWS))
    assert stored_files(small_media) == []
    assert not DataFile.objects.exists()


def test_a_small_file_on_a_full_disk_is_507_and_nothing_is_kept(api, session, small_media):
    filler = fill(small_media, leave=8 << 10)
    assert_storage_full(upload(api, session, "sales.csv", ROWS[:200_000]))
    assert stored_files(small_media) == [filler]
    assert not DataFile.objects.exists()


def test_a_replacement_that_does_not_fit_keeps_the_old_file(api, session, small_media):
    old = b"region,units\nnorth,3\n"
    assert upload(api, session, "sales.csv", old).status_code == 202
    (kept,) = DataFile.objects.all()
    filler = fill(small_media, leave=8 << 10)
    assert_storage_full(upload(api, session, "sales.csv", ROWS[:200_000]))
    assert DataFile.objects.get() == kept
    assert sorted(stored_files(small_media)) == sorted([filler, Path(kept.stored.path)])
    with kept.stored.open("rb") as stored:
        assert stored.read() == old
