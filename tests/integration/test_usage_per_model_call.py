"""Every model answer of a real turn stores its token counts; the turn's end and the API sum them."""

from analyst.models import AnalysisSession, ModelCall
from tests.fakes.model_server import anthropic_text, anthropic_tool_call
from tests.integration.conftest import wait_for


def test_each_model_call_is_stored_and_summed(stack, api, alice):
    # A priced route (the worker's default table: $3 in, $15 out per million tokens).
    session = AnalysisSession.objects.create(owner=alice, model="anthropic/claude-sonnet-4-5")
    stack.script(
        anthropic_tool_call("run_python", {"code": "print(6 * 7)"}, input_tokens=120, output_tokens=30),
        anthropic_text("It is 42.", input_tokens=200, output_tokens=15),
    )
    response = api.post(f"/api/sessions/{session.id}/messages", {"content": "6 × 7?"}, "application/json")
    assert response.status_code == 202
    log = wait_for(session)
    assert log[-1]["type"] == "turn_done"

    calls = ModelCall.objects.filter(session=session).order_by("id")
    assert [(c.input_tokens, c.output_tokens) for c in calls] == [(120, 30), (200, 15)]
    assert {(c.turn_id, c.user_id, c.model) for c in calls} == {
        (response.json()["turn"], alice.id, "anthropic/claude-sonnet-4-5")
    }

    spent = {"input_tokens": 320, "output_tokens": 45, "cost_usd": 0.001635, "calls": 2}
    assert log[-1]["payload"]["usage"] == spent, "(320 × 3 + 45 × 15) / 1M"
    shown = api.get(f"/api/sessions/{session.id}").json()["usage"]
    assert shown == {**spent, "turns": [{"turn": response.json()["turn"], **spent}]}
