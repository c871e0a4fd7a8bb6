"""Files placed over /proc inside a sandbox, so that what a kernel reads there is its own limits.

Libraries size their caches and worker pools from /proc/meminfo; the host's would tell a 1 GiB
sandbox that it has the whole machine. The view is written once, when the sandbox starts, as a
sandbox that uses nothing yet: MemTotal is its limit, MemFree and MemAvailable the limit (or what
the host had available then, if less), every usage figure 0. It does not follow use.
"""

from __future__ import annotations

from pathlib import Path

HOST_MEMINFO = Path("/proc/meminfo")
# Sizes that are not amounts of memory in use, kept as the host has them.
KEPT = frozenset({"Hugepagesize", "VmallocTotal"})


def meminfo(limit_bytes: int, host: str | None = None) -> str:
    """The host's /proc/meminfo, its fields in their order, with the sandbox's figures."""
    text = HOST_MEMINFO.read_text() if host is None else host
    limit_kb = limit_bytes // 1024
    fields: list[tuple[str, int | str]] = []
    for line in text.splitlines():
        name, _, rest = line.partition(":")
        number, _, unit = rest.strip().partition(" ")
        if unit == "kB" and number.isdigit():
            fields.append((name, int(number)))
        else:
            fields.append((name, rest.strip()))  # counts, such as HugePages_Total
    host_kb = {name: value for name, value in fields if isinstance(value, int)}
    free_kb = min(limit_kb, host_kb.get("MemAvailable", limit_kb))
    sandbox_kb = {"MemTotal": limit_kb, "MemFree": free_kb, "MemAvailable": free_kb, "CommitLimit": limit_kb}
    lines = []
    for name, value in fields:
        if isinstance(value, int):
            shown = sandbox_kb.get(name, value if name in KEPT else 0)
            lines.append(f"{name + ':':<16}{shown:>8} kB")
        else:
            lines.append(f"{name + ':':<16}{'0' if name.startswith('HugePages') else value:>8}")
    return "\n".join(lines) + "\n"
