"""The event log: every event stored with its per-session seq, then broadcast to the session's group;
event pages folded for the browser.

May import: lib, models (and the SDK, `sandboxes`).
"""
