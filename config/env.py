"""Tiny typed readers for settings from environment variables (``NAME_FILE`` for secrets)."""

from __future__ import annotations

import os
from pathlib import Path


def load_dotenv(path: Path) -> None:
    """Read KEY=VALUE lines from ``path`` into os.environ without overriding what is set."""
    if not path.exists():
        return
    for raw in path.read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, value = line.partition("=")
        os.environ.setdefault(key.strip(), value.strip().strip("'\""))


def envstr(name: str, default: str = "") -> str:
    return os.environ.get(name) or default


def envbool(name: str, default: bool = False) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in ("1", "true", "yes", "on")


def envint(name: str, default: int) -> int:
    value = os.environ.get(name)
    return default if value in (None, "") else int(value)


def envfloat(name: str, default: float) -> float:
    value = os.environ.get(name)
    return default if value in (None, "") else float(value)


def envsecret(name: str, default: str = "") -> str:
    """``NAME`` itself, or the contents of the file named by ``NAME_FILE`` (Docker secrets)."""
    path = os.environ.get(f"{name}_FILE")
    if path:
        return Path(path).read_text().strip()
    return os.environ.get(name) or default


def envbytes(name: str, default: int) -> int:
    """A size such as ``2G``, ``512M``, ``100k`` or plain bytes."""
    value = os.environ.get(name, "").strip()
    if not value:
        return default
    units = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
    suffix = value[-1].lower()
    if suffix in units:
        return int(float(value[:-1]) * units[suffix])
    return int(value)
