"""manage.py's commands of the app: apitoken, mcp (stdio), prune_audit, rotate_connections_key.

May import: api, mcp and accounts, audit, connections, dispatch, files, kernels, lib, models, ops, realtime,
runs, sessions, trust, turns, uploads.
"""
