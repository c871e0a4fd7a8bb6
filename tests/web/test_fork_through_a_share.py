"""A fork through a share link keeps the link's boundary: the files only when the link lets viewers
download them, the kernel's variables only when it lets forks keep them (and then the forker is
told they are someone else's code); otherwise the transcript alone, saying so. One's own fork over
the API stays whole."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.core.files.base import ContentFile
from django.test import Client

from analyst.models import AnalysisSession, ApiToken, Artifact, DataFile, KernelSnapshot, ShareLink
from analyst.realtime import events
from analyst.sessions.forks import SOMEONE_ELSES_STATE

pytestmark = pytest.mark.django_db


@pytest.fixture
def alice():
    return get_user_model().objects.create_user("alice")


@pytest.fixture
def session(alice, settings, tmp_path) -> AnalysisSession:
    """Alice's session: a question, a chart, an upload and a saved kernel state."""
    settings.MEDIA_ROOT = tmp_path
    session = AnalysisSession.objects.create(owner=alice, model="anthropic/claude-test", title="Sales")
    events.append(session.id, "user_message", {"text": "What sells?"})
    chart = Artifact(session=session, mime_type="image/png", size=3)
    chart.file.save("chart.png", ContentFile(b"png"))
    events.append(session.id, "result", {"artifacts": {"image/png": str(chart.id)}})
    upload = DataFile(session=session, name="q3.csv", path="data/q3.csv", size=4)
    upload.stored.save("q3.csv", ContentFile(b"a\n1\n"))
    KernelSnapshot.objects.create(session=session, snapshot_id="a" * 32, size=10)
    return session


@pytest.fixture
def bob() -> Client:
    client = Client()
    client.force_login(get_user_model().objects.create_user("bob"))
    return client


def fork_through(bob: Client, link: ShareLink) -> tuple[AnalysisSession, list[dict]]:
    response = bob.post(f"/s/{link.token}/fork")
    fork = AnalysisSession.objects.get(owner__username="bob")
    assert response["Location"] == f"/sessions/{fork.id}/"
    return fork, bob.get(f"/api/sessions/{fork.id}/events").json()["events"]


def test_a_link_without_downloads_forks_the_transcript_only(session, bob):
    link = ShareLink.objects.create(session=session)
    assert "The fork gets the transcript only" in bob.get(f"/s/{link.token}/").content.decode()
    fork, log = fork_through(bob, link)
    assert not DataFile.objects.filter(session=fork).exists()
    assert not KernelSnapshot.objects.filter(session=fork).exists()
    assert [e["type"] for e in log] == ["user_message", "result", "forked"]
    forked = log[-1]["payload"]
    assert forked["kernel_state"] is False and forked["files"] is False
    assert "does not include the files or the kernel's variables" in forked["text"]
    chart_id = log[1]["payload"]["artifacts"]["image/png"]  # the transcript's charts come along
    assert Artifact.objects.get(id=chart_id).session == fork


def test_a_link_with_downloads_forks_the_files_but_not_the_variables(session, bob):
    link = ShareLink.objects.create(session=session, allow_downloads=True)
    fork, log = fork_through(bob, link)
    (copied,) = DataFile.objects.filter(session=fork)
    with copied.stored.open("rb") as content:
        assert copied.name == "q3.csv" and content.read() == b"a\n1\n"
    assert not KernelSnapshot.objects.filter(session=fork).exists()
    forked = log[-1]["payload"]
    assert forked["kernel_state"] is False and "does not include the kernel's variables" in forked["text"]
    assert "notice" not in [e["type"] for e in log]


def test_a_link_that_allows_the_state_forks_it_and_warns_that_it_is_someone_elses_code(session, bob):
    link = ShareLink.objects.create(session=session, allow_fork_state=True)
    assert "code from this session that runs in your kernel" in bob.get(f"/s/{link.token}/").content.decode()
    fork, log = fork_through(bob, link)
    assert DataFile.objects.filter(session=fork).count() == 1  # the snapshot holds them anyway
    assert KernelSnapshot.objects.get(session=fork).snapshot_id == "a" * 32
    assert [e["type"] for e in log] == ["user_message", "result", "forked", "notice"]
    assert log[-2]["payload"]["kernel_state"] is True
    assert log[-1]["payload"]["text"] == SOMEONE_ELSES_STATE
    assert "runs code from the person who shared it in your kernel" in SOMEONE_ELSES_STATE


def test_the_owner_chooses_it_on_the_share_form(session, alice):
    owner = Client()
    owner.force_login(alice)
    owner.post(f"/sessions/{session.id}/share", {"allow_downloads": "on"})
    owner.post(f"/sessions/{session.id}/share", {"allow_fork_state": "on"})
    links = ShareLink.objects.filter(session=session).order_by("id")
    assert [(link.allow_downloads, link.allow_fork_state) for link in links] == [(True, False), (False, True)]
    page = owner.get(f"/sessions/{session.id}/").content.decode()
    assert 'name="allow_fork_state"' in page and "forks keep the kernel's variables" in page


def test_forking_ones_own_session_over_the_api_is_unchanged(session, alice):
    _, secret = ApiToken.issue(alice)
    api = Client(HTTP_AUTHORIZATION=f"Bearer {secret}")
    response = api.post(f"/api/sessions/{session.id}/fork")
    fork = AnalysisSession.objects.get(id=response.json()["id"])
    assert DataFile.objects.filter(session=fork).count() == 1
    assert KernelSnapshot.objects.filter(session=fork).count() == 1
    log = api.get(f"/api/sessions/{fork.id}/events").json()["events"]
    assert [e["type"] for e in log] == ["user_message", "result", "forked"]  # no warning: it is hers
    assert log[-1]["payload"]["kernel_state"] is True
