"""Request bodies and response records shared by the sync and async SDKs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

UPLOAD_CHUNK = 256 << 10


def create_body(template: str, ttl_seconds: int | None, metadata: dict[str, str] | None) -> dict[str, Any]:
    return {"template": template, "ttl_seconds": ttl_seconds, "metadata": metadata or {}}


def execute_body(code: str, timeout: float | None) -> dict[str, Any]:
    return {"code": code, "timeout": timeout}


def list_params(metadata: dict[str, str] | None) -> dict[str, str]:
    return {f"metadata.{key}": value for key, value in (metadata or {}).items()}


@dataclass(frozen=True)
class SandboxInfo:
    sandbox_id: str
    template: str
    metadata: dict[str, str]
    ttl_seconds: int
    expires_in: float
    default_context_id: str
    context_ids: list[str]

    @classmethod
    def from_json(cls, body: dict[str, Any]) -> SandboxInfo:
        return cls(
            sandbox_id=body["id"],
            template=body["template"],
            metadata=body["metadata"],
            ttl_seconds=body["ttl_seconds"],
            expires_in=body["expires_in"],
            default_context_id=body["default_context_id"],
            context_ids=[c["id"] for c in body["contexts"]],
        )


@dataclass(frozen=True)
class EntryInfo:
    name: str
    path: str
    type: str  # "file", "dir" or "symlink"
    size: int

    @classmethod
    def from_json(cls, body: dict[str, Any]) -> EntryInfo:
        return cls(name=body["name"], path=body["path"], type=body["type"], size=body["size"])


@dataclass(frozen=True)
class WriteInfo:
    path: str
    size: int

    @classmethod
    def from_json(cls, body: dict[str, Any]) -> WriteInfo:
        return cls(path=body["path"], size=body["size"])
