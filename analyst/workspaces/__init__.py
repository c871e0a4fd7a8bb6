"""Workspaces: who may do what in one (roles), its members, and the invitations that bring people in.

May import: accounts, lib, models (and the SDK, `sandboxes`).
"""
