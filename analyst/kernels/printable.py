"""Text a kernel reported, made safe to show: only what prints, cut to a length."""

from __future__ import annotations

import re

PRINTABLE = re.compile(r"[^\x00-\x1f\x7f-\x9f]*")


def printable(value: object, limit: int) -> str:
    """``value``'s printable characters if it is a string ("" otherwise), at most ``limit``."""
    text = value if isinstance(value, str) else ""
    return "".join(PRINTABLE.findall(text))[:limit]
