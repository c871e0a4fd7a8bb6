"""The instructions a user saves once ("fiscal year starts in April", "amounts in EUR", "always show
a chart"), added to the system prompt of every session of theirs.

Workspaces do not exist yet (issue 27): a workspace's instructions, set by its admins, will join
these when they do.
"""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser

from analyst.models import AnalysisSession, SavedInstructions

MAX_LENGTH = 4000  # characters: they go into every system prompt of the user's sessions


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


def told(session: AnalysisSession) -> str:
    """The session owner's instructions as the system prompt gives them ("" when there are none)."""
    text = SavedInstructions.objects.filter(user_id=session.owner_id).values_list("text", flat=True).first()
    if not text:
        return ""
    return (
        "\n\nThe user's standing instructions (saved in their settings, for every session; follow them"
        " unless they ask otherwise here):\n" + text
    )
