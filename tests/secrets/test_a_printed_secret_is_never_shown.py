"""A session's secret, printed by a cell (the model guessed it, or read it from the environment),
shows as «secret:API_TOKEN» everywhere it could leave: the event log, every request to the model,
the exports, the share link's events and page, a file the cell wrote (downloaded by the owner and
through the link) and the variable inspector. The real worker, sandboxd and kernel run it all."""

from __future__ import annotations

import base64
import json
from urllib.parse import quote

import pytest
from django.test import Client

from analyst.models import ShareLink
from analyst.realtime import events
from tests.fakes.model_server import anthropic_text, anthropic_tool_call
from tests.integration.conftest import wait_for
from tests.integration.test_cell_approval import approving, decide
from tests.integration.test_resume_and_fork import run_cell
from tests.printed import printed

VALUE = "tok/Zx81+qPl0=9Lm3Vb"
SHOWN = "«secret:API_TOKEN»"
FORMS = [VALUE, quote(VALUE, safe=""), base64.b64encode(VALUE.encode()).decode()]
CELL = f"""\
import base64, sys, time, urllib.parse
token = '{VALUE}'
print('the token is', token)
sys.stdout.write(token[:7]); sys.stdout.flush(); time.sleep(0.5); print(token[7:])
print('quoted', urllib.parse.quote(token, safe=''))
print('encoded', base64.b64encode(token.encode()).decode())
open('token.txt', 'w').write('token=' + token + '\\n')
from IPython.display import HTML, display
display(HTML('<p>' + token + '</p>' + '<br>' * 9000))  # past the inline limit: an artifact
frame = pd.DataFrame({{'token': [token], 'n': [1]}})
frame
"""
FAILING = "raise ValueError('bad token ' + token)"


def leaked(text: str) -> list[str]:
    """The forms of the secret in ``text``, as sent and as JSON escapes it."""
    return [form for form in FORMS if form in text or json.dumps(form)[1:-1] in text]


@pytest.fixture
def with_secret(api, session):
    response = api.post(
        f"/api/sessions/{session.id}/secrets", {"name": "API_TOKEN", "value": VALUE}, "application/json"
    )
    assert response.status_code == 201, response.content
    return session


@pytest.fixture
def printed_it(stack, api, with_secret):
    """A model turn whose cells print the secret every way, write it to a file, show it in a
    table and raise it in an error; then the user's own cell prints it."""
    session = with_secret
    stack.script(
        anthropic_tool_call("run_python", {"code": CELL}, tool_id="toolu_01"),
        anthropic_tool_call("run_python", {"code": FAILING}, tool_id="toolu_02"),
        anthropic_text(f"The token is {VALUE}."),  # the model may write it too
    )
    asked = api.post(
        f"/api/sessions/{session.id}/messages", {"content": "Show the token"}, "application/json"
    )
    assert asked.status_code == 202
    wait_for(session)
    return run_cell(api, session, f"print('{VALUE}' == token, token)")


def test_the_event_log_and_the_model_see_only_the_name(stack, printed_it, with_secret):
    log = printed_it
    assert leaked(json.dumps(log, ensure_ascii=False)) == [], "no event holds the secret"
    shown = printed(log)
    assert f"the token is {SHOWN}\n" in shown
    assert f"\n{SHOWN}\n" in shown, "printed in two pieces, still found"
    assert f"quoted {SHOWN}\n" in shown and f"encoded {SHOWN}\n" in shown
    assert f"True {SHOWN}\n" in shown, "the user's own cell too"
    kinds = {e["type"]: e["payload"] for e in reversed(log)}  # the first of each type
    assert SHOWN in kinds["tool_call"]["code"] and SHOWN in kinds["cell"]["code"], "code shows the name"
    assert SHOWN in kinds["error"]["value"] and SHOWN in kinds["error"]["traceback"]
    table = next(e["payload"] for e in log if e["type"] == "result" and e["payload"]["is_main_result"])
    assert SHOWN in json.dumps(table, ensure_ascii=False), "the table's cell"
    assert kinds["assistant_message"]["text"] == f"The token is {SHOWN}."

    bodies = [request.body.decode() for request in stack.requests]
    assert len(bodies) == 3
    assert [leaked(body) for body in bodies] == [[], [], []], "no request to the model holds it"
    assert SHOWN in json.dumps(stack.requests[-1].json, ensure_ascii=False)


