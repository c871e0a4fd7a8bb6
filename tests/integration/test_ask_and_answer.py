"""Ask a question: the model calls run_python, output and a chart stream back, the answer follows."""

import base64

from tests.fakes.model_server import anthropic_text, anthropic_tool_call
from tests.integration.conftest import wait_for
from tests.printed import printed

CHART_CODE = "print('rows:', 3)\nplt.plot([1, 3, 2])\nplt.show()"


def test_tool_call_stdout_chart_and_answer_in_order(stack, api, session):
    stack.script(
        anthropic_tool_call("run_python", {"code": CHART_CODE}, text_before="Let me look."),
        anthropic_text("The line rises, then falls."),
    )
    response = api.post(f"/api/sessions/{session.id}/messages", {"content": "Plot it"}, "application/json")
    assert response.status_code == 202

    log = wait_for(session)
    types = [e["type"] for e in log]
    assert [e["seq"] for e in log] == list(range(1, len(log) + 1)), "seqs are consecutive from 1"
    assert types[0:2] == ["user_message", "turn_started"]
    assert types[-1] == "turn_done"
    ordered = [t for t in types if t in ("tool_call", "stdout", "result", "cell_done", "assistant_message")]
    ordered = [t for i, t in enumerate(ordered) if not (t == "stdout" and ordered[i - 1] == "stdout")]
    assert ordered == ["assistant_message", "tool_call", "stdout", "result", "cell_done", "assistant_message"]
    by_type = {e["type"]: e for e in log}
    assert by_type["cell_done"]["payload"] == {"failed": False, "tool_call_id": "toolu_01"}
    assert by_type["tool_call"]["payload"]["code"] == CHART_CODE
    assert printed(log) == "rows: 3\n"
    answer = "".join(e["payload"]["text"] for e in log if e["type"] == "assistant_delta")
    assert answer == "Let me look.The line rises, then falls."

    png = by_type["result"]["payload"]["artifacts"]["image/png"]
    image = api.get(png["url"])
    assert image.status_code == 200
    assert b"".join(image.streaming_content).startswith(b"\x89PNG")

    first = stack.requests[0].json["messages"]
    assert first[0]["role"] == "user"
    assert first[0]["content"][0]["text"] == "Plot it", "the model sees the question"

    follow_up = stack.requests[1].json["messages"][-1]["content"]
    result = next(block for block in follow_up if block["type"] == "tool_result")
    kinds = [block["type"] for block in result["content"]]
    assert "image" in kinds, "the chart goes back to a multimodal model"
    image_block = next(block for block in result["content"] if block["type"] == "image")
    assert base64.b64decode(image_block["source"]["data"]).startswith(b"\x89PNG")


def test_a_second_question_reuses_the_kernel(stack, api, session):
    stack.script(
        anthropic_tool_call("run_python", {"code": "total = 40 + 2"}),
        anthropic_text("Stored."),
        anthropic_tool_call("run_python", {"code": "print(total)"}, tool_id="toolu_02"),
        anthropic_text("It is 42."),
    )
    api.post(f"/api/sessions/{session.id}/messages", {"content": "Compute"}, "application/json")
    wait_for(session)
    api.post(f"/api/sessions/{session.id}/messages", {"content": "Show it"}, "application/json")
    deadline_log = wait_for(session, "turn_done")
    while sum(e["type"] == "turn_done" for e in deadline_log) < 2:
        deadline_log = wait_for(session, "turn_done")
    assert printed(deadline_log) == "42\n"


def test_the_traceback_goes_back_to_the_model(stack, api, session):
    stack.script(
        anthropic_tool_call("run_python", {"code": "1 / 0"}),
        anthropic_text("Division by zero; fixed."),
    )
    api.post(f"/api/sessions/{session.id}/messages", {"content": "Divide"}, "application/json")
    log = wait_for(session)
    assert any(e["type"] == "error" and e["payload"]["name"] == "ZeroDivisionError" for e in log)
    result = next(b for b in stack.requests[1].json["messages"][-1]["content"] if b["type"] == "tool_result")
    assert result["is_error"] is True
    assert "ZeroDivisionError" in result["content"][0]["text"]
