"""A session as an hour with the analyst leaves it, written to the log as a worker writes it:
2,000 events, a dozen questions, each answered through a table looked at, a failed attempt, a
table and a chart (matplotlib PNGs, two plotly figures), streamed answers, one cell that printed
5,000 lines, and one answer asked again (Regenerate)."""

from __future__ import annotations

import base64
import struct
import zlib
from typing import Any

from analyst.models import AnalysisSession, Event

EVENTS = 2_000
QUESTIONS = 12
PRINTED_LINES = 5_000
TRACEBACK = "\n".join(
    ["\x1b[31m---------------------------------------------------------------------------\x1b[0m"]
    + [
        f"File /opt/template/venv/lib/python3.11/site-packages/pandas/core/frame.py:{n}, in f{n}()"
        for n in range(24)
    ]
    + ["KeyError: 'margin'"]
)


def png(width: int = 640, height: int = 480) -> str:
    """A matplotlib-sized PNG (base64), as a result carries one."""
    row = b"\x00" + bytes(range(256)) * (width * 3 // 256) + b"\x00" * (width * 3 % 256)
    chunk = lambda kind, data: (  # noqa: E731
        struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    )
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    image = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(row * height))
    return base64.b64encode(image + chunk(b"IEND", b"")).decode()


def table(rows: int, n: int) -> str:
    body = "".join(f"<tr><th>{i}</th><td>region {i}</td><td>{n * 10 + i}</td></tr>" for i in range(rows))
    head = "<thead><tr><th></th><th>region</th><th>amount</th></tr></thead>"
    return f"<table border='1' class='dataframe'>{head}<tbody>{body}</tbody></table>"


def turn(n: int, deltas: int, **marks: Any) -> list[tuple[str, dict[str, Any]]]:
    chart = PNG if n % 3 else None
    figure = {
        "data": [{"type": "bar", "x": ["north", "south"], "y": [n, n + 1]}],
        "layout": {"title": {"text": f"Step {n}"}},
    }
    logged: list[tuple[str, dict[str, Any]]] = [
        ("user_message", {"text": f"Question {n}: which region sells most, and how has it moved?"}),
        ("turn_started", {"kind": "chat"}),
        ("assistant_message", {"text": f"Let me look at the data for step {n}."}),
        ("tool_call", {"id": f"toolu_{n}a", "code": "df.head()"}),
        ("result", {"data": {"text/html": table(5, n), "text/plain": "..."}, "is_main_result": True}),
        ("tool_call", {"id": f"toolu_{n}b", "code": "df['margin'].mean()"}),
        ("error", {"name": "KeyError", "value": "'margin'", "traceback": TRACEBACK}),
        (
            "tool_call",
            {"id": f"toolu_{n}c", "code": f"summary = df.groupby('region').amount.sum()  # {n}\nsummary"},
        ),
        ("stdout", {"text": f"regions: 10\nrows: {n * 100}\n"}),
        ("result", {"data": {"text/html": table(10, n), "text/plain": "..."}, "is_main_result": True}),
    ]
    if n == 4:
        lines = PRINTED_LINES // 50
        logged.append(
            ("tool_call", {"id": f"toolu_{n}p", "code": "for row in df.itertuples():\n    print(row)"})
        )
        logged += [
            (
                "stdout",
                {
                    "text": "".join(
                        f"Pandas(Index={i}, region='north')\n" for i in range(k * lines, (k + 1) * lines)
                    )
                },
            )
            for k in range(50)
        ]
    if chart:
        logged.append(("tool_call", {"id": f"toolu_{n}d", "code": "summary.plot.bar()\nplt.show()"}))
        logged.append(("result", {"data": {"image/png": chart, "text/plain": "<Figure size 640x480>"}}))
    if n in (2, 9):
        logged.append(("tool_call", {"id": f"toolu_{n}e", "code": "px.bar(summary).show()"}))
        logged.append(
            ("result", {"data": {"application/vnd.plotly.v1+json": figure, "text/plain": "Figure"}})
        )
    logged += [("assistant_delta", {"text": "South "})] * deltas
    answer = f"**South** sells most at step {n}: {n * 10 + 9}.\n\nNorth follows.\n\n- one\n- two"
    logged += [("assistant_message", {"text": answer}), ("turn_done", {"usage": {}})]
    return [(kind, {**payload, **marks}) for kind, payload in logged]


PNG = png()


def hour_long_session(owner: Any, title: str = "An hour of questions") -> AnalysisSession:
    """The session, its log written straight to the database."""
    fixed = [("file_added", {"id": 1, "path": "data/sales.csv", "rows": 3376, "columns": 12})]
    # Question 5 is answered, then asked again (its first answer marked as a fork's copy marks it).
    bare = sum(len(turn(n, 0)) for n in range(QUESTIONS)) + len(turn(5, 0))
    spare = EVENTS - len(fixed) - bare  # streamed pieces of the answers make up the rest
    turns = [turn(n, spare // QUESTIONS + (n < spare % QUESTIONS)) for n in range(QUESTIONS)]
    turns.insert(5, turn(5, 0, superseded=True))
    logged = fixed + [event for events in turns for event in events]
    assert len(logged) == EVENTS, len(logged)
    session = AnalysisSession.objects.create(owner=owner, model="anthropic/claude-test", title=title)
    rows = [
        Event(session=session, seq=n, type=kind, payload=payload)
        for n, (kind, payload) in enumerate(logged, 1)
    ]
    Event.objects.bulk_create(rows, batch_size=500)
    AnalysisSession.objects.filter(id=session.id).update(next_seq=len(rows) + 1)
    return session
