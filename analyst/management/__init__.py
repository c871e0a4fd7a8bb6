"""manage.py's commands of the app: apitoken, mcp (stdio).

May import: api, mcp and accounts, dispatch, files, kernels, lib, models, ops, realtime, runs,
sessions, trust, turns, uploads.
"""
