"""Shared plumbing below every domain: per-process singletons, raw ASGI helpers, byte sizes in words,
the quick Redis client.

May import: nothing of ours (and the SDK, `sandboxes`).
"""
