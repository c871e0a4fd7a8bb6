"""What the model receives (at the scripted model server, over real HTTP) names the session's
connections: each one's kind, how to query it, and its tables with their columns and types,
bounded; run_python's description names them too. Never a secret."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from analyst.connections import attachments, sealing
from analyst.models import Connection, SessionSecret, Turn
from analyst.turns.agent.loop import TurnRunner
from analyst.turns.agent.providers import AnthropicProvider
from analyst.turns.agent.tools import RUN_PYTHON
from tests.connections.conftest import SECRET, make_connection
from tests.fakes.model_server import ScriptedModelServer, anthropic_text

ORDERS = [{"name": "id", "type": "INTEGER"}, {"name": "total", "type": "NUMERIC(10, 2)"}]
SCHEMA = {
    "tables": [
        {"name": "public.orders", "columns": ORDERS},
        {"name": "public.customers", "columns": [{"name": "email", "type": "TEXT"}]},
    ]
}


@pytest.fixture
def model_server() -> Iterator[ScriptedModelServer]:
    with ScriptedModelServer() as server:
        yield server


def received(model_server: ScriptedModelServer, session) -> dict:
    """The request the model server received for one question asked in ``session``."""
    model_server.script(anthropic_text("Noted."))
    turn = Turn.objects.create(session=session, requested_by=session.owner, kind=Turn.Kind.CHAT, input="Hi")

    def providers(route: str):
        return AnthropicProvider("test-anthropic-key", base_url=model_server.url), "claude-test"

    TurnRunner(turn, providers=providers).run_chat()
    return model_server.requests[-1].json


def test_the_model_is_told_the_attached_connection_and_its_tables(model_server, session, alice):
    warehouse = make_connection(alice)
    Connection.objects.filter(id=warehouse.id).update(schema=SCHEMA)
    make_connection(alice, name="unused")  # not attached: never told
    attachments.do_attach(session=session, connection=warehouse)
    SessionSecret.objects.create(
        session=session, name="OPENAI_API_KEY", value_sealed=sealing.seal("sk-live-1")
    )

    sent = received(model_server, session)
    system = sent["system"] if isinstance(sent["system"], str) else sent["system"][0]["text"]
    assert (
        'warehouse (PostgreSQL, read-only): query it with sql("warehouse", "select …") (a pandas'
        ' DataFrame), or a cell that starts with "%%sql warehouse"'
    ) in system
    assert 'connection("warehouse") is a SQLAlchemy engine.' in system
    assert (
        "Tables (columns and types):\n- public.orders: id INTEGER, total NUMERIC(10, 2)\n"
        "- public.customers: email TEXT"
    ) in system
    assert "Secret environment variables set in the kernel" in system and "OPENAI_API_KEY" in system
    assert "unused" not in system
    (tool,) = sent["tools"]
    assert tool["name"] == "run_python"
    assert tool["description"].startswith(RUN_PYTHON.description)
    assert "The session's connections (warehouse) are reached with sql(name, query)" in tool["description"]
    assert SECRET not in repr(sent) and "sk-live-1" not in repr(sent)


def test_many_tables_and_columns_are_told_bounded(model_server, session, alice):
    columns = [{"name": f"c{i}", "type": "INT"} for i in range(45)]
    tables = [{"name": f"t{i}", "columns": columns} for i in range(53)]
    warehouse = make_connection(alice)
    Connection.objects.filter(id=warehouse.id).update(schema={"tables": tables})
    attachments.do_attach(session=session, connection=warehouse)

    sent = received(model_server, session)
    system = sent["system"] if isinstance(sent["system"], str) else sent["system"][0]["text"]
    assert "- t49: c0 INT," in system
    assert "- t50:" not in system
    assert "- and 3 more tables" in system
    assert "c39 INT, and 5 more columns" in system


def test_a_session_without_connections_is_told_none(model_server, session, alice):
    make_connection(alice)
    sent = received(model_server, session)
    system = sent["system"] if isinstance(sent["system"], str) else sent["system"][0]["text"]
    assert "Connections the kernel can use" not in system
    assert sent["tools"][0]["description"] == RUN_PYTHON.description