def test_exports_and_the_share_link_show_only_the_name(printed_it, api, with_secret):
    session = with_secret
    for format in ("ipynb", "py", "html"):
        response = api.get(f"/api/sessions/{session.id}/export", {"format": format})
        assert response.status_code == 200, (format, response.content)
        body = b"".join(response.streaming_content if response.streaming else [response.content]).decode()
        assert leaked(body) == [], format
        assert "secret:API_TOKEN" in body, format

    link = ShareLink.objects.create(session=session, allow_downloads=True)
    anyone = Client()
    shared = anyone.get(f"/api/shared/{link.token}/events")
    assert shared.status_code == 200
    assert leaked(shared.content.decode()) == [] and SHOWN in json.dumps(shared.json(), ensure_ascii=False)
    page = anyone.get(f"/s/{link.token}/")
    assert page.status_code == 200 and leaked(page.content.decode()) == []

    stored = next(e["payload"] for e in printed_it if e["type"] == "result" and e["payload"]["artifacts"])
    artifact = stored["artifacts"]["text/html"]["id"]
    for client, path in ((api, "/api"), (anyone, f"/api/shared/{link.token}")):
        html = b"".join(client.get(f"{path}/artifacts/{artifact}")).decode()
        assert leaked(html) == [] and html.startswith(f"<p>{SHOWN}</p>"), path

    expected = f"token={SHOWN}\n".encode()
    owned = api.get(f"/api/sessions/{session.id}/files/download", {"path": "token.txt"})
    assert owned.status_code == 200 and b"".join(owned) == expected
    through_link = anyone.get(f"/api/shared/{link.token}/files/download", {"path": "token.txt"})
    assert through_link.status_code == 200 and b"".join(through_link) == expected


def test_the_variable_inspector_shows_only_the_name(printed_it, api, with_secret):
    path = f"/api/sessions/{with_secret.id}/variables"
    listing = api.get(path)
    assert listing.status_code == 200 and listing.json()["status"] == "ready"
    assert leaked(listing.content.decode()) == []
    answers = [api.get(f"{path}/frame"), api.get(f"{path}/frame/rows")]
    assert [a.status_code for a in answers] == [200, 200]
    assert all(leaked(a.content.decode()) == [] for a in answers)
    assert all(SHOWN in json.dumps(a.json(), ensure_ascii=False) for a in answers)
    csv = api.get(f"{path}/frame/rows.csv")
    assert csv.status_code == 200
    assert b"".join(csv).decode().splitlines()[1].endswith(f"{SHOWN},1")


def test_the_secret_reaches_the_kernels_environment_and_no_output(stack, api, with_secret):
    log = run_cell(api, with_secret, "import os\nprint('from the environment:', os.environ.get('API_TOKEN'))")
    assert f"from the environment: {SHOWN}\n" in printed(log), [e for e in log if e["type"] == "notice"]
    assert leaked(json.dumps(events.after(with_secret.id, 0), ensure_ascii=False)) == []


def test_a_cell_waiting_for_approval_shows_the_name_and_runs_the_value(stack, api, with_secret):
    """The owner approving a model's cell sees «secret:API_TOKEN» in its code; sent back as shown,
    it is the model's own code that runs (the value's length printed, not the placeholder's)."""
    session = approving(with_secret)
    code = f"print(len('{VALUE}'))"
    stack.script(
        anthropic_tool_call("run_python", {"code": code}, tool_id="toolu_01"), anthropic_text("Done.")
    )
    assert (
        api.post(f"/api/sessions/{session.id}/messages", {"content": "Go"}, "application/json").status_code
        == 202
    )
    pending = wait_for(session, "cell_pending")[-1]["payload"]
    assert pending["code"] == f"print(len('{SHOWN}'))"

    assert decide(api, session, "approve", {"code": pending["code"]}).status_code == 200
    log = wait_for(session, "turn_done")
    assert printed(log) == f"{len(VALUE)}\n"
    assert leaked(json.dumps(log, ensure_ascii=False)) == []
