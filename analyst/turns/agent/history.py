"""The conversation as the model sees it: Message rows to provider messages and back."""

from __future__ import annotations

from typing import Any

from django.conf import settings

from analyst.models import AnalysisSession, Message, Turn
from analyst.turns.agent.providers import ChatMessage, ImagePart, TextPart, ToolCallPart, ToolResultPart

Part = TextPart | ImagePart | ToolCallPart | ToolResultPart
OLD_IMAGE = "[a chart shown in an earlier turn]"
EARLIER_OMITTED = (
    "[Earlier messages of this session are left out to save space; the kernel still holds the"
    " variables they made.]"
)
INTERRUPTED = "[no result: the turn ended before this cell finished (stopped, timed out or lost)]"
# Stand-ins for an answer with nothing in it: every provider refuses an empty message.
DECLINED = "[The model declined to answer this.]"
NO_ANSWER = "[The model returned no answer to this.]"


def part_to_json(part: Part) -> dict[str, Any]:
    if isinstance(part, TextPart):
        return {"type": "text", "text": part.text}
    if isinstance(part, ImagePart):
        return {"type": "image", "media_type": part.media_type, "data": part.data}
    if isinstance(part, ToolCallPart):
        return {"type": "tool_call", "id": part.id, "name": part.name, "arguments": part.arguments}
    content = [part_to_json(c) for c in part.content]
    return {
        "type": "tool_result",
        "tool_call_id": part.tool_call_id,
        "content": content,
        "is_error": part.is_error,
    }


def part_from_json(data: dict[str, Any], *, keep_images: bool) -> Part:
    kind = data["type"]
    if kind == "text":
        return TextPart(data["text"])
    if kind == "image":
        return ImagePart(data["media_type"], data["data"]) if keep_images else TextPart(OLD_IMAGE)
    if kind == "tool_call":
        return ToolCallPart(data["id"], data["name"], data["arguments"])
    content = [part_from_json(c, keep_images=keep_images) for c in data["content"]]
    return ToolResultPart(data["tool_call_id"], content, is_error=data["is_error"])  # type: ignore[arg-type]


def save(session: AnalysisSession, turn: Turn, role: str, parts: list[Part]) -> None:
    Message.objects.create(session=session, turn=turn, role=role, parts=[part_to_json(p) for p in parts])


def load(session: AnalysisSession, current: Turn, *, limit: int | None = None) -> list[ChatMessage]:
    """The newest ``limit`` messages (default ANALYST_HISTORY_LIMIT), same-role neighbours
    merged; images only from the current turn.

    A long session's older messages are left out, with a note saying so, from a turn's start
    on (never from the middle of a tool call and its result): the model's context window and
    each turn's cost stay bounded. A tool call whose turn ended before its result (stopped, timed
    out, its worker died) gets a result saying so: providers refuse an unanswered tool call.
    """
    limit = limit or settings.ANALYST_HISTORY_LIMIT
    newest = session.messages.order_by("-id").values_list("role", "parts", "turn_id")  # no model objects
    rows = list(newest[: limit + 1])[::-1]
    messages: list[ChatMessage] = []
    if len(rows) > limit:
        rows = rows[1:]
        while rows and not _starts_a_turn(rows[0]):
            rows.pop(0)
        messages.append(ChatMessage("user", [TextPart(EARLIER_OMITTED)]))
    for role, stored, turn_id in rows:
        add(messages, role, [part_from_json(p, keep_images=turn_id == current.id) for p in stored])
    _fill_empty_answers(messages)
    _answer_dangling_calls(messages)
    return messages


def _fill_empty_answers(messages: list[ChatMessage]) -> None:
    """Assistant messages stored with nothing in them (an empty answer, before such answers were
    stored as a note) get the note, so the session and its forks can go on."""
    for message in messages:
        if message.role == "assistant" and not any(_has_content(part) for part in message.parts):
            message.parts[:] = [
                TextPart(NO_ANSWER),
                *(p for p in message.parts if not isinstance(p, TextPart)),
            ]


def _has_content(part: Part) -> bool:
    return not isinstance(part, TextPart) or bool(part.text.strip())


def _starts_a_turn(row: tuple[str, list[dict[str, Any]], int | None]) -> bool:
    role, parts, _ = row
    return role == "user" and not any(part.get("type") == "tool_result" for part in parts)


def add(messages: list[ChatMessage], role: str, parts: list[Part]) -> None:
    """Append to a loaded conversation, merging into a last message of the same role."""
    if messages and messages[-1].role == role:
        messages[-1].parts.extend(parts)
    else:
        messages.append(ChatMessage(role, list(parts)))  # type: ignore[arg-type]


def _answer_dangling_calls(messages: list[ChatMessage]) -> None:
    for index, message in enumerate(messages):
        calls = [p.id for p in message.parts if isinstance(p, ToolCallPart)]
        if message.role != "assistant" or not calls:
            continue
        following = messages[index + 1] if index + 1 < len(messages) else None
        answered = (
            {p.tool_call_id for p in following.parts if isinstance(p, ToolResultPart)} if following else set()
        )
        missing: list[Part] = [
            ToolResultPart(call, [TextPart(INTERRUPTED)], is_error=True)
            for call in calls
            if call not in answered
        ]
        if not missing:
            continue
        if following is not None and following.role == "user":
            following.parts[:0] = missing
        else:
            messages.insert(index + 1, ChatMessage("user", missing))
