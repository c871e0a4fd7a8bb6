"""Provider trouble ends in a clear error event the user sees; the session stays usable."""

import pytest

from tests.fakes.model_server import anthropic_error, anthropic_text, anthropic_tool_call, raw
from tests.integration.conftest import wait_for


def ask(api, session, text="Go"):
    assert (
        api.post(f"/api/sessions/{session.id}/messages", {"content": text}, "application/json").status_code
        == 202
    )


def test_429_then_200_is_retried_after_retry_after(stack, api, session):
    stack.script(
        anthropic_error(429, "rate_limit_error", "Slow down", {"retry-after": "1"}), anthropic_text("Fine.")
    )
    ask(api, session)
    log = wait_for(session)
    assert log[-1]["type"] == "turn_done"
    assert "".join(e["payload"]["text"] for e in log if e["type"] == "assistant_delta") == "Fine."
    assert len(stack.requests) == 2


@pytest.mark.parametrize(
    ("reply", "code"),
    [
        (anthropic_error(401, "authentication_error", "invalid x-api-key"), "authentication_failed"),
        (anthropic_error(404, "not_found_error", "model: claude-nope"), "unknown_model"),
        (raw(200, b"event: message_start\ndata: {not json\n\n"), "malformed_stream"),
    ],
    ids=["bad key", "unknown model", "malformed stream"],
)
def test_provider_errors_end_the_turn_clearly(stack, api, session, reply, code):
    stack.script(reply)
    ask(api, session)
    log = wait_for(session)
    assert log[-1]["type"] == "turn_failed"
    errors = [e["payload"] for e in log if e["type"] == "error"]
    assert errors and errors[0]["code"] == code and errors[0]["message"]

    stack.script(anthropic_text("Recovered."))
    ask(api, session, "Again")
    log = wait_for(session, "turn_done")
    assert log[-1]["type"] == "turn_done"


def test_a_missing_key_says_which_variable(stack, api, session, extra_worker):
    extra_worker(ANTHROPIC_API_KEY="")
    ask(api, session)
    log = wait_for(session)
    assert log[-1]["type"] == "turn_failed"
    [error] = [e["payload"] for e in log if e["type"] == "error"]
    assert error["code"] == "missing_api_key"
    assert "ANTHROPIC_API_KEY" in error["message"]
    assert stack.requests == [], "no request without a key"


@pytest.mark.parametrize(
    ("name", "arguments", "expected"),
    [
        ("run_python", "{not json", "invalid arguments"),
        ("delete_everything", {"code": "1"}, "does not exist"),
    ],
    ids=["invalid JSON arguments", "unknown tool"],
)
def test_bad_tool_calls_are_shown_and_reported_back(stack, api, session, name, arguments, expected):
    stack.script(anthropic_tool_call(name, arguments), anthropic_text("Sorry, let me fix that."))
    ask(api, session)
    log = wait_for(session)
    assert log[-1]["type"] == "turn_done"
    [error] = [e["payload"] for e in log if e["type"] == "error"]
    assert error["code"] == "bad_tool_call" and expected in error["message"]
    assert "tool_call" not in [e["type"] for e in log], "nothing ran"
    result = next(b for b in stack.requests[1].json["messages"][-1]["content"] if b["type"] == "tool_result")
    assert result["is_error"] is True and expected in result["content"][0]["text"]
