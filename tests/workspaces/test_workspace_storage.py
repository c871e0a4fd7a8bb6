"""A team workspace's storage limit: what its sessions store, whoever made them (each stored file
once), shown to its members, set by its admins and owners (null: ANALYST_WORKSPACE_STORAGE);
past it an upload is refused saying so and a kernel's state is not saved, on top of each user's
own limit."""

from __future__ import annotations

import time

import pytest

from analyst.kernels import snapshots
from analyst.models import AuditEntry, DataFile, KernelSnapshot, Workspace
from analyst.sessions import forks, sessions
from sandboxes import SnapshotInfo
from tests.api.conftest import upload
from tests.workspaces.conftest import bearer_client, client_of, user

pytestmark = pytest.mark.django_db
ROWS = b"x\n" + b"1\n" * 299  # 600 bytes
REFUSAL = "only an admin or an owner of Team may change its storage limit: ask one of them"


@pytest.fixture(autouse=True)
def media(settings, tmp_path) -> None:
    settings.MEDIA_ROOT = tmp_path
    settings.ANALYST_WORKSPACE_STORAGE = 1000


def team_session(team: Workspace, owner: str):
    return sessions.do_create(owner=user(owner), model=None, title="Q3", workspace=team)


def patch(name: str, team: Workspace, body: dict):
    return client_of(name).patch(f"/api/workspaces/{team.id}", body, "application/json")


def test_every_member_sees_what_its_sessions_store_and_its_limit(team, mallory):
    hers, his = team_session(team, "eve"), team_session(team, "olga")
    assert upload(client_of("eve"), hers, "a.csv", ROWS).status_code == 202
    assert upload(client_of("olga"), his, "b.csv", b"y\n1\n").status_code == 202
    forks.do_fork(source=hers, owner=user("eve"))  # in her own workspace: not Team's
    branch = team_session(team, "eve")
    forks.copy_file(DataFile.objects.get(session=hers), branch)  # a copy names the same stored file
    for name in ["olga", "adam", "eve", "vic"]:
        shown = client_of(name).get(f"/api/workspaces/{team.id}").json()
        assert shown["storage"] == {"used": 604, "limit": 1000, "own_limit": None}
    assert bearer_client(mallory).get(f"/api/workspaces/{team.id}").status_code == 404
    personal = user("eve").personal_workspace
    assert client_of("eve").get(f"/api/workspaces/{personal.id}").json()["storage"] is None


@pytest.mark.parametrize("name", ["olga", "adam"])
def test_an_admin_or_owner_sets_it_and_sets_it_back_to_the_default(team, name):
    changed = patch(name, team, {"storage_limit": 5000})
    assert changed.status_code == 200, changed.content
    assert changed.json()["storage"] == {"used": 0, "limit": 5000, "own_limit": 5000}
    assert changed.json()["name"] == "Team"
    assert patch(name, team, {"storage_limit": 0}).json()["storage"]["limit"] == 0  # no limit
    back = patch(name, team, {"storage_limit": None})
    assert back.json()["storage"] == {"used": 0, "limit": 1000, "own_limit": None}
    entry = AuditEntry.objects.filter(action="workspace_storage").order_by("-id").first()
    assert (entry.workspace, entry.username, entry.detail) == (team, name, {"limit": None})


@pytest.mark.parametrize("name", ["eve", "vic"])
def test_an_editor_or_viewer_may_not_set_it(team, name):
    refused = patch(name, team, {"storage_limit": 10**12})
    assert refused.status_code == 403
    assert refused.json()["error"] == {"code": "forbidden", "message": REFUSAL}
    team.refresh_from_db()
    assert team.storage_limit is None


def test_a_stranger_finds_no_workspace(team, mallory):
    refused = bearer_client(mallory).patch(
        f"/api/workspaces/{team.id}", {"storage_limit": 1}, "application/json"
    )
    assert refused.status_code == 404
    team.refresh_from_db()
    assert team.storage_limit is None


def test_bad_figures_and_a_personal_workspace_are_refused_in_words(team):
    for value in [-1, 1.5, "10G", True, 1 << 61]:
        refused = patch("olga", team, {"storage_limit": value, "name": "Renamed"})
        assert refused.status_code == 400, value
        assert "'storage_limit' must be whole bytes" in refused.json()["error"]["message"]
    team.refresh_from_db()
    assert (team.name, team.storage_limit) == ("Team", None)  # nothing changed, the name neither
    personal = user("olga").personal_workspace
    refused = client_of("olga").patch(
        f"/api/workspaces/{personal.id}", {"storage_limit": 5}, "application/json"
    )
    assert refused.status_code == 409


def test_an_upload_past_the_workspaces_limit_is_refused_naming_it(team):
    hers, his = team_session(team, "eve"), team_session(team, "olga")
    assert upload(client_of("eve"), hers, "a.csv", ROWS).status_code == 202
    refused = upload(client_of("olga"), his, "b.csv", ROWS)  # olga's own storage is empty
    assert refused.status_code == 507
    assert refused.json()["error"] == {
        "code": "workspace_storage_limit",
        "message": "b.csv (600 bytes) would take the files, charts and saved kernels of Team past its"
        " 1000 bytes (they take 600 bytes); delete files or sessions there, or ask an admin of Team"
        " for more room.",
    }
    assert list(DataFile.objects.values_list("name", flat=True)) == ["a.csv"]
    mine = sessions.do_create(owner=user("olga"), model=None, title="mine", workspace=None)
    assert upload(client_of("olga"), mine, "b.csv", ROWS).status_code == 202  # her own: not Team's
    team.storage_limit = 2000
    team.save()
    assert upload(client_of("olga"), his, "b.csv", ROWS).status_code == 202


def test_each_users_own_limit_still_holds_in_a_workspace(team, settings):
    settings.ANALYST_WORKSPACE_STORAGE = 0  # no workspace limit
    settings.ANALYST_LIMIT_STORED_BYTES = 1000
    hers = team_session(team, "eve")
    assert upload(client_of("eve"), hers, "a.csv", ROWS).status_code == 202
    refused = upload(client_of("eve"), hers, "b.csv", ROWS)
    assert refused.status_code == 507
    assert refused.json()["error"]["code"] == "storage_limit"


def snapshot_of(session, size: int) -> SnapshotInfo:
    return SnapshotInfo(
        snapshot_id=f"snap-{time.time_ns()}",
        sandbox_id="sb",
        template="code-interpreter",
        metadata={},
        created_at=time.time(),
        size=size,
        file_count=1,
        skipped_files=[],
        contexts=[],
    )


def test_a_kernels_state_past_the_workspaces_limit_is_not_saved_and_the_previous_is_kept(team, settings):
    settings.ANALYST_SNAPSHOTS_KEPT = 1  # a new snapshot replaces the one before
    session = team_session(team, "eve")
    KernelSnapshot.objects.create(session=session, snapshot_id="earlier", size=700)
    other = team_session(team, "olga")
    KernelSnapshot.objects.create(session=other, snapshot_id="theirs", size=250)
    refusal = snapshots.over_limit(session, snapshot_of(session, 800))
    assert refusal is not None
    assert refusal.startswith(
        "The kernel's variables and files (800 bytes) were not saved: they would take the files,"
        " charts and saved kernels of Team past its 1000 bytes (they take 950 bytes). The state saved at"
    )
    # Within the limit, the snapshot it would replace counted as gone (250 + 100).
    assert snapshots.over_limit(session, snapshot_of(session, 100)) is None
