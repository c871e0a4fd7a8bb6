"""Working together on a session: who has it open (presence), comments on its cells and answers,
the notifications they send its participants, and the live messages that carry all three (and a
removed member's lost access) to the open pages.

May import: audit, lib, models, realtime, sessions, workspaces.
"""
