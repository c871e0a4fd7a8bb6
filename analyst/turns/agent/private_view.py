"""The conversation as the session's privacy policy lets the model read it (analyst.trust.privacy):
applied to every request as it goes to the provider, so earlier turns are filtered by today's
mode and marks, while the events the page shows stay whole. The stored messages stay whole too,
but for the values of a schema-mode cell's own tables, withheld as the cell's output is stored."""

from __future__ import annotations

from collections import Counter
from typing import TypeVar

from analyst.trust.privacy import NO_IMAGE, Policy, withheld_line
from analyst.turns.agent.providers import ChatMessage, ImagePart, Part, TextPart, ToolCallPart, ToolResultPart


def as_model_reads(messages: list[ChatMessage], policy: Policy) -> list[ChatMessage]:
    """``messages`` with the values the policy withholds replaced (every text, the code of tool
    calls), images dropped unless allowed, and a line in each tool result or note that lost some."""
    if not policy.matcher and policy.send_images:
        return messages
    return [ChatMessage(m.role, [_part(p, policy) for p in m.parts]) for m in messages]


Stored = TypeVar("Stored", TextPart, ToolResultPart)


def values_withheld(part: Stored, policy: Policy) -> Stored:
    """A cell's output (its tool result, or the note of the user's own cell) as it is stored in
    schema mode: its texts with the values the policy withholds replaced, images kept (they are
    filtered as requests go). For values known only as the cell ends (analyst.trust.kernel_values),
    which no later request could find again; in full mode the output is stored whole."""
    if not policy.schema or not policy.matcher:
        return part
    return _part(part, Policy(matcher=policy.matcher))  # type: ignore[return-value]  # its own kind back


def _part(part: Part, policy: Policy) -> Part:
    if isinstance(part, TextPart):
        text, found = policy.redact(part.text)
        return TextPart(f"{text}\n{withheld_line(found)}" if found else text)
    if isinstance(part, ImagePart):
        return part if policy.send_images else TextPart(NO_IMAGE)
    if isinstance(part, ToolCallPart):
        code = part.arguments.get("code")
        if not isinstance(code, str):
            return part
        return ToolCallPart(part.id, part.name, {**part.arguments, "code": policy.redact(code)[0]})
    found: Counter[str] = Counter()
    content: list[TextPart | ImagePart] = []
    for item in part.content:
        if isinstance(item, TextPart):
            text, more = policy.redact(item.text)
            found += more
            content.append(TextPart(text))
        else:
            content.append(item if policy.send_images else TextPart(NO_IMAGE))
    if found:
        content.append(TextPart(withheld_line(found)))
    return ToolResultPart(part.tool_call_id, content, is_error=part.is_error)
