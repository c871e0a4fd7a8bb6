"""manage.py's commands of the app: apitoken, mcp (stdio), rotate_connections_key.

May import: api, mcp and accounts, connections, dispatch, files, kernels, lib, models, ops, realtime, runs,
sessions, trust, turns, uploads.
"""
