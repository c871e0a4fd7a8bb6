"""The team workspace's personas (olga owns it, adam is an admin, eve edits, vic views) and a
stranger (mallory), as the workspace tests have them; uploads stored in a temporary folder."""

from tests.api.conftest import media
from tests.workspaces.conftest import mallory, team

__all__ = ["mallory", "media", "team"]
