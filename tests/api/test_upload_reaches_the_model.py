"""Through the whole stack: an upload is described inside the sandbox, and the model is told of it."""

from __future__ import annotations

from tests.api.conftest import upload
from tests.fakes.model_server import anthropic_text
from tests.integration.conftest import wait_for

CSV = b"region,units,unit_price\nnorth,3,2.5\nsouth,5,1.25\neast,7,4.0\nwest,1,9.0\n"


def test_an_upload_is_described_in_the_sandbox_and_named_in_the_system_prompt(stack, api, session):
    response = upload(api, session, "sales.csv", CSV)
    assert response.status_code == 202
    file_id = response.json()["file"]["id"]

    log = wait_for(session, "file_added", timeout=60)
    (added,) = [e for e in log if e["type"] == "file_added"]
    payload = added["payload"]
    assert (payload["id"], payload["name"], payload["path"]) == (file_id, "sales.csv", "data/sales.csv")
    assert (payload["size"], payload["rows"], payload["columns"]) == (len(CSV), 4, 3)
    assert payload["summary"].startswith("data/sales.csv (text table): 4 rows x 3 columns.")
    assert "units (int64)" in payload["summary"] and "unit_price (float64)" in payload["summary"]
    assert "Load it with: pd.read_csv('data/sales.csv')" in payload["summary"]

    stack.script(anthropic_text("Four regions."))
    asked = api.post(
        f"/api/sessions/{session.id}/messages", {"content": "What is in it?"}, "application/json"
    )
    assert asked.status_code == 202
    log = wait_for(session)
    assert log[-1]["type"] == "turn_done", log[-1]
    system = stack.requests[-1].json["system"]
    assert "data/sales.csv" in system
    for column in ("region", "units", "unit_price"):
        assert column in system
    assert "4 rows x 3 columns" in system
