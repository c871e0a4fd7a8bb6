"""A session's uploads outlive its sandbox: a fresh one gets them again (a zip unpacked again),
and one restored from a snapshot taken before a delete does not bring the deleted file back."""

from __future__ import annotations

import pytest

from analyst.models import KernelSnapshot
from sandboxes import Sandbox
from tests import made_files
from tests.api.conftest import upload
from tests.integration.test_resume_and_fork import run_cell
from tests.integration.test_uploads_of_every_shape import added
from tests.printed import printed_in_last_turn

LIST_DATA = (
    "import os\n"
    "print(sorted(os.path.relpath(os.path.join(d, f), 'data') for d, _, fs in os.walk('data') for f in fs))"
)


def kill_sandbox(session) -> None:
    session.refresh_from_db()
    with Sandbox.connect(session.sandbox_id):
        pass  # leaving it kills it


def files_in_data(api, session) -> str:
    return printed_in_last_turn(run_cell(api, session, LIST_DATA)).strip()


def test_a_fresh_sandbox_gets_the_uploads_again_with_a_zip_unpacked(stack, api, session):
    archive = made_files.zipped({"north.csv": made_files.SALES_CSV, "south.csv": made_files.SALES_CSV})
    assert upload(api, session, "exports.zip", archive).status_code == 202
    assert upload(api, session, "ventes.csv", made_files.FRENCH_CSV).status_code == 202
    added(session, "exports.zip"), added(session, "ventes.csv")
    assert not KernelSnapshot.objects.filter(session=session).exists()  # no cell ran: nothing saved
    kill_sandbox(session)
    listed = files_in_data(api, session)
    assert listed == "['exports.zip', 'exports/north.csv', 'exports/south.csv', 'ventes.csv']"


@pytest.mark.slow
def test_a_file_deleted_after_the_snapshot_stays_deleted_when_it_is_restored(stack, api, session):
    assert upload(api, session, "keep.csv", made_files.SALES_CSV).status_code == 202
    doomed = upload(api, session, "doomed.csv", made_files.SALES_CSV).json()["file"]
    added(session, "keep.csv"), added(session, "doomed.csv")
    run_cell(api, session, "kept = 41")
    assert files_in_data(api, session) == "['doomed.csv', 'keep.csv']"  # a turn that ran code: saved
    assert KernelSnapshot.objects.filter(session=session).exists()
    # One uploaded after the snapshot and deleted before the restore was never in it.
    late = upload(api, session, "late.csv", made_files.SALES_CSV).json()["file"]
    added(session, "late.csv")
    for gone in (doomed, late):
        assert api.delete(f"/api/sessions/{session.id}/files/{gone['id']}").status_code == 200
    kill_sandbox(session)
    assert files_in_data(api, session) == "['keep.csv']"
    assert session.events.filter(type="kernel_restored").exists()
    assert printed_in_last_turn(run_cell(api, session, "print(kept + 1)")) == "42\n"  # restored, not fresh
