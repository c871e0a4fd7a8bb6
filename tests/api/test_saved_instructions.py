"""A user's saved instructions through the API: read and replaced by their owner alone (by token
or by the browser's login, with CSRF), checked, and given to the model in every session of theirs."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from analyst.models import AnalysisSession, SavedInstructions
from analyst.trust.instructions import MAX_LENGTH
from analyst.turns.agent.prompt import system_prompt

URL = "/api/instructions"


def put(client: Client, body: object) -> object:
    return client.put(URL, body if isinstance(body, str) else json.dumps(body), "application/json")


def test_none_saved_reads_as_empty(api):
    response = api.get(URL)
    assert (response.status_code, response.json()) == (
        200,
        {"text": "", "updated_at": None, "max_length": MAX_LENGTH},
    )


def test_saved_instructions_are_read_back_and_replaced(api, alice):
    response = put(api, {"text": "  Fiscal year starts in April.\nAmounts in EUR.  "})
    assert response.status_code == 200, response.content
    saved = response.json()
    assert saved["text"] == "Fiscal year starts in April.\nAmounts in EUR."
    assert saved["updated_at"] == SavedInstructions.objects.get(user=alice).updated_at.isoformat()
    assert api.get(URL).json() == saved

    assert put(api, {"text": "Always show a chart."}).json()["text"] == "Always show a chart."
    assert put(api, {"text": ""}).json()["text"] == ""
    assert SavedInstructions.objects.filter(user=alice).count() == 1


def test_each_user_has_their_own(api, stranger_api, mallory):
    put(api, {"text": "Amounts in EUR."})
    assert stranger_api.get(URL).json()["text"] == ""
    put(stranger_api, {"text": "Amounts in USD."})
    assert api.get(URL).json()["text"] == "Amounts in EUR."
    assert SavedInstructions.objects.get(user=mallory).text == "Amounts in USD."


@pytest.mark.parametrize(
    ("body", "code", "message"),
    [
        ("not json", "invalid_json", "the request body is not valid JSON"),
        ([], "invalid_json", "the request body must be a JSON object"),
        ({}, "invalid_request", 'send the instructions as {"text": "…"}'),
        (
            {"text": None},
            "invalid_instructions",
            "'text' must be a string (an empty one clears the instructions)",
        ),
        (
            {"text": ["a"]},
            "invalid_instructions",
            "'text' must be a string (an empty one clears the instructions)",
        ),
        (
            {"text": "x" * (MAX_LENGTH + 1)},
            "invalid_instructions",
            f"the instructions are {MAX_LENGTH + 1:,} characters long; at most {MAX_LENGTH:,} are allowed",
        ),
    ],
)
def test_bad_bodies_are_refused_and_change_nothing(api, alice, body, code, message):
    put(api, {"text": "Amounts in EUR."})
    response = put(api, body)
    assert (response.status_code, response.json()) == (400, {"error": {"code": code, "message": message}})
    assert SavedInstructions.objects.get(user=alice).text == "Amounts in EUR."


def test_the_longest_allowed_is_kept(api):
    assert put(api, {"text": "x" * MAX_LENGTH}).status_code == 200


def test_without_a_login_or_token_it_is_401(db):
    response = Client().get(URL)
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "unauthorized"
    assert put(Client(), {"text": "x"}).status_code == 401
    assert put(Client(HTTP_AUTHORIZATION="Bearer wrong"), {"text": "x"}).status_code == 401
    assert not SavedInstructions.objects.exists()


def test_the_browser_needs_its_csrf_token(alice):
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(alice)
    assert browser.get(URL).status_code == 200
    refused = put(browser, {"text": "x"})
    assert (refused.status_code, refused.json()["error"]["code"]) == (403, "csrf_failed")
    browser.get("/sessions/")  # a page sets the CSRF cookie, as the app's pages do
    token = browser.cookies["csrftoken"].value
    saved = browser.put(URL, json.dumps({"text": "x"}), "application/json", HTTP_X_CSRFTOKEN=token)
    assert saved.status_code == 200
    assert SavedInstructions.objects.get(user=alice).text == "x"


def test_other_methods_are_refused(api):
    for response in (api.post(URL, "{}", "application/json"), api.delete(URL)):
        assert response.status_code == 405
        assert response["Allow"] == "GET, PUT"


def test_the_model_is_given_them_in_every_session_of_the_owner(api, alice, mallory, session):
    assert "standing instructions" not in system_prompt(session)
    put(api, {"text": "Fiscal year starts in April."})
    other = AnalysisSession.objects.create(owner=alice, model="anthropic/claude-test")
    strangers = AnalysisSession.objects.create(owner=mallory, model="anthropic/claude-test")
    for own in (session, other):
        assert (
            "The user's standing instructions (saved in their settings, for every session; follow them"
            " unless they ask otherwise here):\nFiscal year starts in April."
        ) in system_prompt(own)
    assert "Fiscal year" not in system_prompt(strangers)
    put(api, {"text": ""})
    assert "standing instructions" not in system_prompt(session)
