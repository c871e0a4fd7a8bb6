"""Answers with nothing to store (a refusal, an empty answer) and answers cut off by max_tokens:
each is shown for what it is, and the next question still gets a valid conversation."""

from analyst.models import AnalysisSession, Message
from analyst.turns.agent import history
from tests.fakes.model_server import (
    anthropic_events,
    anthropic_text,
    openai_chunk,
    openai_chunks,
    openai_text,
)
from tests.integration.conftest import wait_for

START = {
    "type": "message_start",
    "message": {
        "id": "msg_01",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 20, "output_tokens": 1},
    },
}


def stop(reason: str) -> list[dict]:
    delta = {
        "type": "message_delta",
        "delta": {"stop_reason": reason, "stop_sequence": None},
        "usage": {"output_tokens": 3},
    }
    return [delta, {"type": "message_stop"}]


def ask(api, session: AnalysisSession, text: str) -> list[dict]:
    response = api.post(f"/api/sessions/{session.id}/messages", {"content": text}, "application/json")
    assert response.status_code == 202, response.content
    turn = response.json()["turn"]
    log = wait_for(session, "turn_done", "turn_failed")
    while not any(e["turn"] == turn and e["type"] in ("turn_done", "turn_failed") for e in log):
        log = wait_for(session, "turn_done", "turn_failed")
    return [e for e in log if e["turn"] == turn]


def errors(log: list[dict]) -> list[dict]:
    return [e["payload"] for e in log if e["type"] == "error"]


def test_an_anthropic_refusal_is_shown_and_the_next_question_is_valid(stack, api, session):
    # The refusal stream's shape: message_start, then straight to stop_reason "refusal".
    stack.script(anthropic_events([START, *stop("refusal")]), anthropic_text("Sure, here it is."))
    first = ask(api, session, "Something it refuses")
    assert first[-1]["type"] == "turn_done"
    assert errors(first) == [{"code": "model_declined", "message": "The model declined to answer."}]
    assert not [e for e in first if e["type"] == "assistant_message"]

    second = ask(api, session, "Something else")
    assert second[-1]["type"] == "turn_done"
    sent = stack.requests[1].json["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]
    assert sent[1]["content"] == [{"type": "text", "text": history.DECLINED}]


def test_an_openai_refusal_keeps_its_words(stack, api, alice):
    session = AnalysisSession.objects.create(owner=alice, model="openai/gpt-test")
    refusal = [
        openai_chunk({"role": "assistant", "content": None, "refusal": ""}),
        openai_chunk({"refusal": "I can\u2019t help with that."}),
        openai_chunk({}, "stop"),
    ]
    stack.script(openai_chunks(refusal), openai_text("Fine."))
    first = ask(api, session, "Refuse this")
    declined = "The model declined: I can\u2019t help with that."
    assert errors(first) == [{"code": "model_declined", "message": declined}]
    ask(api, session, "And this?")
    sent = stack.requests[1].json["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "user"]
    assert sent[2]["content"] == "I can\u2019t help with that."


def test_an_empty_answer_says_so_and_is_not_stored_empty(stack, api, session):
    stack.script(anthropic_events([START, *stop("end_turn")]), anthropic_text("Now I answer."))
    first = ask(api, session, "Hello?")
    assert errors(first) == [{"code": "empty_answer", "message": "The model returned nothing."}]
    stored = Message.objects.filter(session=session, role="assistant").get()
    assert stored.parts == [{"type": "text", "text": history.NO_ANSWER}]
    ask(api, session, "Hello again")
    assert stack.requests[1].json["messages"][1]["content"] == [{"type": "text", "text": history.NO_ANSWER}]


def test_a_session_stored_with_an_empty_answer_before_the_fix_goes_on(stack, api, session):
    # Sessions (and their forks) whose history already holds an empty assistant message.
    Message.objects.create(session=session, role="user", parts=[{"type": "text", "text": "Old question"}])
    Message.objects.create(session=session, role="assistant", parts=[{"type": "text", "text": ""}])
    stack.script(anthropic_text("Answered."))
    assert ask(api, session, "New question")[-1]["type"] == "turn_done"
    sent = stack.requests[0].json["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]
    assert sent[1]["content"] == [{"type": "text", "text": history.NO_ANSWER}]


def test_a_tool_call_cut_off_by_max_tokens_is_said_not_run(stack, api, session):
    tool = {"type": "tool_use", "id": "toolu_cut", "name": "run_python", "input": {}}
    cut = [
        START,
        {"type": "content_block_start", "index": 0, "content_block": tool},
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": '{"code": "print(\'half'},
        },
        {"type": "content_block_stop", "index": 0},
        *stop("max_tokens"),
    ]
    stack.script(anthropic_events(cut), anthropic_text("I will write less."))
    log = ask(api, session, "Write a long program")
    assert log[-1]["type"] == "turn_done"
    assert not [e for e in log if e["type"] in ("tool_call", "stdout", "cell_done")], "nothing ran"
    (problem,) = errors(log)
    assert problem["code"] == "bad_tool_call" and "cut off by the answer's length limit" in problem["message"]
    follow_up = stack.requests[1].json["messages"][-1]["content"]
    result = next(block for block in follow_up if block["type"] == "tool_result")
    assert result["tool_use_id"] == "toolu_cut" and result["is_error"] is True
    assert "Write shorter code" in result["content"][0]["text"]


def test_text_cut_off_by_max_tokens_is_kept_with_a_notice(stack, api, session):
    stack.script(anthropic_text("The first half of a long", stop_reason="max_tokens"))
    log = ask(api, session, "Explain at length")
    assert [e["payload"]["text"] for e in log if e["type"] == "assistant_message"] == [
        "The first half of a long"
    ]
    notices = [e["payload"]["text"] for e in log if e["type"] == "notice"]
    assert notices and "cut off at its length limit" in notices[0]
