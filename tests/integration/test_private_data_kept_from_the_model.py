"""Private data kept from the model: in schema mode no name or e-mail of the data reaches the model
server, in any request (tool results, the user's own cells, the system prompt, history), while
the page's events hold them all; in full mode a column marked sensitive is kept back alone."""

from __future__ import annotations

import json

from analyst.models import DataFile
from tests.fakes.model_server import anthropic_text, anthropic_tool_call
from tests.integration.conftest import wait_for
from tests.integration.test_resume_and_fork import _csv, run_cell
from tests.printed import printed

NAMES = [
    f"{first} {last}"
    for first, last in zip(
        ["Odalys", "Brannock", "Quillon", "Marisol", "Thaddeus", "Yvaine", "Corentin", "Ludmila"],
        ["Vantreight", "Okonkwo", "Farrowdale", "Ystrad", "Pellegrin", "Kastellan", "Drummore", "Havelund"],
        strict=True,
    )
]
EMAILS = [f"{name.split()[0].lower()}.{name.split()[1].lower()}@example-mail.net" for name in NAMES]
CSV = "name,email,amount\n" + "".join(
    f"{name},{email},{10 * (i + 1)}\n" for i, (name, email) in enumerate(zip(NAMES, EMAILS, strict=True))
)
LOAD = "df = pd.read_csv('data/customers.csv')\n"


def _upload(api, session) -> dict:
    response = api.post(f"/api/sessions/{session.id}/files", {"file": _csv("customers.csv", CSV.encode())})
    assert response.status_code in (201, 202), response.content
    wait_for(session, "file_added")
    return next(
        f for f in api.get(f"/api/sessions/{session.id}/files").json()["files"] if f["kind"] == "upload"
    )


def _ask(stack, api, session, question: str) -> list[dict]:
    ended = session.events.filter(type="turn_done").count()
    assert (
        api.post(
            f"/api/sessions/{session.id}/messages", {"content": question}, "application/json"
        ).status_code
        == 202
    )
    log = wait_for(session)
    while sum(e["type"] == "turn_done" for e in log) <= ended:
        log = wait_for(session)
    return log


def _leaked(stack, secrets: list[str]) -> list[str]:
    """The secrets found in any request the model server received, in its raw body (as sent, and
    as JSON would escape it), ignoring case."""
    bodies = [r.body.decode("utf-8", "replace").lower() for r in stack.requests]
    forms = {s: {s.lower(), json.dumps(s)[1:-1].lower()} for s in secrets}
    return [s for s in secrets if any(form in body for body in bodies for form in forms[s])]


def test_a_schema_mode_session_sends_no_name_or_email(stack, api, session):
    response = api.patch(f"/api/sessions/{session.id}", {"privacy": "schema"}, "application/json")
    assert response.status_code == 200 and response.json()["privacy"] == "schema"
    entry = _upload(api, session)
    assert entry["proposed_marks"] == {"": {"email": "email"}}, "the e-mail column is proposed as sensitive"
    run_cell(api, session, LOAD + "print(df.head())")  # the user's own cell: the model hears of it
    stack.script(
        anthropic_tool_call("run_python", {"code": "print(df.head())"}),
        anthropic_tool_call(
            "run_python", {"code": "print(df[df.amount == 40])\ndf[df.amount == 40]"}, tool_id="toolu_02"
        ),
        anthropic_tool_call("run_python", {"code": "df['email'].tolist()"}, tool_id="toolu_03"),
        anthropic_tool_call(
            "run_python",
            {"code": "print(df['name'].tolist(), df['name'].str.upper().tolist())"},
            tool_id="toolu_04",
        ),
        anthropic_text("There are 8 customers; they spent 360 in all."),
    )
    log = _ask(stack, api, session, "Who are the customers?")

    assert len(stack.requests) == 5
    shown = printed(log) + json.dumps([e["payload"] for e in log if e["type"] == "result"])
    assert all(name in shown for name in NAMES), "the page shows every name"
    assert all(email in shown for email in EMAILS), "and every e-mail"
    assert _leaked(stack, NAMES + EMAILS) == [], "no request to the model holds a name or an e-mail"

    last = stack.requests[-1].json
    assert "schema mode" in json.dumps(last["system"]), "the model is told what it does not see"
    results = [
        block
        for message in last["messages"]
        for block in (message["content"] if isinstance(message["content"], list) else [])
        if block["type"] == "tool_result"
    ]
    texts = ["\n".join(c["text"] for c in r["content"] if c["type"] == "text") for r in results]
    assert "«col:name»" in texts[0] and "«col:email»" in texts[0] and "[privacy: " in texts[0]
    assert "40" in texts[1], "numbers of the data still reach the model"
    assert "[a table of 1 row x 3 columns; its rows are withheld from you]" in texts[1]
    assert "amount (integer: min 40, max 40" in texts[1]
    assert texts[2].count("«col:email»") == 8
    assert "«col:name»" in texts[3], "an upper-cased value is caught too"


def test_a_sensitive_column_is_kept_from_the_model_in_full_mode(stack, api, session):
    entry = _upload(api, session)
    response = api.patch(
        f"/api/sessions/{session.id}/files/{entry['id']}",
        {"column_marks": {"": {"email": "sensitive"}}},
        "application/json",
    )
    assert response.status_code == 200, response.content
    assert response.json()["file"]["column_marks"] == {"": {"email": "sensitive"}}
    assert response.json()["file"]["proposed_marks"] == {}, "a decided column is proposed no more"
    stack.script(
        anthropic_tool_call("run_python", {"code": LOAD + "df"}),
        anthropic_tool_call("run_python", {"code": "print(df.to_string())"}, tool_id="toolu_02"),
        anthropic_text("Done."),
    )
    log = _ask(stack, api, session, "Show the customers")
    assert all(email in printed(log) for email in EMAILS), "the page shows the e-mails"
    assert _leaked(stack, EMAILS) == [], "no e-mail reaches the model"
    assert _leaked(stack, NAMES) == NAMES, "the names (not marked) do"
    assert "columns the user marked sensitive (email)" in json.dumps(stack.requests[-1].json["system"])


def test_switching_to_schema_mode_keeps_earlier_outputs_from_the_model(stack, api, session):
    _upload(api, session)
    stack.script(
        anthropic_tool_call("run_python", {"code": LOAD + "print(df.name.tolist())"}),
        anthropic_text("Listed."),
    )
    _ask(stack, api, session, "List them")
    assert _leaked(stack, NAMES) == NAMES, "in full mode the model read the names"
    stack.requests.clear()
    api.patch(
        f"/api/sessions/{session.id}", {"privacy": "schema", "send_chart_images": False}, "application/json"
    )
    stack.script(anthropic_text("Counted."))
    _ask(stack, api, session, "How many?")
    assert _leaked(stack, NAMES) == [], "the earlier output, replayed, holds no name now"
    assert DataFile.objects.get(session=session).description["tables"][0]["values"]["name"] == NAMES
