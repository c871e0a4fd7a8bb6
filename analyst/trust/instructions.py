"""Standing instructions ("fiscal year starts in April", "amounts in EUR", "always show a chart"):
a user's own, saved once for every session they ask in, and a workspace's, set by its admins for
every session in it. A turn's system prompt gives the workspace's first, then those of the user
who asked (not the session's owner: in a team's session each member brings their own).
"""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser

from analyst.audit import records as audit_records
from analyst.models import AnalysisSession, SavedInstructions, Workspace
from analyst.trust import session_workspace
from analyst.workspaces import members
from analyst.workspaces.roles import Action

MAX_LENGTH = 4000  # characters, the user's and a workspace's: they go into every system prompt


class BadInstructions(ValueError):
    """The instructions are not a string, or longer than MAX_LENGTH."""


def check_text(text: object) -> str:
    """The text trimmed, a form's CRLF new lines made LF; BadInstructions unless it is a string of
    at most MAX_LENGTH characters."""
    if not isinstance(text, str):
        raise BadInstructions("'text' must be a string (an empty one clears the instructions)")
    text = text.replace("\r\n", "\n").strip()
    if len(text) > MAX_LENGTH:
        raise BadInstructions(
            f"the instructions are {len(text):,} characters long; at most {MAX_LENGTH:,} are allowed"
        )
    return text


def saved(user: AbstractBaseUser) -> SavedInstructions:
    """The user's instructions; an unsaved empty one for a user who never saved any."""
    return SavedInstructions.objects.filter(user=user).first() or SavedInstructions(user=user)


def do_save(*, user: AbstractBaseUser, text: object) -> SavedInstructions:
    """Replace the user's instructions with ``text``, checked (BadInstructions)."""
    instructions, _ = SavedInstructions.objects.update_or_create(
        user=user, defaults={"text": check_text(text)}
    )
    return instructions


def as_dict(instructions: SavedInstructions) -> dict[str, object]:
    updated = instructions.updated_at.isoformat() if instructions.updated_at else None
    return {"text": instructions.text, "updated_at": updated, "max_length": MAX_LENGTH}


def do_save_for_workspace(*, workspace: Workspace, by: AbstractBaseUser, text: object) -> Workspace:
    """Replace the workspace's instructions with ``text``, checked (BadInstructions), when ``by``
    may manage its settings (members.NotAMember, members.NotAllowed otherwise); recorded in the
    audit log (their length, not their text)."""
    members.check_may(by, workspace, Action.MANAGE_SETTINGS)
    workspace.instructions = check_text(text)
    workspace.save(update_fields=["instructions"])
    audit_records.record(
        "workspace_instructions",
        user=by,
        workspace=workspace,
        target=f"workspace:{workspace.id}",
        detail={"length": len(workspace.instructions)},
    )
    return workspace


def workspace_dict(workspace: Workspace, *, editable: bool) -> dict[str, object]:
    return {"text": workspace.instructions, "editable": editable, "max_length": MAX_LENGTH}


def told(session: AnalysisSession, asker_id: object = None) -> str:
    """The workspace's instructions, then those of the user asking (``asker_id``; by default the
    session's owner), as the system prompt gives them ("" when there are none)."""
    workspace = session_workspace.current(session)
    text = ""
    if workspace.instructions:
        text += (
            f"\n\nInstructions of the workspace {workspace.name} (set by its admins, for every session"
            " in it; follow them unless the user asks otherwise here):\n" + workspace.instructions
        )
    user_id = asker_id if asker_id is not None else session.owner_id
    own = SavedInstructions.objects.filter(user_id=user_id).values_list("text", flat=True).first()
    if own:
        text += (
            "\n\nThe user's standing instructions (saved in their settings, for every session; follow"
            " them unless they ask otherwise here):\n" + own
        )
    return text
