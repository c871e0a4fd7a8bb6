"""A session remembers the host its sandbox was placed on, and every call the app makes for it
goes there (SANDBOXD_URL leads nowhere here); its snapshots are restored on the host that took
them while it answers, even one no longer in SANDBOXD_HOSTS (with local stores only it has them)."""

from __future__ import annotations

import pytest

from analyst.kernels import session_files, variables
from analyst.kernels import snapshots as kernel_snapshots
from analyst.kernels.session_kernel import SessionKernel
from analyst.models import AnalysisSession
from analyst.sessions import forks, sessions
from sandboxes import Sandbox, SnapshotNotFound
from tests.kernels.conftest import host_of


def listed(host, session) -> list[str]:
    found = Sandbox.list({"session": str(session.id)}, url=host.url, token=host.token)
    return [info.sandbox_id for info in found]


@pytest.mark.django_db
def test_every_call_for_a_session_goes_to_its_host(on_hosts, session):
    kernel = SessionKernel(session, emit=lambda type, payload: None)
    kernel.run("import pandas as pd\nframe = pd.DataFrame({'v': [1, 2]})\nopen('out.txt', 'w').write('hi')")
    stored = AnalysisSession.objects.get(id=session.id)
    home = host_of(on_hosts, stored.sandbox_host)
    (other,) = (host for host in on_hosts if host is not home)
    assert listed(home, session) == [stored.sandbox_id] and listed(other, session) == []

    assert "out.txt" in [entry["path"] for entry in session_files.listing(stored)]
    assert [v["name"] for v in variables.listing(stored)["variables"]] == ["frame"]
    snapshot = kernel_snapshots.take(kernel.session, kernel.sandbox(), None)
    assert snapshot.host == home.url
    assert Sandbox.get_snapshot(snapshot.snapshot_id, url=home.url, token=home.token).size == snapshot.size

    sessions.do_delete(stored)
    assert listed(home, session) == []
    with pytest.raises(SnapshotNotFound):
        Sandbox.get_snapshot(snapshot.snapshot_id, url=home.url, token=home.token)


@pytest.mark.django_db
def test_a_snapshot_comes_back_on_the_host_that_took_it(on_hosts, session, alice, settings):
    kernel = SessionKernel(session, emit=lambda type, payload: None)
    kernel.run("x = 41")
    snapshot = kernel_snapshots.take(kernel.session, kernel.sandbox(), None)
    home = host_of(on_hosts, snapshot.host)
    (other,) = (host for host in on_hosts if host is not home)
    settings.SANDBOXD_HOSTS = [other.url]  # new sessions go elsewhere now: home is being drained

    fork = AnalysisSession.objects.create(owner=alice, model=session.model)
    forks.copy_snapshot(snapshot, fork)
    emitted: list[tuple[str, dict]] = []
    forked = SessionKernel(fork, emit=lambda type, payload: emitted.append((type, payload)))
    assert forked.run("print(x + 1)").stdout == "42\n"
    assert [type for type, _ in emitted] == ["kernel_restored"]
    assert AnalysisSession.objects.get(id=fork.id).sandbox_host == home.url

    fresh = AnalysisSession.objects.create(owner=alice, model=session.model)
    SessionKernel(fresh, emit=lambda type, payload: None).sandbox()
    assert AnalysisSession.objects.get(id=fresh.id).sandbox_host == other.url
    for each in (session, fork, fresh):
        sessions.do_delete(AnalysisSession.objects.get(id=each.id))
