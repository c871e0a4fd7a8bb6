"""A session taken away: its transcript as a Jupyter notebook, a Python script or an HTML report.

transcript.py reads the event log; notebook.py, script.py and report.py each write one format.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from django.utils import timezone

from analyst.models import AnalysisSession
from analyst.sessions.exports import notebook, report, script, transcript

# format → (writer of (title, blocks, preface), content type)
WRITERS = {
    "ipynb": (notebook.notebook, "application/x-ipynb+json"),
    "py": (script.script, "text/x-python; charset=utf-8"),
    "html": (report.report, "text/html; charset=utf-8"),
}
FORMATS = tuple(WRITERS)


# The report's own policy, sent with it wherever this site serves it: no script, no request out,
# a unique origin; its charts are data: URLs and its styles inline.
REPORT_CSP = "sandbox; default-src 'none'; img-src data:; style-src 'unsafe-inline'"


class UnknownFormat(ValueError):
    pass


@dataclass(frozen=True)
class Export:
    content: bytes
    filename: str
    content_type: str


def export(session: AnalysisSession, format: str) -> Export:
    """The session in ``format`` (one of FORMATS); UnknownFormat otherwise."""
    if format not in FORMATS:
        raise UnknownFormat(f"unknown format {format!r}; choose one of {', '.join(FORMATS)}")
    write, content_type = WRITERS[format]
    text = write(session.title, transcript.read(session), _preface(session))
    return Export(text.encode(), f"{_slug(session.title)}.{format}", content_type)


def _preface(session: AnalysisSession) -> str:
    when = timezone.now().strftime("%Y-%m-%d %H:%M UTC")
    files = [f.path for f in session.files.all()]
    where = f" Its code reads {', '.join(files)} (keep them beside this file)." if files else ""
    return f"Exported from AI data analyst on {when}.{where}"


def _slug(title: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", title).strip("-").lower()[:80] or "analysis"
