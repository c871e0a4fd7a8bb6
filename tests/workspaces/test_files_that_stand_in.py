"""An analysis run again on another file (Run again, or a run with ``files``) takes that file
from any session its user may read: a colleague's upload in the team, not an upload of a workspace
the user has left. What the copies add counts against the user's storage and the team workspace's,
and past either limit nothing is made."""

from __future__ import annotations

import json

import pytest

from analyst.models import AnalysisSession, DataFile, Membership, Workspace
from analyst.realtime import events
from analyst.sessions import sessions
from tests.api.test_rerun import upload
from tests.workspaces.conftest import client_of, user

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def media(settings, tmp_path) -> None:
    settings.MEDIA_ROOT = tmp_path


@pytest.fixture
def analysis(team: Workspace) -> tuple[AnalysisSession, DataFile]:
    """Olga's team session, whose one cell reads its upload sales.csv."""
    made = sessions.do_create(owner=user("olga"), model=None, title="Q3", workspace=team)
    events.append(made.id, "cell", {"code": "import pandas as pd\nsales = pd.read_csv('data/sales.csv')"})
    return made, upload(made, "sales.csv", "region", "amount")


def another_session(owner: str, workspace: Workspace | None) -> AnalysisSession:
    return sessions.do_create(owner=user(owner), model=None, title="Other", workspace=workspace)


def rerun(name: str, analysis, using: DataFile):
    session, original = analysis
    body = json.dumps({"replace": original.id, "with": using.id})
    return client_of(name).post(f"/api/sessions/{session.id}/rerun", body, "application/json")


def run(name: str, analysis, using: DataFile):
    session, original = analysis
    body = json.dumps({"parameters": {}, "files": {original.path: using.id}})
    return client_of(name).post(f"/api/sessions/{session.id}/runs", body, "application/json")


@pytest.mark.parametrize("start", [rerun, run])
def test_a_colleagues_upload_in_the_team_may_stand_in(analysis, team, start):
    march = upload(another_session("adam", team), "march.csv", "region", "amount")
    response = start("eve", analysis, march)
    assert response.status_code in (201, 202), response.content
    made = AnalysisSession.objects.get(id=response.json().get("run_session") or response.json()["id"])
    assert (made.owner, made.workspace) == (user("eve"), team)
    assert made.files.get(path="data/sales.csv").stored.name == march.stored.name


@pytest.mark.parametrize("start", [rerun, run])
def test_an_upload_of_a_workspace_one_left_may_not(analysis, team, mallory, start):
    elsewhere = Workspace.objects.create(name="Elsewhere")
    Membership.objects.create(workspace=elsewhere, user=user("eve"), role="editor")
    kept_back = upload(another_session("eve", elsewhere), "march.csv", "region", "amount")  # eve's own
    Membership.objects.filter(workspace=elsewhere, user=user("eve")).delete()
    before = AnalysisSession.objects.count()
    response = start("eve", analysis, kept_back)
    assert response.status_code == 404, response.content
    assert AnalysisSession.objects.count() == before
    stranger_file = upload(another_session("mallory", None), "april.csv", "region", "amount")
    assert start("eve", analysis, stranger_file).status_code == 404


@pytest.mark.parametrize("start", [rerun, run])
def test_a_file_brought_from_elsewhere_counts_against_the_team_workspace(analysis, team, settings, start):
    settings.ANALYST_WORKSPACE_STORAGE = 10  # the team's sales.csv takes 4 bytes
    big = upload(another_session("eve", None), "march.csv", "region", "amount")  # eve's personal space
    big.size = 7
    big.save(update_fields=["size"])
    before = AnalysisSession.objects.count()
    response = start("eve", analysis, big)
    assert response.status_code == 429, response.content
    refusal = response.json()["error"]
    assert refusal["code"] == "workspace_storage_limit"
    past = "(7 bytes) would take the files, charts and saved kernels of Team past its 10 bytes"
    assert past in refusal["message"]
    assert AnalysisSession.objects.count() == before  # nothing made
    settings.ANALYST_WORKSPACE_STORAGE = 11
    assert start("eve", analysis, big).status_code in (201, 202)


@pytest.mark.parametrize("start", [rerun, run])
def test_copies_of_a_colleagues_files_count_against_ones_own_storage(analysis, team, settings, start):
    settings.ANALYST_LIMIT_STORED_BYTES = 3  # adam's march.csv (4 bytes) is not eve's
    march = upload(another_session("adam", team), "march.csv", "region", "amount")
    response = start("eve", analysis, march)
    assert response.status_code == 429, response.content
    assert response.json()["error"]["code"] == "storage_limit"
    settings.ANALYST_LIMIT_STORED_BYTES = 4
    assert start("eve", analysis, march).status_code in (201, 202)
