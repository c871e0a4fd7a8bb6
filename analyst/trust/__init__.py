"""Trust in an analysis: the figures of an answer traced to the outputs they came from, what the
model may see of private data (privacy modes, sensitive columns), cells a person approves before
they run, and the instructions and data dictionary a user (or a workspace's admins) save for the
model.

May import: audit, files, lib, models, realtime, workspaces (and the SDK, `sandboxes`).
"""
