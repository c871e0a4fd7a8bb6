"""Shared plumbing below every domain: per-process singletons, raw ASGI helpers, byte sizes in words,
the quick Redis client, the e-mail backend of a server with no mail server.

May import: nothing of ours (and the SDK, `sandboxes`).
"""
