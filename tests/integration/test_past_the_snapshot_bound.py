"""A session keeps the snapshots of its last ANALYST_SNAPSHOTS_KEPT turns that ran code. Past that
bound, a question's earlier state is gone: branching there is refused unless asked to start from an
empty kernel (then nothing is replayed, and the branch says so), and Regenerate runs in the current
kernel, saying so."""

from __future__ import annotations

from analyst.models import AnalysisSession, KernelSnapshot
from tests.fakes.model_server import anthropic_text, anthropic_tool_call
from tests.integration.test_regenerate import ask, finished
from tests.printed import printed


def three_questions(stack, api, session) -> list[int]:
    """Three questions whose answers set x, y and z; the turns' ids."""
    asked = []
    for n, name in enumerate("xyz", start=1):
        stack.script(
            anthropic_tool_call("run_python", {"code": f"{name} = {n}"}, tool_id=f"toolu_0{n}"),
            anthropic_text(f"{name} is set."),
        )
        asked.append(ask(api, session, f"Set {name}"))
        finished(session, n)
    return asked


def test_past_the_bound_a_branch_needs_an_empty_kernel(stack, api, session, extra_worker, settings):
    settings.ANALYST_SNAPSHOTS_KEPT = 1
    extra_worker(ANALYST_SNAPSHOTS_KEPT="1")
    _, _, third = three_questions(stack, api, session)
    assert list(KernelSnapshot.objects.filter(session=session).values_list("turn_id", flat=True)) == [third]

    url = f"/api/sessions/{session.id}/turns/{third}/branch"
    refused = api.post(url, {"content": "Set w"}, "application/json")
    assert refused.status_code == 409, refused.content
    assert refused.json()["error"]["code"] == "kernel_state_lost"
    assert "its last turn that ran code" in refused.json()["error"]["message"]
    assert AnalysisSession.objects.count() == 1

    stack.script(
        anthropic_tool_call("run_python", {"code": "print('x' in dir(), 'y' in dir())"}, tool_id="toolu_04"),
        anthropic_text("Nothing is set here."),
    )
    made = api.post(url, {"content": "Set w", "empty_kernel": True}, "application/json")
    assert made.status_code == 201, made.content
    branch = AnalysisSession.objects.get(id=made.json()["id"])
    log = finished(branch, 1)
    forked = next(e["payload"] for e in log if e["type"] == "forked")
    assert forked["kernel_state"] is False and "empty kernel" in forked["text"]
    assert printed(log) == "False False\n"


def test_past_the_bound_regenerate_runs_in_the_current_kernel(stack, api, session, extra_worker):
    extra_worker(ANALYST_SNAPSHOTS_KEPT="1")
    _, _, third = three_questions(stack, api, session)
    stack.script(
        anthropic_tool_call("run_python", {"code": "print(z)"}, tool_id="toolu_04"),
        anthropic_text("z is still 3."),
    )
    assert api.post(f"/api/sessions/{session.id}/turns/{third}/regenerate").status_code == 202
    log = finished(session, 4)
    notices = [e["payload"] for e in log if e["type"] == "notice"]
    assert [n["code"] for n in notices] == ["state_lost"]
    assert "its last turn that ran code" in notices[0]["text"]
    assert printed(log) == "3\n"
