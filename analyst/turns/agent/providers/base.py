"""The provider-neutral conversation, the events a model streams back, and the Provider interface."""

from __future__ import annotations

import abc
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Literal, Self


@dataclass(frozen=True, slots=True)
class TextPart:
    text: str


@dataclass(frozen=True, slots=True)
class ImagePart:
    media_type: str  # "image/png", "image/jpeg", ...
    data: str  # base64, without a data: prefix


@dataclass(frozen=True, slots=True)
class ToolCallPart:
    """A tool call the model made: goes back in the assistant message that made it."""

    id: str
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ToolResultPart:
    """What a tool call produced: goes in the user message that follows the call."""

    tool_call_id: str
    content: list[TextPart | ImagePart]
    is_error: bool = False


Part = TextPart | ImagePart | ToolCallPart | ToolResultPart


@dataclass(frozen=True, slots=True)
class ChatMessage:
    """One turn of the conversation.

    User messages hold text, images and tool results; assistant messages hold text and tool calls.
    Each provider converts these to its own wire shape (OpenAI's tool results become "tool" messages).
    """

    role: Literal["user", "assistant"]
    parts: list[Part] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class ToolSpec:
    name: str
    description: str
    parameters: dict[str, Any]  # JSON schema of the arguments object


@dataclass(frozen=True, slots=True)
class TextDelta:
    text: str


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A complete tool call, emitted once all of its arguments have arrived.

    ``arguments`` is None when ``raw_arguments`` is not a JSON object; ``error`` then says why,
    in words fit to show the user and to send back to the model. ``truncated`` is True when the
    answer hit its length limit (max_tokens) before the arguments were complete.
    """

    id: str
    name: str
    arguments: dict[str, Any] | None
    raw_arguments: str
    error: str | None = None
    truncated: bool = False

    @classmethod
    def parse(cls, id: str, name: str, raw_arguments: str, *, cut_off: bool = False) -> ToolCall:
        """The call with its arguments decoded; empty arguments are an empty object.

        ``cut_off`` says the answer stopped at its length limit: arguments that do not decode are
        then truncated rather than invalid.
        """
        try:
            arguments = json.loads(raw_arguments or "{}")
        except ValueError as exc:
            if cut_off:
                error = f"the arguments for {name} were cut off by the answer's length limit"
                return cls(id, name, None, raw_arguments, error, truncated=True)
            return cls(id, name, None, raw_arguments, f"the arguments for {name} are not valid JSON: {exc}")
        if not isinstance(arguments, dict):
            error = f"the arguments for {name} must be a JSON object, not {type(arguments).__name__}"
            return cls(id, name, None, raw_arguments, error)
        return cls(id, name, arguments, raw_arguments)


@dataclass(frozen=True, slots=True)
class Finished:
    """The model stopped: always the last event of a stream.

    ``stop_reason`` is "end_turn", "tool_use", "max_tokens" or "refusal" when the provider's reason
    means one of those, else the provider's own word. ``refusal`` is the model's explanation when
    it declined (OpenAI's ``refusal`` text), else None. Token counts are None when the provider
    did not say.
    """

    stop_reason: str
    input_tokens: int | None = None
    output_tokens: int | None = None
    refusal: str | None = None


StreamEvent = TextDelta | ToolCall | Finished


@dataclass(frozen=True, slots=True)
class Retrying:
    """The provider failed before answering and will try again after ``delay`` seconds: this is
    retry number ``retry`` of at most ``retries``."""

    retry: int
    retries: int
    delay: float
    reason: str


RetryListener = Callable[[Retrying], None]


class Provider(abc.ABC):
    """A model API: streams the model's answer to a conversation.

    Implementations speak one wire protocol over an injected (or their own) ``httpx.Client``;
    ``close()`` releases a client the provider made itself.
    """

    supports_images: bool

    @abc.abstractmethod
    def stream(
        self,
        *,
        model: str,
        system: str,
        messages: list[ChatMessage],
        tools: list[ToolSpec],
        max_tokens: int,
        on_retry: RetryListener | None = None,
    ) -> Iterator[StreamEvent]:
        """Send the conversation; yield TextDelta and ToolCall events as they arrive, then Finished.

        Nothing is sent until the first event is asked for. Raises a ProviderError: retryable
        failures are retried before the first byte of the answer, never after; ``on_retry`` hears
        of each retry before its wait.
        """

    @abc.abstractmethod
    def close(self) -> None:
        """Release the HTTP client if the provider made its own."""

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
