"""The MCP server: an analyst session as a persistent, isolated Python kernel for any MCP client.

``calls`` does each tool's work on the app's own paths (the same sessions, uploads, turns and
limits as the page), ``following`` waits for a turn's events, ``content`` turns them into tool
results, ``server`` declares the tools with the official SDK, ``http`` serves them at /mcp and
the ``mcp`` management command over stdio.

May import: api and accounts, connections, dispatch, files, kernels, lib, models, ops, realtime, runs,
sessions, trust, turns, uploads, workspaces.
"""
