"""The pages of the browser app, its WebSocket consumer and routing, accounts' sign-up and sign-in, and
the headers every response gets.

May import: accounts, audit, collab, connections, dispatch, files, kernels, lib, models, ops, realtime, runs,
sessions, trust, turns, uploads, workspaces.
"""
