"""Notebook mode: a cell run directly takes the same path, and the model sees it next turn."""

from tests.fakes.model_server import anthropic_text
from tests.integration.conftest import wait_for
from tests.printed import printed


def test_a_cell_runs_and_the_model_sees_it(stack, api, session):
    response = api.post(
        f"/api/sessions/{session.id}/cells", {"code": "x = 5\nprint(x * 2)"}, "application/json"
    )
    assert response.status_code == 202
    log = wait_for(session)
    assert [e["type"] for e in log] == ["cell", "turn_started", "stdout", "cell_done", "saving", "turn_done"]
    assert log[0]["payload"] == {"code": "x = 5\nprint(x * 2)", "by": "alice"}
    assert log[2]["payload"]["text"] == "10\n"
    assert log[3]["payload"] == {"failed": False}
    assert stack.requests == [], "a cell needs no model"

    stack.script(anthropic_text("x is 5."))
    api.post(f"/api/sessions/{session.id}/messages", {"content": "What is x?"}, "application/json")
    wait_for(session, "assistant_message")
    seen = str(stack.requests[0].json["messages"])
    assert "x = 5" in seen and "10" in seen


def test_a_vanished_sandbox_without_a_snapshot_is_replaced_with_a_notice(stack, api, session, sandboxd):
    from analyst.models import KernelSnapshot
    from sandboxes import Sandbox

    api.post(f"/api/sessions/{session.id}/cells", {"code": "y = 1"}, "application/json")
    wait_for(session)
    session.refresh_from_db()
    KernelSnapshot.objects.filter(session=session).delete()  # as if snapshots were turned off
    old = Sandbox.connect(session.sandbox_id, url=sandboxd.url, token=sandboxd.token)
    old.kill()
    old.close()

    api.post(f"/api/sessions/{session.id}/cells", {"code": "print('fresh')"}, "application/json")
    log = wait_for(session, "turn_done")
    while [e["type"] for e in log].count("turn_done") < 2:
        log = wait_for(session, "turn_done")
    notices = [e["payload"]["text"] for e in log if e["type"] == "notice"]
    assert len(notices) == 1 and "fresh" in notices[0]
    assert printed(log) == "fresh\n"
