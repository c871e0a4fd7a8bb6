"""Under memory pressure the least recently used idle sandboxes are paused first, and a new one is
refused only when pausing cannot make room. The host's available memory is the one input we
cannot move in a test, so it is given to the pauser here; the sandboxes and snapshots beside it
are stand-ins that record what was paused (the real pause is proven in test_pause_and_resume)."""

from __future__ import annotations

import asyncio
import time
import uuid
from dataclasses import dataclass, field

import pytest

from sandboxes import CapacityExceeded
from sandboxes.server.paused_records import PausedRecords
from sandboxes.server.pausing.pauser import PRESSURE_MIN_IDLE, Pauser

GIB = 1 << 30


@dataclass
class StandIn:
    id: str
    idle: float
    busy: bool = False
    users: int = 0
    template: str = "code-interpreter"
    metadata: dict = field(default_factory=dict)
    created_at: float = 0.0
    ttl_seconds: int = 3600
    default_context_id: str = "default"
    idempotency_key: str = ""
    contexts: dict = field(default_factory=lambda: {"default": object()})
    pause_held: str = ""

    def __post_init__(self) -> None:
        self.last_used = time.monotonic() - self.idle

    def idle_seconds(self) -> float:
        return 0.0 if self.busy or self.users else time.monotonic() - self.last_used

    async def kill(self) -> None:
        pass


class Host:
    """sandboxd's registry and snapshots, as far as the pauser uses them; each pause frees 1 GiB."""

    def __init__(self, available: int, max_sandboxes: int = 64) -> None:
        self.available = available
        self.config = type("Config", (), {"max_sandboxes": max_sandboxes})()
        self.sandboxes: dict[str, StandIn] = {}
        self.paused: dict = {}
        self.order: list[str] = []
        self.store = self

    def add(self, name: str, **kwargs: object) -> None:
        self.sandboxes[name] = StandIn(name, **kwargs)  # type: ignore[arg-type]

    async def take(self, sandbox: StandIn, *, whole: bool) -> dict:
        self.order.append(sandbox.id)
        self.available += GIB
        return {"id": uuid.uuid4().hex, "size": 1, "contexts": [{"unsaved": {}}]}

    def release(self, sandbox_id: str) -> None:
        pass

    def delete(self, snapshot_id: str) -> None:
        pass


@pytest.fixture
def records(tmp_path, monkeypatch):
    store = PausedRecords(tmp_path)
    monkeypatch.setattr(store, "save", lambda record: None)  # stand-ins have no 32-hex ids
    return store


def pauser(host: Host, records: PausedRecords, reserve: int) -> Pauser:
    return Pauser(
        host,  # type: ignore[arg-type]
        host,  # type: ignore[arg-type]
        records,
        idle_pause_seconds=3600,
        hold_limit_seconds=7200,
        memory_reserve=reserve,
        memory=lambda: host.available,
    )


def test_pressure_pauses_the_least_recently_used_idle_sandboxes_first(records):
    host = Host(available=GIB // 2)
    host.add("recent", idle=PRESSURE_MIN_IDLE + 5)
    host.add("oldest", idle=PRESSURE_MIN_IDLE + 500)
    host.add("older", idle=PRESSURE_MIN_IDLE + 50)
    host.add("fresh", idle=1)  # used a moment ago: not under PRESSURE_MIN_IDLE
    asyncio.run(pauser(host, records, reserve=2 * GIB).watch_once())
    assert host.order == ["oldest", "older"]  # 0.5 + 1 + 1 GiB: back over the reserve
    assert sorted(host.sandboxes) == ["fresh", "recent"]


def test_pressure_never_pauses_a_running_cell_or_a_request(records):
    host = Host(available=0)
    host.add("running", idle=PRESSURE_MIN_IDLE + 500, busy=True)
    host.add("serving", idle=PRESSURE_MIN_IDLE + 400, users=1)
    host.add("idle", idle=PRESSURE_MIN_IDLE + 100)
    asyncio.run(pauser(host, records, reserve=10 * GIB).watch_once())
    assert host.order == ["idle"]


def test_admission_pauses_idle_ones_and_refuses_only_when_none_is_left(records):
    host = Host(available=GIB)
    host.add("a", idle=10)
    host.add("b", idle=20, busy=True)
    watcher = pauser(host, records, reserve=GIB + GIB // 2)
    asyncio.run(watcher.make_room())  # 1 GiB < 1.5 GiB + a new kernel: "a" is paused
    assert host.order == ["a"]
    host.available = GIB  # short again, and only a busy sandbox is left
    with pytest.raises(CapacityExceeded) as refused:
        asyncio.run(watcher.make_room())
    assert (
        "short of memory" in refused.value.message
        and "none of the running sandboxes is idle" in refused.value.message
    )
