"""Where a test database is, and who may log in to it."""

from __future__ import annotations

from dataclasses import dataclass

# The rows every test database's `orders` table holds: ids 1..ORDER_ROWS, `amount` = id * 1.5.
ORDER_ROWS = 50


@dataclass(frozen=True)
class Database:
    host: str
    port: int
    user: str
    password: str
    database: str

    def url(self, scheme: str) -> str:
        """The connection's URL as a user gives it: no password in it."""
        return f"{scheme}://{self.user}@{self.host}:{self.port}/{self.database}"
