"""Each sandbox's last connections out, and the service's totals since it started."""

from __future__ import annotations

import collections
import time
from dataclasses import dataclass

KEPT = 200


@dataclass
class Totals:
    """What /stats reports as "egress" (and the web app's /metrics exports)."""

    connections: int = 0
    refused: int = 0
    bytes_in: int = 0
    bytes_out: int = 0

    def info(self) -> dict[str, int]:
        return {
            "connections": self.connections,
            "refused": self.refused,
            "bytes_in": self.bytes_in,
            "bytes_out": self.bytes_out,
        }


@dataclass
class Record:
    """One connection: ``bytes_in`` came from the destination into the sandbox, ``bytes_out`` went
    the other way; ``refused`` says why it was not made, else None."""

    host: str
    port: int
    name: str | None
    totals: Totals
    started_at: float = 0.0
    ended_at: float | None = None
    bytes_in: int = 0
    bytes_out: int = 0
    refused: str | None = None

    def count_in(self, size: int) -> None:
        self.bytes_in += size
        self.totals.bytes_in += size

    def count_out(self, size: int) -> None:
        self.bytes_out += size
        self.totals.bytes_out += size

    def made(self) -> None:
        self.totals.connections += 1

    def refuse(self, why: str) -> None:
        self.refused = why
        self.totals.refused += 1
        self.end()

    def end(self) -> None:
        if self.ended_at is None:
            self.ended_at = time.time()

    def info(self) -> dict[str, object]:
        return {
            "host": self.host,
            "port": self.port,
            "name": self.name,
            "bytes_in": self.bytes_in,
            "bytes_out": self.bytes_out,
            "started_at": self.started_at,
            "ended_at": self.ended_at,
            "refused": self.refused,
        }


class ConnectionLog:
    """A sandbox's last KEPT connections, newest last, counted into the service's totals."""

    def __init__(self, totals: Totals) -> None:
        self.totals = totals
        self.records: collections.deque[Record] = collections.deque(maxlen=KEPT)

    def open(self, host: str, port: int, name: str | None) -> Record:
        """A record for a connection asked for now (refuse() it, or count it as made)."""
        record = Record(host, port, name, self.totals, started_at=time.time())
        self.records.append(record)
        return record

    def info(self) -> list[dict[str, object]]:
        return [record.info() for record in self.records]
