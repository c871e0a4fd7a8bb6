"""Uploads: taking a file in (its size limit as it arrives, the user's storage limit), placing it in
the session's kernel, and the queue of placements.

May import: accounts, audit, dispatch, files, kernels, lib, models, realtime, trust (and the SDK,
`sandboxes`).
"""
