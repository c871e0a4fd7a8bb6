"""Accounts: API tokens, login throttling, each user's limits and their model-token usage and budget.

May import: lib, models (and the SDK, `sandboxes`).
"""
