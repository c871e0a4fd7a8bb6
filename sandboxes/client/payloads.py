"""The records sandboxd's answers are read into, shared by the sync and async SDKs."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Resumed:
    """What a resume brought back: ``why`` the sandbox had been paused ("idle", "memory",
    "room", "asked", "restored"), how long resuming took, and the variables the pause could
    not keep (they could not be pickled)."""

    why: str
    paused_at: float  # when it was paused (seconds since the epoch): which pause this undid
    seconds: float
    unsaved: list[str]

    @classmethod
    def from_json(cls, body: dict[str, Any] | None) -> Resumed | None:
        if not body:
            return None
        return cls(
            why=str(body["why"]),
            paused_at=float(body["paused_at"]),
            seconds=float(body["seconds"]),
            unsaved=list(body["unsaved"]),
        )


@dataclass(frozen=True)
class SandboxInfo:
    """A sandbox as sandboxd last described it. ``state`` is "running" or "paused" (its kernels
    stopped, their state kept; any use resumes it). ``memory_used`` is what the default
    context's kernel uses (bytes, as its limit counts them; None when unknown or paused) and
    ``memory_limit`` what each kernel may use before it is killed. ``pause_held`` says why an
    idle sandbox is not being paused; ``resumed``, what its last resume brought back."""

    sandbox_id: str
    template: str
    metadata: dict[str, str]
    ttl_seconds: int
    expires_in: float
    default_context_id: str
    context_ids: list[str]
    memory_used: int | None = None
    memory_limit: int | None = None
    state: str = "running"
    pause_held: str | None = None
    resumed: Resumed | None = None

    @classmethod
    def from_json(cls, body: dict[str, Any]) -> SandboxInfo:
        default = next((c for c in body["contexts"] if c["id"] == body["default_context_id"]), {})
        memory = default.get("memory") or {}
        return cls(
            sandbox_id=body["id"],
            template=body["template"],
            metadata=body["metadata"],
            ttl_seconds=body["ttl_seconds"],
            expires_in=body["expires_in"],
            default_context_id=body["default_context_id"],
            context_ids=[c["id"] for c in body["contexts"]],
            memory_used=memory.get("used"),
            memory_limit=memory.get("limit"),
            state=body.get("state", "running"),
            pause_held=body.get("pause_held"),
            resumed=Resumed.from_json(body.get("resumed")),
        )


@dataclass(frozen=True)
class VariableInfo:
    """One user variable of a context: ``shape`` for tables and arrays (rows, columns...),
    ``length`` for builtin containers and strings, ``size`` in bytes (pandas' deep memory use,
    numpy's nbytes, else sys.getsizeof; ``approximate`` when measured on a sample; None when it
    took too long). ``table`` says ``CodeContext.preview`` can show it."""

    name: str
    type: str
    shape: list[int] | None
    length: int | None
    size: int | None
    approximate: bool
    table: bool

    @classmethod
    def from_json(cls, body: dict[str, Any]) -> VariableInfo:
        return cls(
            name=body["name"],
            type=body["type"],
            shape=body["shape"],
            length=body["length"],
            size=body["size"],
            approximate=body["approximate"],
            table=body["table"],
        )


class VariableList(list[VariableInfo]):
    """A context's user variables by name (a list), plus ``total``: how many there are, of which
    the list holds the first 500."""

    total: int

    @classmethod
    def from_json(cls, body: dict[str, Any]) -> VariableList:
        listed = cls(VariableInfo.from_json(item) for item in body["variables"])
        listed.total = int(body["total"])
        return listed


@dataclass(frozen=True)
class TablePreview:
    """A table's first rows in pandas' table schema: ``fields`` [{"name", "type"}] (the index
    first), ``data`` one {field name: value} per row; strings are cut to 100 characters."""

    fields: list[dict[str, str]]
    data: list[dict[str, Any]]
    total_rows: int
    total_columns: int

    @classmethod
    def from_json(cls, body: dict[str, Any]) -> TablePreview:
        table = body["table"]
        return cls(
            fields=table["schema"]["fields"],
            data=table["data"],
            total_rows=body["total_rows"],
            total_columns=body["total_columns"],
        )


@dataclass(frozen=True)
class TableRows:
    """A page of a table's rows, filtered and sorted over the whole frame: ``columns``
    [{"name", "type"}] (the index first), ``rows`` one list of values per row in that order;
    ``total_rows`` rows match the filter, of ``all_rows``; the page begins at ``offset``."""

    columns: list[dict[str, str]]
    rows: list[list[Any]]
    total_rows: int
    all_rows: int
    offset: int

    @classmethod
    def from_json(cls, body: dict[str, Any]) -> TableRows:
        return cls(
            columns=body["columns"],
            rows=body["rows"],
            total_rows=body["total_rows"],
            all_rows=body["all_rows"],
            offset=body["offset"],
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


class Listing(list[EntryInfo]):
    """One page of a folder's entries (folders first, then by name): a list, plus ``truncated``
    (more entries follow) and ``next_cursor`` (pass it as ``cursor`` for the next page, or None)."""

    truncated: bool
    next_cursor: str | None

    @classmethod
    def from_json(cls, body: dict[str, Any]) -> Listing:
        listing = cls(EntryInfo.from_json(entry) for entry in body["entries"])
        listing.truncated = bool(body.get("truncated", False))
        listing.next_cursor = body.get("next")
        return listing


@dataclass(frozen=True)
class WriteInfo:
    path: str
    size: int

    @classmethod
    def from_json(cls, body: dict[str, Any]) -> WriteInfo:
        return cls(path=body["path"], size=body["size"])


@dataclass(frozen=True)
class ContextState:
    """One context in a snapshot: the variables saved, and why the others could not be."""

    context_id: str
    default: bool
    saved: list[str]
    unsaved: dict[str, str]  # name → why it could not be pickled


@dataclass(frozen=True)
class SnapshotInfo:
    snapshot_id: str
    sandbox_id: str
    template: str
    metadata: dict[str, str]
    created_at: float
    size: int
    file_count: int
    skipped_files: list[str]  # links and special files, which a snapshot does not keep
    contexts: list[ContextState]

    @classmethod
    def from_json(cls, body: dict[str, Any]) -> SnapshotInfo:
        return cls(
            snapshot_id=body["id"],
            sandbox_id=body["sandbox_id"],
            template=body["template"],
            metadata=body["metadata"],
            created_at=body["created_at"],
            size=body["size"],
            file_count=body["files"]["count"],
            skipped_files=body["files"]["skipped"],
            contexts=[
                ContextState(context_id=c["id"], default=c["default"], saved=c["saved"], unsaved=c["unsaved"])
                for c in body["contexts"]
            ],
        )

    @property
    def unsaved(self) -> dict[str, str]:
        return {name: why for context in self.contexts for name, why in context.unsaved.items()}


@dataclass(frozen=True)
class RestoredContext:
    context_id: str
    restored: list[str]
    unsaved: list[str]  # could not be saved: missing unless ``replayed`` rebuilt them
    replayed: bool
    deferred: list[str] = field(default_factory=list)  # large ones, loaded when first needed


@dataclass(frozen=True)
class RestoreReport:
    snapshot_id: str | None
    contexts: list[RestoredContext]

    @classmethod
    def from_json(cls, body: dict[str, Any] | None) -> RestoreReport | None:
        if body is None:
            return None
        return cls(
            snapshot_id=body.get("snapshot_id"),
            contexts=[
                RestoredContext(
                    context_id=c["id"],
                    restored=c["restored"],
                    unsaved=c["unsaved"],
                    replayed=c["replayed"],
                    deferred=c.get("deferred", []),
                )
                for c in body["contexts"]
            ],
        )

    @property
    def unsaved(self) -> list[str]:
        return sorted(name for context in self.contexts for name in context.unsaved)
