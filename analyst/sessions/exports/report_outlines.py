"""The map outlines a report's plotly figures need, held in the report itself: plotly.js fetches a
map's outlines (topojson) from the app's static files as it draws it, which a report opened from
disk, under a policy that lets it fetch nothing, cannot do; maps then drew blank.

plotly.js names the file it wants after the map's scope and resolution (``world_110m``,
``north-america_50m``: its ``getTopojsonName``), and looks in ``window.PlotlyGeoAssets.topojson``
before fetching; the report's drawing script puts there what this module found.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.staticfiles import finders

FOLDER = "vendor/topojson"  # where scripts/vendor-js writes plotly's outlines
MAP_TRACES = frozenset({"scattergeo", "choropleth"})
SCOPES = frozenset({"world", "usa", "europe", "asia", "africa", "north america", "south america"})
RESOLUTIONS = frozenset({110, 50})


def needed(figure: dict[str, Any]) -> set[str]:
    """The outline files ``figure``'s maps are drawn on, as plotly.js names them."""
    layout = figure.get("layout") if isinstance(figure.get("layout"), dict) else {}
    traces = figure.get("data") if isinstance(figure.get("data"), list) else []
    names = set()
    for trace in traces:
        if not isinstance(trace, dict) or trace.get("type") not in MAP_TRACES:
            continue
        subplot = trace.get("geo") if isinstance(trace.get("geo"), str) else "geo"
        geo = layout.get(subplot) if isinstance(layout.get(subplot), dict) else {}
        scope = geo.get("scope") if geo.get("scope") in SCOPES else "world"
        resolution = geo.get("resolution") if geo.get("resolution") in RESOLUTIONS else 110
        names.add(f"{scope.replace(' ', '-')}_{resolution}m")
    return names


def outlines(names: set[str]) -> dict[str, Any]:
    """Each named outline file this server has, read; those it lacks are left to plotly.js."""
    found = {}
    for name in sorted(names):
        path = _static(f"{FOLDER}/{name}.json")
        if path is not None:
            found[name] = json.loads(path.read_text(encoding="utf-8"))
    return found


def _static(name: str) -> Path | None:
    found = finders.find(name)
    path = Path(found) if isinstance(found, str) else Path(settings.STATIC_ROOT) / name
    return path if path.is_file() else None
