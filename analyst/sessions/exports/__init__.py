"""A session taken away: its transcript as a Jupyter notebook, a Python script or an HTML report;
the notebook or the script also as a .zip with its data and a requirements.txt (bundle.py).

transcript.py reads the event log; notebook.py, script.py and report.py each write one format;
runtime.py says what the sandbox gave every cell, which an export must give its code elsewhere.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import IO

from django.utils import timezone

from analyst.files.reading import is_packed
from analyst.models import AnalysisSession
from analyst.sessions.exports import bundle, notebook, report, report_scripts, script, transcript

# format → (writer of (title, blocks, preface), content type)
WRITERS = {
    "ipynb": (notebook.notebook, "application/x-ipynb+json"),
    "py": (script.script, "text/x-python; charset=utf-8"),
    "html": (report.report, "text/html; charset=utf-8"),
}
FORMATS = tuple(WRITERS)
BUNDLED = ("ipynb", "py")  # the formats that run, and so come as a .zip with their data too

# The report's own policy, for a response that serves it as a page: a unique origin, no request
# out, its charts data: URLs, its styles inline, and no script but plotly.js and the one that
# draws its figures with it (by their hashes), which only a report holding a plotly figure has.
report_policy = report_scripts.served_policy


class UnknownFormat(ValueError):
    pass


@dataclass(frozen=True)
class Export:
    content: bytes
    filename: str
    content_type: str


@dataclass(frozen=True)
class Bundle:
    file: IO[bytes]  # the .zip, at its start; closing it deletes it
    filename: str


def export(session: AnalysisSession, format: str) -> Export:
    """The session in ``format`` (one of FORMATS); UnknownFormat otherwise."""
    if format not in FORMATS:
        raise UnknownFormat(f"unknown format {format!r}; choose one of {', '.join(FORMATS)}")
    write, content_type = WRITERS[format]
    blocks = transcript.read(session, superseded=format == "html")  # the report folds them away
    text = write(session.title, blocks, _preface(session, format))
    return Export(text.encode(), f"{_slug(session.title)}.{format}", content_type)


def export_bundle(session: AnalysisSession, format: str) -> Bundle:
    """The session in ``format`` (one of BUNDLED) with its data and requirements.txt, as a .zip;
    UnknownFormat otherwise."""
    if format not in BUNDLED:
        raise UnknownFormat(f"a .zip holds a notebook or a script: choose one of {', '.join(BUNDLED)}")
    made = export(session, format)
    cells = [block for block in transcript.read(session, stored=False) if isinstance(block, transcript.Code)]
    folder = _slug(session.title)
    target = bundle.temporary()
    bundle.write(
        target, folder=folder, export_name=made.filename, export=made.content, cells=cells,
        files=list(session.files.all()),
    )  # fmt: skip
    target.seek(0)
    return Bundle(target, f"{folder}-{format}.zip")


def _preface(session: AnalysisSession, format: str) -> str:
    when = timezone.now().strftime("%Y-%m-%d %H:%M UTC")
    said = f"Exported from AI data analyst on {when}."
    files = list(session.files.all())
    if format in BUNDLED and files:
        paths = ", ".join(f.path for f in files)
        said += (
            f" Its code reads {paths}: put them at those paths beside this file (the .zip download"
            " holds them there, with a requirements.txt of the packages it imports)."
        )
        packed = [f.path for f in files if is_packed(f)]
        said += "".join(
            f" The sandbox unpacked {path} beside itself: unpack it there too." for path in packed
        )
    elif files:
        said += f" Its code reads {', '.join(f.path for f in files)}."
    return said


def _slug(title: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", title).strip("-").lower()[:80] or "analysis"
