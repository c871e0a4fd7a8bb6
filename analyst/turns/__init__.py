"""Turns: asking, running a cell, restarting, replaying; their queue and claims, the reconciler and
each worker's watch, and the agent (agent/: the loop, the model providers, history, prompt and
tools).

May import: accounts, audit, connections, dispatch, files, kernels, lib, models, ops, realtime, trust,
uploads, workspaces (and the SDK, `sandboxes`).
"""
