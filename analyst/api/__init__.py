"""The JSON API, for scripts and for the browser app: thin views over the services.

May import: accounts, audit, collab, connections, dispatch, files, kernels, lib, models, ops, realtime, runs,
sessions, trust, turns, uploads, workspaces.
"""
