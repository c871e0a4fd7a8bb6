"""A result whose image/png is not an image (the kernel's code may display any text as one) is
kept as a text notice, and the turn goes on: the next output, a real chart, and the answer."""

from __future__ import annotations

import base64

from tests.fakes.model_server import anthropic_text, anthropic_tool_call
from tests.integration.conftest import wait_for
from tests.printed import printed

BAD_IMAGES = (
    "display({'image/png': 'not base64!'}, raw=True)\n"  # binascii.Error ended the turn before
    "display({'image/png': 'aGVsbG8=', 'text/plain': 'hello'}, raw=True)\n"  # base64, not a PNG
    "display({'image/jpeg': 42}, raw=True)\n"  # not even text
    "print('after')\n"
    "plt.plot([1, 3, 2]); plt.show()"
)
NOTICE = "[a {} part of this result was not a valid image, so it was left out]"


def test_a_malformed_image_becomes_a_notice_and_the_turn_goes_on(stack, api, session):
    stack.script(
        anthropic_tool_call("run_python", {"code": BAD_IMAGES}),
        anthropic_text("One chart came out."),
    )
    response = api.post(f"/api/sessions/{session.id}/messages", {"content": "Plot"}, "application/json")
    assert response.status_code == 202

    log = wait_for(session)
    assert log[-1]["type"] == "turn_done", log[-1]
    assert printed(log) == "after\n"
    results = [e["payload"] for e in log if e["type"] == "result"]
    assert [r["data"] for r in results[:3]] == [
        {"text/plain": NOTICE.format("image/png")},
        {"text/plain": "hello\n" + NOTICE.format("image/png")},
        {"text/plain": NOTICE.format("image/jpeg")},
    ]
    assert all(not r["artifacts"] for r in results[:3])
    chart = results[3]["artifacts"]["image/png"]
    served = api.get(chart["url"])
    assert served.status_code == 200
    assert b"".join(served.streaming_content).startswith(b"\x89PNG")

    # The model gets the real chart as an image and the bad ones as notices: a provider refuses
    # a whole request over an image it cannot decode.
    follow_up = stack.requests[1].json["messages"][-1]["content"]
    tool_result = next(block for block in follow_up if block["type"] == "tool_result")
    images = [block for block in tool_result["content"] if block["type"] == "image"]
    assert len(images) == 1
    assert base64.b64decode(images[0]["source"]["data"]).startswith(b"\x89PNG")
    texts = [block["text"] for block in tool_result["content"] if block["type"] == "text"]
    assert texts.count(NOTICE.format("image/png")) == 2
    answer = "".join(e["payload"]["text"] for e in log if e["type"] == "assistant_delta")
    assert answer == "One chart came out."
