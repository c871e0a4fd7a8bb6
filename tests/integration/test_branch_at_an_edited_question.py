"""Edit a past question: a new session (a branch) holds the log up to just before it, the
uploads, and the kernel as it was then (the snapshot taken after the turn before); the edited
question is asked there. The original stays as it was and lists the branch at that question."""

from __future__ import annotations

import json

from django.core.files.uploadedfile import SimpleUploadedFile

from analyst.models import AnalysisSession
from tests.fakes.model_server import anthropic_text, anthropic_tool_call
from tests.integration.conftest import wait_for
from tests.integration.test_regenerate import ask, finished
from tests.printed import printed

LOOK = "import os\nprint('x' in dir(), 'y' in dir(), sorted(os.listdir('data')))"


def test_a_branch_at_question_two_of_three(stack, api, session):
    api.post(
        f"/api/sessions/{session.id}/files",
        {"file": SimpleUploadedFile("sales.csv", b"region,amount\nnorth,10\n", content_type="text/csv")},
    )
    wait_for(session, "file_added")
    stack.script(
        anthropic_tool_call("run_python", {"code": "x = 1"}, tool_id="toolu_01"),
        anthropic_text("x is set."),
        anthropic_tool_call("run_python", {"code": "y = 2"}, tool_id="toolu_02"),
        anthropic_text("y is set."),
        anthropic_text("Both are set."),
    )
    ask(api, session, "Set x")
    finished(session, 1)
    second = ask(api, session, "Set y")
    finished(session, 2)
    ask(api, session, "Are they set?")
    original = finished(session, 3)

    stack.script(
        anthropic_tool_call("run_python", {"code": LOOK}, tool_id="toolu_03"),
        anthropic_text("Only x is here."),
    )
    response = api.post(
        f"/api/sessions/{session.id}/turns/{second}/branch", {"content": "Set z instead"}, "application/json"
    )
    assert response.status_code == 201, response.content
    branch = AnalysisSession.objects.get(id=response.json()["id"])
    log = finished(branch, 1)

    question = next(e for e in original if e["turn"] == second and e["type"] == "user_message")
    before = [e for e in original if e["seq"] < question["seq"]]
    assert [(e["seq"], e["type"], e["payload"]) for e in log[: len(before)]] == [
        (e["seq"], e["type"], e["payload"]) for e in before
    ]
    forked = log[len(before)]
    assert forked["type"] == "forked" and forked["payload"]["from"] == str(session.id)
    assert forked["payload"]["branched_at"] == question["seq"] and forked["payload"]["kernel_state"] is True
    asked = log[len(before) + 1]
    assert asked["type"] == "user_message" and asked["payload"]["text"] == "Set z instead"
    # The kernel holds turn 1's variable, not turn 2's; the upload is there.
    assert printed(log) == "True False ['sales.csv']\n"
    assert any(e["type"] == "assistant_message" and e["payload"]["text"] == "Only x is here." for e in log)
    # The model saw question 1 and its answer, then the edited question: nothing of 2 or 3.
    seen = json.dumps(stack.requests[-2].json["messages"])
    assert "Set x" in seen and "x is set." in seen and "Set z instead" in seen
    assert "Set y" not in seen and "y is set." not in seen and "Both are set" not in seen

    # The original is as it was, and names the branch at question 2.
    assert session.events.count() == len(original)
    detail = api.get(f"/api/sessions/{session.id}").json()
    assert detail["branches"] == [{"id": str(branch.id), "title": branch.title, "at": question["seq"]}]
    assert branch.title == "Set z instead" and branch.files.count() == 1  # named after its question
