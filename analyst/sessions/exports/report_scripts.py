"""The only scripts a report may hold, inline, and only when it holds a plotly figure: the app's own
plotly.js (static/vendor/plotly.min.js, pinned in package.json), then the app's figure drawing
(static/app/plotly_figure.js, the session page's own, which takes out whatever a figure would
fetch) with a loop drawing each figure the report holds as JSON data. The report's policy lets
these two run by their hashes, and nothing else.
"""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from django.conf import settings
from django.contrib.staticfiles import finders

PLOTLY = "vendor/plotly.min.js"
FIGURE_DRAWING = "app/plotly_figure.js"
# Each figure's JSON sits in a data block (never run) where the chart goes; the outlines its maps
# need, in one more (report_outlines.py), where plotly.js looks before it would fetch them.
DRAW_EACH = """
const outlines = document.getElementById("map-outlines");
if (outlines) {
  const assets = (window.PlotlyGeoAssets ??= {});
  assets.topojson = Object.assign(assets.topojson ?? {}, JSON.parse(outlines.textContent));
}
for (const held of document.querySelectorAll("script.figure-data")) {
  const box = document.createElement("div");
  box.className = "figure";
  held.before(box);
  drawFigure(window.Plotly, box, held.textContent).catch(() => {
    box.textContent = "This chart could not be drawn.";
  });
}
"""
# What a report may do, as a meta element (opened from disk) and as its header (served here).
POLICY = "default-src 'none'; img-src data:; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"


@dataclass(frozen=True)
class Scripts:
    plotly: str  # a classic script
    drawing: str  # a module: it runs after the classic one

    def policy(self) -> str:
        hashes = " ".join(f"'sha256-{_digest(script)}'" for script in (self.plotly, self.drawing))
        return f"{POLICY}; script-src {hashes}"


@cache
def scripts() -> Scripts | None:
    """The scripts, read once; None when this server has no plotly.js (scripts/vendor-js not run)."""
    plotly, drawing = _static(PLOTLY), _static(FIGURE_DRAWING)
    if plotly is None or drawing is None:
        return None
    return Scripts(plotly, drawing + DRAW_EACH)


def served_policy() -> str:
    """The header of a report served by this site: its own origin-less sandbox, where the
    figures' scripts may run and nothing else."""
    found = scripts()
    return f"sandbox allow-scripts; {found.policy() if found else POLICY}"


def _static(name: str) -> str | None:
    """The static file's text, if this server has it and it can sit in a <script> element."""
    found = finders.find(name)
    path = Path(found) if isinstance(found, str) else Path(settings.STATIC_ROOT) / name
    text = path.read_text(encoding="utf-8") if path.is_file() else None
    return None if text is None or "</script" in text.lower() else text


def _digest(script: str) -> str:
    return base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
