"""A published report's latest version as data, for a dashboard or a spreadsheet to pull: its
answers, the tables its cells showed (their Table Schema data resource, as the kernel sends it
for the page's grid) and what each cell printed. Bounded: so many of each, each cut."""

from __future__ import annotations

import json
from typing import Any

from analyst.models import Publication
from analyst.runs import published_cells, publishing
from analyst.sessions.exports.transcript import Code, Prose, Rich, read

TABLE = "application/vnd.dataresource+json"
MAX_ANSWERS = 50
MAX_ANSWER_CHARS = 20_000
MAX_TABLES = 20
MAX_ROWS = 1_000  # what the kernel sends at most anyway
TABLES_BUDGET = 8 << 20  # bytes of JSON
MAX_CELLS = 500
MAX_PRINTED_CHARS = 20_000


def latest(publication: Publication) -> dict[str, Any]:
    current, _ = publishing.chosen(publication, publishing.done_runs(publication.session), None)
    run = current.run
    cells = published_cells.indexed(current.session, run=run is not None, stored=True)
    answers = [
        block.text[:MAX_ANSWER_CHARS]
        for block in read(current.session, stored=False)
        if isinstance(block, Prose) and block.role == "assistant"
    ]
    return {
        "session": str(publication.session_id),
        "title": publication.session.title,
        "version": {
            "run": str(run.id) if run else None,
            "finished_at": run.turn.finished_at.isoformat() if run and run.turn.finished_at else None,
            "parameters": run.parameters if run else {},
        },
        "answers": answers[-MAX_ANSWERS:],
        "tables": _tables(cells),
        "outputs": [
            {"cell": index, "text": published_cells.text(cell)[:MAX_PRINTED_CHARS]}
            for index, cell in cells[:MAX_CELLS]
        ],
    }


def _tables(cells: list[tuple[int, Code]]) -> list[dict[str, Any]]:
    """The tables the cells that succeeded showed, in order, while they fit TABLES_BUDGET."""
    tables: list[dict[str, Any]] = []
    used = 0
    for index, cell in cells:
        if cell.failed:
            continue
        for output in cell.outputs:
            resource = output.data.get(TABLE) if isinstance(output, Rich) else None
            if not isinstance(resource, dict):
                continue
            table = _table(index, resource)
            used += len(json.dumps(table))
            if used > TABLES_BUDGET or len(tables) == MAX_TABLES:
                return tables
            tables.append(table)
    return tables


def _table(index: int, resource: dict[str, Any]) -> dict[str, Any]:
    schema = resource.get("schema") if isinstance(resource.get("schema"), dict) else {}
    fields = schema.get("fields") if isinstance(schema.get("fields"), list) else []
    rows = resource.get("data") if isinstance(resource.get("data"), list) else []
    return {
        "cell": index,
        "columns": [field for field in fields if isinstance(field, dict)],
        "rows": rows[:MAX_ROWS],
        "total_rows": resource.get("total_rows"),
        "total_columns": resource.get("total_columns"),
    }
