"""`python manage.py mcp`: the MCP server over stdio, for clients that start their servers as
processes (Claude Desktop, Cursor). It acts as the user of the API token in ANALYST_API_TOKEN;
session links point at ANALYST_PUBLIC_URL."""

from __future__ import annotations

import asyncio
import os
from typing import Any

from channels.db import database_sync_to_async
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError

from analyst.accounts.api_tokens import user_from_token
from analyst.mcp.server import build


class Command(BaseCommand):
    help = "Serve the analyst's MCP tools over stdio, as the user of the API token in ANALYST_API_TOKEN."

    def handle(self, *args: object, **options: object) -> None:
        secret = os.environ.get("ANALYST_API_TOKEN", "").strip()
        if not secret:
            raise CommandError("set ANALYST_API_TOKEN to an API token (make one on the API tokens page)")
        if user_from_token(secret) is None:
            raise CommandError("ANALYST_API_TOKEN is not a valid API token (wrong, or revoked)")

        async def caller(ctx: Context) -> tuple[Any, str]:
            user = await database_sync_to_async(user_from_token)(secret)  # a revoked token stops working
            if user is None:
                raise ToolError("the API token in ANALYST_API_TOKEN was revoked")
            return user, settings.ANALYST_PUBLIC_URL

        asyncio.run(build(caller).run_stdio_async())
