"""MCP's create_session takes the names of the caller's connections, which the new session then
uses; a name that is not the caller's is a tool error, and no session is made. Driven by the
official MCP client, connected in-process to the server the app declares."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from mcp import Client

from analyst.connections import attachments
from analyst.mcp import server
from analyst.models import AnalysisSession
from tests.connections.conftest import make_connection

pytestmark = pytest.mark.django_db(transaction=True)  # the server works on the ORM in threads


def call(user: Any, tool: str, arguments: dict[str, Any]) -> Any:
    async def caller(ctx: Any) -> tuple[Any, str]:
        return user, "http://analyst.test"

    async def scenario() -> Any:
        async with Client(server.build(caller)) as client:
            return await client.call_tool(tool, arguments)

    return asyncio.run(scenario())


def test_create_session_with_connections(no_sandboxd):
    users = get_user_model().objects
    alice, mallory = users.create_user("alice"), users.create_user("mallory")
    make_connection(alice)
    make_connection(alice, name="crm", kind="http", url="https://crm.example/api")
    make_connection(mallory, name="theirs")

    made = call(alice, "create_session", {"title": "Sales", "connections": ["crm", "warehouse"]})
    assert not made.is_error, made.content
    session = AnalysisSession.objects.get(id=made.structured_content["session_id"])
    assert [c.name for c in attachments.attached(session)] == ["crm", "warehouse"]

    refused = call(alice, "create_session", {"title": "Not mine", "connections": ["warehouse", "theirs"]})
    assert refused.is_error
    assert refused.content[0].text.endswith("you have no connection named 'theirs' (yours: crm, warehouse)")
    assert not AnalysisSession.objects.filter(title="Not mine").exists()

    plain = call(alice, "create_session", {})
    assert not plain.is_error
    assert attachments.attached(AnalysisSession.objects.get(id=plain.structured_content["session_id"])) == []
