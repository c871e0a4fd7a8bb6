"""Through the whole stack: the instructions a user saved and the data dictionary of an upload
are in the system prompt the model receives, in the session and in a fork of it."""

from __future__ import annotations

import json
import time

from analyst.models import AnalysisSession
from tests.api.conftest import upload
from tests.fakes.model_server import anthropic_text
from tests.integration.conftest import wait_for

CSV = b"region,amount\nnorth,10.5\nsouth,32.25\n"
INSTRUCTIONS = "Our fiscal year starts on 1 April.\nReport amounts in EUR."
AMOUNT = "net revenue in EUR, before VAT"
ENDINGS = ["turn_done", "turn_failed", "turn_cancelled"]


def ask(stack, api, session: AnalysisSession, question: str) -> str:
    """The system prompt the model received for ``question``."""
    ended = session.events.filter(type__in=ENDINGS).count()  # a fork has its source's
    stack.script(anthropic_text("Noted."))
    asked = api.post(f"/api/sessions/{session.id}/messages", {"content": question}, "application/json")
    assert asked.status_code == 202, asked.content
    deadline = time.monotonic() + 90
    while session.events.filter(type__in=ENDINGS).count() <= ended:
        assert time.monotonic() < deadline, "the turn did not end"
        time.sleep(0.05)
    assert session.events.order_by("-seq").first().type == "turn_done"
    return stack.requests[-1].json["system"]


def test_the_model_receives_the_instructions_and_the_dictionary(stack, api, session):
    assert upload(api, session, "sales.csv", CSV).status_code == 202
    (added,) = [e for e in wait_for(session, "file_added", timeout=60) if e["type"] == "file_added"]
    saved = api.put("/api/instructions", json.dumps({"text": INSTRUCTIONS}), "application/json")
    assert saved.status_code == 200, saved.content
    dictionary = {"file": "Shop sales, one row per region.", "tables": {"": {"columns": {"amount": AMOUNT}}}}
    described = api.patch(
        f"/api/sessions/{session.id}/files/{added['payload']['id']}",
        json.dumps({"dictionary": dictionary}),
        "application/json",
    )
    assert described.status_code == 200, described.content

    system = ask(stack, api, session, "What do the amounts mean?")
    assert "amount (float64)" in system  # the schema, with what the user says of it below
    assert (
        "The user's data dictionary for data/sales.csv:\n- the file: Shop sales, one row per region.\n"
        f"- column 'amount': {AMOUNT}"
    ) in system
    assert f"follow them unless they ask otherwise here):\n{INSTRUCTIONS}" in system

    forked = api.post(f"/api/sessions/{session.id}/fork")
    assert forked.status_code == 201, forked.content
    fork = AnalysisSession.objects.get(id=forked.json()["id"])
    system = ask(stack, api, fork, "And in the fork?")
    assert f"- column 'amount': {AMOUNT}" in system
    assert INSTRUCTIONS in system
