"""A kernel that dies in a cell (out of memory, a crash) comes back from the session's latest
snapshot, not empty; the user is told what came back and what was lost, and so is the model."""

from __future__ import annotations

from typing import Any

from analyst.models import AnalysisSession
from tests.conftest import TEST_SETTINGS
from tests.fakes.model_server import anthropic_text, anthropic_tool_call
from tests.integration.conftest import wait_for
from tests.printed import printed_in_last_turn
from tests.sandboxd_process import own_sandboxd_process

CRASH = "import os\nos.kill(os.getpid(), 9)"
OUT_OF_MEMORY = "hog = np.ones(200_000_000)  # 1.6 GB, every page written"


def post(api: Any, session: AnalysisSession, endpoint: str, body: dict[str, str]) -> None:
    assert api.post(f"/api/sessions/{session.id}/{endpoint}", body, "application/json").status_code == 202


def turns_ended(session: AnalysisSession, count: int) -> list[dict[str, Any]]:
    log = wait_for(session)
    while sum(e["type"] in ("turn_done", "turn_failed", "turn_cancelled") for e in log) < count:
        log = wait_for(session)
    return log


def tool_results(request: Any) -> list[dict[str, Any]]:
    blocks = [b for m in request.json["messages"] for b in m["content"] if isinstance(b, dict)]
    return [b for b in blocks if b["type"] == "tool_result"]


def test_a_kernel_killed_in_the_models_cell_comes_back_and_the_model_is_told(stack, api, session):
    post(api, session, "cells", {"code": "x = 41"})
    turns_ended(session, 1)
    stack.script(anthropic_tool_call("run_python", {"code": CRASH}), anthropic_text("It crashed; x is back."))
    post(api, session, "messages", {"content": "Crash it"})
    log = turns_ended(session, 2)

    types = [e["type"] for e in log]
    after_call = types[types.index("tool_call") :]
    assert after_call[:4] == ["tool_call", "error", "cell_done", "kernel_restored"], after_call
    assert after_call[-1] == "turn_done"
    restored = next(e["payload"] for e in log if e["type"] == "kernel_restored")
    assert "died while running this cell (out of memory?)" in restored["text"]
    assert "were restored" in restored["text"] and "Lost:" in restored["text"]
    (result,) = tool_results(stack.requests[1])
    said = str(result["content"])
    assert result["is_error"] and "were restored" in said and "It was restarted" not in said
    assert result["content"][0]["text"].startswith(
        "[cell 1]\nError:\nKernelDied: The kernel died while running this cell"
    )

    post(api, session, "cells", {"code": "print(x + 1)"})
    log = turns_ended(session, 3)
    assert printed_in_last_turn(log) == "42\n"


def test_a_users_cell_that_kills_the_kernel_restores_it_and_the_next_question_says_so(stack, api, session):
    post(api, session, "cells", {"code": "x = 41"})
    turns_ended(session, 1)
    post(api, session, "cells", {"code": CRASH})
    log = turns_ended(session, 2)
    assert [e["type"] for e in log][-4:] == ["cell_done", "kernel_restored", "saving", "turn_done"]

    stack.script(anthropic_text("Noted."))
    post(api, session, "messages", {"content": "What happened?"})
    turns_ended(session, 3)
    seen = str(stack.requests[0].json["messages"])
    assert "os.kill" in seen and "were restored" in seen


def test_with_no_snapshot_the_kernel_continues_empty_and_says_so(stack, api, session):
    post(api, session, "cells", {"code": CRASH})
    log = turns_ended(session, 1)
    assert not [e for e in log if e["type"] == "kernel_restored"]
    (notice,) = [e["payload"]["text"] for e in log if e["type"] == "notice"]
    assert "died while running this cell" in notice and "continues empty" in notice


def test_out_of_memory_restores_the_snapshot(stack, api, session, extra_worker):
    settings = {**TEST_SETTINGS, "SANDBOXD_MEMORY_LIMIT": "640M"}
    with own_sandboxd_process(settings, prefix="sandboxd-oom-") as small:
        extra_worker(SANDBOXD_URL=small.url, SANDBOXD_TOKEN=small.token)
        post(api, session, "cells", {"code": "x = 41"})
        turns_ended(session, 1)
        post(api, session, "cells", {"code": OUT_OF_MEMORY})
        log = turns_ended(session, 2)
        restored = [e["payload"]["text"] for e in log if e["type"] == "kernel_restored"]
        assert len(restored) == 1 and "out of memory?" in restored[0], [e["type"] for e in log]
        post(api, session, "cells", {"code": "print(x + 1)"})
        log = turns_ended(session, 3)
        assert printed_in_last_turn(log) == "42\n"
