"""Every figure of an answer traced: the model reads each cell's label, cites it, and the stored
answer says which figures an output holds; one the model invents is never verified."""

from tests.fakes.model_server import anthropic_text, anthropic_tool_call
from tests.integration.conftest import wait_for

CODE = "revenue = 1234.4\nprint('revenue:', revenue)"


def test_a_real_figure_is_traced_and_an_invented_one_is_not(stack, api, session):
    stack.script(
        anthropic_tool_call("run_python", {"code": CODE}),
        anthropic_text("Revenue was $1,234 [[cell 1]], and churn was 17.5% [[cell 1]]."),
    )
    api.post(f"/api/sessions/{session.id}/messages", {"content": "Revenue?"}, "application/json")
    log = wait_for(session)

    call = next(e for e in log if e["type"] == "tool_call")
    assert call["payload"]["cell"] == 1, "the model's first cell is cell 1"
    printed = next(e for e in log if e["type"] == "stdout" and "1234.4" in e["payload"]["text"])
    answer = next(e for e in log if e["type"] == "assistant_message")
    assert answer["payload"]["citations"] == [
        {"text": "$1,234", "seq": printed["seq"], "verified": True},
        {"text": "17.5%", "verified": False},
    ]

    assert "[[cell 3]]" in stack.requests[0].json["system"], "the model is told the convention"
    result = next(b for b in stack.requests[1].json["messages"][-1]["content"] if b["type"] == "tool_result")
    assert result["content"][0]["text"] == "[cell 1]\nrevenue: 1234.4", "the model reads the label it cites"
