"""Connections: a user's databases, object stores and HTTP APIs (their kinds, checked; their secrets,
sealed), the sessions each is attached to, the egress a session's sandbox gets for them, the Test
that connects from a throwaway sandbox, and what the model is told of them.

May import: audit, lib, models, workspaces (and the SDK, `sandboxes`).
"""
