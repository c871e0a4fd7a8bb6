"""The conversation with the session's secrets replaced by ``«secret:NAME»`` (analyst.connections
.redaction): applied to every request as it goes to the provider, so the model never reads a
secret's value, whatever an earlier turn stored before the secret was added."""

from __future__ import annotations

from analyst.connections.redaction import Redactor
from analyst.turns.agent.providers import ChatMessage, ImagePart, Part, ToolResultPart


def without_secrets(messages: list[ChatMessage], redactor: Redactor) -> list[ChatMessage]:
    if not redactor:
        return messages
    return [ChatMessage(m.role, [_part(p, redactor) for p in m.parts]) for m in messages]


def _part(part: Part, redactor: Redactor) -> Part:
    if isinstance(part, ImagePart):  # its base64 is an image's, not text
        return part
    if isinstance(part, ToolResultPart):
        content = [item if isinstance(item, ImagePart) else redactor.value(item) for item in part.content]
        return ToolResultPart(part.tool_call_id, content, is_error=part.is_error)
    return redactor.value(part)  # a TextPart, or a ToolCallPart's code and arguments
