"""A fork through someone else's share link names the sharer's stored files (nothing is copied) but
counts them in the forker's storage, once however many forks name them. One that would take the
forker past their storage limit is refused on the share page, saying why, and makes nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.files.base import ContentFile
from django.test import Client

from analyst.accounts import limits
from analyst.models import AnalysisSession, Artifact, DataFile, Event, KernelSnapshot, ShareLink, UserLimits
from analyst.realtime import events

pytestmark = pytest.mark.django_db

CSV = b"region,amount\n" + b"north,1\n" * 123  # 998 bytes
CHART = b"\x89PNG\r\n\x1a\n" + bytes(492)  # 500 bytes
STATE = 10 << 10


@pytest.fixture
def media(settings, tmp_path) -> Path:
    settings.MEDIA_ROOT = tmp_path
    return tmp_path


@pytest.fixture
def session(media) -> AnalysisSession:
    """Alice's session: a question, a chart, an upload and a saved kernel state of 10 KiB."""
    alice = get_user_model().objects.create_user("alice")
    session = AnalysisSession.objects.create(owner=alice, model="anthropic/claude-test", title="Sales")
    events.append(session.id, "user_message", {"text": "What sells?"})
    chart = Artifact(session=session, mime_type="image/png", size=len(CHART))
    chart.file.save("result.png", ContentFile(CHART))
    events.append(session.id, "result", {"artifacts": {"image/png": str(chart.id)}})
    upload = DataFile(session=session, name="q3.csv", path="data/q3.csv", size=len(CSV))
    upload.stored.save("q3.csv", ContentFile(CSV))
    KernelSnapshot.objects.create(session=session, snapshot_id="a" * 32, size=STATE)
    return session


@pytest.fixture
def bob():
    """Bob, with room for 2 KiB: alice's upload and chart, not her kernel's state."""
    bob = get_user_model().objects.create_user("bob")
    UserLimits.objects.create(user=bob, stored_bytes=2 << 10)
    return bob


def browser(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def stored_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file())


def test_forks_that_fit_name_the_sharers_files_and_count_them_once(session, bob, media):
    link = ShareLink.objects.create(session=session, allow_downloads=True)
    for _ in range(3):
        assert browser(bob).post(f"/s/{link.token}/fork").status_code == 302
    forks = AnalysisSession.objects.filter(owner=bob)
    assert forks.count() == 3
    # The old code copied the upload and the chart into each fork: 8 files, 4,494 bytes counted of 2 KiB.
    assert len(stored_files(media)) == 2
    assert limits.stored_bytes(bob) == len(CSV) + len(CHART)
    assert limits.stored_bytes(session.owner) == len(CSV) + len(CHART) + STATE
    for fork in forks:
        with fork.files.get().stored.open("rb") as content:
            assert content.read() == CSV


def test_a_fork_past_the_forkers_limit_is_refused_on_the_share_page_and_makes_nothing(session, bob, media):
    link = ShareLink.objects.create(session=session, allow_fork_state=True)
    client = browser(bob)
    response = client.post(f"/s/{link.token}/fork", follow=True)
    assert response.redirect_chain == [(f"/s/{link.token}/", 302)]
    page = response.content.decode()
    assert (
        "A fork of “Sales” (11.5 KiB) would take your files, charts and saved kernels past your"
        " 2 KiB (they take 0 bytes); delete files or sessions to make room."
    ) in page
    assert not AnalysisSession.objects.filter(owner=bob).exists()
    assert Event.objects.exclude(session=session).count() == 0
    assert KernelSnapshot.objects.count() == Artifact.objects.count() == DataFile.objects.count() == 1
    assert len(stored_files(media)) == 2
    assert limits.stored_bytes(bob) == 0
