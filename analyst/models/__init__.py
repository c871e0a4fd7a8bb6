"""The analyst's data: sessions, their messages, turns and event log, files and artifacts.

May import: nothing of ours.
"""

from analyst.models.artifacts import Artifact
from analyst.models.connections import Connection, SessionConnection, SessionSecret
from analyst.models.events import Event
from analyst.models.files import DataFile
from analyst.models.instructions import SavedInstructions
from analyst.models.invites import Invite
from analyst.models.limits import UserLimits
from analyst.models.runs import Publication, Run, Schedule
from analyst.models.sessions import AnalysisSession, Message, Turn
from analyst.models.shares import ShareLink
from analyst.models.snapshots import KernelSnapshot
from analyst.models.tokens import ApiToken
from analyst.models.usage import ModelCall
from analyst.models.workspaces import (
    AuditEntry,
    Comment,
    Membership,
    Notification,
    Workspace,
    WorkspaceInvitation,
)

__all__ = [
    "AnalysisSession",
    "ApiToken",
    "Artifact",
    "AuditEntry",
    "Comment",
    "Connection",
    "DataFile",
    "Event",
    "Invite",
    "KernelSnapshot",
    "Membership",
    "Notification",
    "Message",
    "ModelCall",
    "Publication",
    "Run",
    "Schedule",
    "SavedInstructions",
    "SessionConnection",
    "SessionSecret",
    "ShareLink",
    "Turn",
    "UserLimits",
    "Workspace",
    "WorkspaceInvitation",
]
