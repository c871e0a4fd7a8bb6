"""A session's owner attaches their connections to it and detaches them; a session made from it by
the same owner (a fork, a run) keeps them, one made by someone else (a fork through a share
link) gets none; and a session with no connections asks nothing of its sandbox for them."""

from __future__ import annotations

import httpx
import pytest

from analyst.connections import attachments, egress
from analyst.models import AnalysisSession, KernelSnapshot, SessionConnection
from analyst.runs import runs
from analyst.sessions import forks
from analyst.trust import approvals
from sandboxes import Sandbox, SandboxError
from tests.connections.conftest import make_connection, post_json
from tests.runs.test_schedules import analysis

__all__ = ["analysis"]  # the fixture, as the runs' tests have it


@pytest.fixture
def warehouse(alice):
    return make_connection(alice)


def test_attach_list_and_detach(api, session, warehouse, alice, no_sandboxd):
    base = f"/api/sessions/{session.id}/connections"
    attached = post_json(api, base, {"name": "warehouse"})
    assert attached.status_code == 201, attached.content
    assert attached.json()["connection"]["id"] == warehouse.id
    assert attached.json()["connection"]["sessions"] == 1
    # No sandbox runs for it: its schema was to be read from a throwaway one, which could not start.
    assert attached.json()["connection"]["checked"]["category"] == "unavailable"

    again = post_json(api, base, {"name": "warehouse"})
    assert again.status_code == 200
    assert SessionConnection.objects.count() == 1

    other = make_connection(alice, name="crm", kind="http", url="https://crm.example/api")
    assert post_json(api, base, {"name": "crm"}).status_code == 201
    listed = api.get(base).json()["connections"]
    assert [c["name"] for c in listed] == ["warehouse", "crm"]  # in the order attached
    assert [c.name for c in attachments.attached(session)] == ["warehouse", "crm"]

    assert api.delete(f"{base}/{warehouse.id}").status_code == 204
    assert api.delete(f"{base}/{warehouse.id}").status_code == 404
    assert [c["id"] for c in api.get(base).json()["connections"]] == [other.id]
    assert api.get(f"/api/connections/{warehouse.id}").json()["connection"]["sessions"] == 0


def test_unknown_names_and_strangers_are_not_found(api, stranger_api, session, warehouse, mallory):
    base = f"/api/sessions/{session.id}/connections"
    unknown = post_json(api, base, {"name": "nope"})
    assert unknown.status_code == 404
    assert unknown.json()["error"]["message"] == "you have no connection named 'nope' (yours: warehouse)"

    theirs = AnalysisSession.objects.create(owner=mallory, model="anthropic/claude-test")
    make_connection(mallory, name="theirs")
    # mallory cannot attach alice's connection, nor reach alice's session
    assert (
        post_json(stranger_api, f"/api/sessions/{theirs.id}/connections", {"name": "warehouse"}).status_code
        == 404
    )
    assert post_json(stranger_api, base, {"name": "theirs"}).status_code == 404
    assert stranger_api.get(base).status_code == 404
    assert stranger_api.delete(f"{base}/{warehouse.id}").status_code == 404
    assert not SessionConnection.objects.exists()


def test_a_fork_of_ones_own_keeps_the_connections_and_someone_elses_gets_none(
    session, warehouse, alice, mallory
):
    attachments.do_attach(session=session, connection=warehouse)

    own = forks.do_fork(source=session, owner=alice)
    assert [c.name for c in attachments.attached(own)] == ["warehouse"]

    theirs = forks.do_fork(source=session, owner=mallory, files=True, kernel_state=False)
    assert attachments.attached(theirs) == []
    assert attachments.secrets_of(theirs) == {}


def test_someone_elses_fork_of_a_session_with_connections_gets_no_kernel_variables(
    session, warehouse, alice, mallory
):
    """They may hold a secret the code copied into one; the fork could not hide it."""
    KernelSnapshot.objects.create(session=session, snapshot_id="snap-1", host="", size=1)
    attachments.do_attach(session=session, connection=warehouse)

    assert forks.do_fork(source=session, owner=alice).snapshots.count() == 1  # one's own: kept
    theirs = forks.do_fork(source=session, owner=mallory)
    assert not theirs.snapshots.exists()
    (told,) = theirs.events.filter(type="forked")
    assert told.payload["kernel_state"] is False and "stay with its owner" in told.payload["text"]

    attachments.do_detach(session=session, connection_id=warehouse.id)
    assert forks.do_fork(source=session, owner=mallory).snapshots.count() == 1  # none: as before


def test_a_run_of_an_analysis_keeps_its_connections(analysis, alice):
    attachments.do_attach(session=analysis, connection=make_connection(alice))
    run = runs.do_start(source=analysis, user=alice, values={"top": 4})
    assert [c.name for c in attachments.attached(run.session)] == ["warehouse"]


def strict_sandbox(requests: list[httpx.Request]) -> Sandbox:
    """A Sandbox whose every request after connecting is recorded and refused."""

    def answer(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/sandboxes/sb1/connect":
            return httpx.Response(200, json={
                "id": "sb1", "template": "code-interpreter", "metadata": {}, "ttl_seconds": 60,
                "expires_in": 60, "default_context_id": "c1", "contexts": [{"id": "c1"}],
            })  # fmt: skip
        requests.append(request)
        return httpx.Response(500, json={"error": {"code": "internal_error", "message": "unexpected"}})

    client = httpx.Client(base_url="http://sandboxd.test", transport=httpx.MockTransport(answer))
    return Sandbox.connect("sb1", url="http://sandboxd.test", http_client=client)


def test_a_session_without_connections_or_secrets_asks_nothing_of_its_sandbox(session, warehouse):
    requests: list[httpx.Request] = []
    sandbox = strict_sandbox(requests)
    assert egress.apply(session, sandbox) is None
    assert requests == []

    attachments.do_attach(session=session, connection=warehouse)  # now it has one: it asks
    with pytest.raises(SandboxError):  # the strict sandbox refuses all
        egress.apply(session, sandbox)
    assert requests


def test_in_writes_mode_a_cell_on_a_writable_connection_waits_and_one_on_a_read_only_runs(
    session, warehouse, alice
):
    """The "writes" approval mode reads the session's connections: SQL on a read-only one only
    reads; a cell that uses one that may write waits for its owner."""
    archive = make_connection(alice, name="archive", read_only=False)
    AnalysisSession.objects.filter(id=session.id).update(approve_cells="writes")
    attachments.do_attach(session=session, connection=warehouse)
    assert approvals.reasons_to_wait(session.id, "%%sql warehouse\nselect * from orders") is None

    attachments.do_attach(session=session, connection=archive)
    assert approvals.reasons_to_wait(session.id, "%%sql archive\ndelete from orders") == [
        "line 1: %%sql on archive, which may write"
    ]
    assert approvals.reasons_to_wait(session.id, "sql('warehouse', 'select 1')") is None
