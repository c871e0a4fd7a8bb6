"""A chart that does not fit on the server's disk ends its turn (saying the storage is full) and
its cell, so the next question runs at once; nothing partial is left in MEDIA_ROOT."""

from __future__ import annotations

import base64
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from analyst.files.artifacts import StorageFull, store_bundle
from analyst.models import AnalysisSession, Artifact
from tests.integration.conftest import wait_for
from tests.small_tmpfs import small_tmpfs

CHART_THEN_WAIT = (
    "kept = 1\n"
    "plt.plot([1, 3, 2]); plt.show()\n"
    "import time\n"
    "for _ in range(1200): time.sleep(0.1)\n"  # two minutes: far longer than the test waits
    "kept = 2"
)
PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 64).decode()  # 16 KiB


@pytest.fixture
def full_media(settings: Any) -> Iterator[Path]:
    """A MEDIA_ROOT on a 2 MiB tmpfs with 4 KiB free."""
    with small_tmpfs() as folder:
        (folder / "filler.bin").write_bytes(b"\0" * (shutil.disk_usage(folder).free - (4 << 10)))
        settings.MEDIA_ROOT = folder
        yield folder


def files_in(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())


def post_cell(api: Any, session: AnalysisSession, code: str) -> None:
    response = api.post(f"/api/sessions/{session.id}/cells", {"code": code}, "application/json")
    assert response.status_code == 202, response.content


def turn_ends(session: AnalysisSession, count: int) -> list[dict[str, Any]]:
    ends = ("turn_done", "turn_failed", "turn_cancelled")
    log = wait_for(session)
    while sum(e["type"] in ends for e in log) < count:
        log = wait_for(session)
    return log


def test_a_chart_that_does_not_fit_raises_storage_full_and_keeps_nothing(db, session, full_media):
    with pytest.raises(StorageFull) as raised:
        store_bundle(session, {"image/png": PNG, "text/plain": "<Figure>"})
    assert raised.value.code == "storage_full"
    assert str(raised.value).startswith("The server's storage is full, so a chart could not be saved.")
    assert files_in(full_media) == ["filler.bin"]
    assert not Artifact.objects.exists()


def test_a_full_disk_ends_the_turn_and_its_cell_so_the_next_cell_runs(
    transactional_db, extra_worker, api, session, full_media
):
    extra_worker(MEDIA_ROOT=str(full_media))
    post_cell(api, session, CHART_THEN_WAIT)
    first = turn_ends(session, 1)
    assert first[-1]["type"] == "turn_failed"
    assert not any(e["type"] == "result" for e in first)  # the chart was not kept
    assert files_in(full_media) == ["filler.bin"]

    post_cell(api, session, "kept")  # the chart's cell was interrupted: not context_busy
    log = turn_ends(session, 2)
    second = log[len(first) :]
    assert second[-1]["type"] == "turn_done", second
    results = [e["payload"]["data"] for e in second if e["type"] == "result"]
    assert results == [{"text/plain": "1"}]


def test_a_full_disk_says_so_in_the_turn(transactional_db, extra_worker, api, session, full_media):
    extra_worker(MEDIA_ROOT=str(full_media))
    post_cell(api, session, CHART_THEN_WAIT)
    log = turn_ends(session, 1)
    errors = [e["payload"] for e in log if e["type"] == "error"]
    assert [e["code"] for e in errors] == ["storage_full"]
    assert errors[0]["message"].startswith("The server's storage is full, so a chart could not be saved.")
    assert "storage is full" in log[-1]["payload"]["reason"]
