"""Charts told in words, for the model: a chart's type, title, axes (titles and ranges) and each
trace's name, kind, point count and extreme points, so a model that cannot see images (or sees
only a PNG) can still read it.

Two sources, both written by the kernel's code and so hostile: a plotly figure's JSON
(application/vnd.plotly.v1+json), and the facts the template gathers from a matplotlib figure
as it is displayed (REPORTED, made by the code-interpreter template's chart_facts.py). Only
known keys at known depths are read, every list is cut, every text is cut, and a budget bounds
how many values one chart may scan: whatever arrives, a description is short and quick.
"""

from __future__ import annotations

import array
import base64
import binascii
import json
import math
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from sandboxes import Result

PLOTLY = "application/vnd.plotly.v1+json"
REPORTED = "application/vnd.analyst.chart+json"
MAX_CHARTS = 10  # described per cell
MAX_PANELS = 6
MAX_TRACES = 12  # described per panel
MAX_TRACES_READ = 200  # a figure's traces looked at, at all
MAX_SCANNED = 200_000  # values one chart reads in all, for ranges and extreme points
MAX_TEXT = 80
MAX_EXAMPLES = 5  # categories named for a category axis
# plotly's typed arrays ({"dtype": "f8", "bdata": base64}) as Python's array codes.
TYPED = {"i1": "b", "u1": "B", "i2": "h", "u2": "H", "i4": "i", "u4": "I", "f4": "f", "f8": "d"}
NO_AXES = {"pie", "sunburst", "treemap", "icicle", "funnelarea", "sankey", "table", "indicator"}
NO_EXTREMES = {"histogram", "histogram2d", "histogram2dcontour", "box", "violin", "heatmap", "contour"}
AXIS_ID = re.compile(r"[xy][0-9]{0,2}")
DATE = re.compile(r"[0-9]{4}-[0-9]{2}")

Value = float | str


@dataclass(frozen=True)
class Point:
    at: Value | None  # where on the other axis (or a pie slice's label)
    value: float


@dataclass(frozen=True)
class Trace:
    name: str
    kind: str
    points: int
    highest: Point | None = None
    lowest: Point | None = None
    value_axis: str = "y"  # "x" for horizontal bars


@dataclass(frozen=True)
class Axis:
    title: str
    low: Value | None = None
    high: Value | None = None
    categories: int = 0  # a category axis: how many (some of them in examples)
    examples: tuple[str, ...] = ()


@dataclass(frozen=True)
class Panel:
    title: str
    x: Axis | None
    y: Axis | None
    traces: tuple[Trace, ...]
    more_traces: int = 0


@dataclass(frozen=True)
class Chart:
    library: str
    title: str
    panels: tuple[Panel, ...]
    more_panels: int = 0
    unread_traces: int = 0  # past the MAX_TRACES_READ looked at, in no panel


def describe_results(results: Iterable[Result]) -> str:
    """Every chart among a cell's results, described, or "" when there is none."""
    charts = [chart for chart in map(chart_of, results) if chart is not None]
    texts = [describe(chart, number) for number, chart in enumerate(charts[:MAX_CHARTS], 1)]
    if len(charts) > MAX_CHARTS:
        texts.append(f"[{len(charts) - MAX_CHARTS} more charts not described]")
    return "\n".join(texts)


def chart_of(result: Result) -> Chart | None:
    if PLOTLY in result.extra:
        return from_plotly(result.extra[PLOTLY])
    if REPORTED in result.extra:
        return from_report(result.extra[REPORTED])
    return None


def describe(chart: Chart, number: int) -> str:
    kinds = list(dict.fromkeys(trace.kind for panel in chart.panels for trace in panel.traces))
    title = _quoted(chart.title) if chart.title else "no title"
    lines = [f"[Chart {number} ({chart.library}{', ' + ', '.join(kinds) if kinds else ''}): {title}]"]
    for index, panel in enumerate(chart.panels, 1):
        if len(chart.panels) > 1 or panel.title:
            lines.append(f"Plot {index}" + (f": {_quoted(panel.title)}" if panel.title else ""))
        axes = [f"{name} axis {_axis(axis)}" for name, axis in (("x", panel.x), ("y", panel.y)) if axis]
        if axes:
            lines.append("; ".join(axes))
        lines += [f"- {_trace(trace)}" for trace in panel.traces]
        if panel.more_traces:
            lines.append(f"- and {panel.more_traces} more traces")
    if chart.more_panels:
        lines.append(f"and {chart.more_panels} more plots")
    if chart.unread_traces:
        lines.append(f"and {chart.unread_traces} more traces")
    return "\n".join(lines)


def _axis(axis: Axis) -> str:
    text = _quoted(axis.title) if axis.title else "(no title)"
    if axis.categories:
        shown = ", ".join(map(_quoted, axis.examples)) + (
            ", …" if axis.categories > len(axis.examples) else ""
        )
        return f"{text}: {axis.categories} categories ({shown})"
    if axis.low is not None and axis.high is not None:
        return f"{text}: {_value(axis.low)} to {_value(axis.high)}"
    return text


def _trace(trace: Trace) -> str:
    name = _quoted(trace.name) if trace.name else "(unnamed)"
    unit = "slices" if trace.kind == "pie" else "points"
    text = f"{name}: {trace.kind}, {trace.points:,} {unit}"
    at = "y" if trace.value_axis == "x" else "x"
    for word, point in (("highest", trace.highest), ("lowest", trace.lowest)):
        if point is None:
            continue
        if trace.kind == "pie":
            text += f"; {'largest' if word == 'highest' else 'smallest'} {_value(point.value)}"
            text += f" ({_value(point.at)})" if point.at is not None else ""
        else:
            text += f"; {word} {trace.value_axis}={_value(point.value)}"
            text += f" at {at}={_value(point.at)}" if point.at is not None else ""
    return text


def _value(value: Value) -> str:
    if isinstance(value, str):
        return _quoted(value)
    if value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return f"{value:.6g}"


def _quoted(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


# -- plotly figures --------------------------------------------------------------------------


class _Budget:
    """How many more values a chart may read."""

    def __init__(self) -> None:
        self.left = MAX_SCANNED

    def take(self, wanted: int) -> int:
        granted = max(0, min(wanted, self.left))
        self.left -= granted
        return granted


@dataclass(frozen=True)
class _Array:
    count: int  # the array's whole length
    values: list[Value | None]  # its first values, as many as the budget allowed


EMPTY = _Array(0, [])


def from_plotly(figure: object) -> Chart | None:
    """A plotly figure's JSON (what fig.to_plotly_json() gives), or None when it is not one."""
    data = figure.get("data", []) if isinstance(figure, dict) else None
    if not isinstance(figure, dict) or not isinstance(data, list):
        return None
    layout = _mapping(figure.get("layout"))
    budget = _Budget()
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for trace in data[:MAX_TRACES_READ]:
        if isinstance(trace, dict):
            kind = _text(trace.get("type")) or "scatter"
            axes = ("", "") if kind in NO_AXES else (_axis_id(trace, "x"), _axis_id(trace, "y"))
            groups.setdefault(axes, []).append(trace)
    panels = [
        _plotly_panel(axes, traces, layout, budget) for axes, traces in list(groups.items())[:MAX_PANELS]
    ]
    more_panels, unread = max(0, len(groups) - MAX_PANELS), max(0, len(data) - MAX_TRACES_READ)
    return Chart("plotly", _title(layout.get("title")), tuple(panels), more_panels, unread)


def _plotly_panel(
    axes: tuple[str, str], traces: list[dict[str, Any]], layout: dict[str, Any], budget: _Budget
) -> Panel:
    read = [_plotly_trace(trace, budget) for trace in traces[:MAX_TRACES]]
    more = max(0, len(traces) - MAX_TRACES)
    if not axes[0]:
        return Panel("", None, None, tuple(trace for trace, _, _ in read), more)
    x_axis = _plotly_axis(layout, axes[0], [x for _, x, _ in read])
    y_axis = _plotly_axis(layout, axes[1], [y for _, _, y in read])
    return Panel("", x_axis, y_axis, tuple(trace for trace, _, _ in read), more)


def _plotly_trace(trace: dict[str, Any], budget: _Budget) -> tuple[Trace, _Array, _Array]:
    kind = _text(trace.get("type")) or "scatter"
    name = _text(trace.get("name"))
    if kind in NO_AXES:
        values = _array(trace.get("values"), budget)
        labels = _array(trace.get("labels"), budget)
        highest, lowest = _extremes(labels, values)
        return Trace(name, "pie" if kind == "pie" else kind, values.count, highest, lowest), EMPTY, EMPTY
    if kind in ("scatter", "scattergl"):
        mode = _text(trace.get("mode"))
        kind = "scatter" if mode and "lines" not in mode else "line"
    x, y = _array(trace.get("x"), budget), _array(trace.get("y"), budget)
    horizontal = trace.get("orientation") == "h"
    positions, values = (y, x) if horizontal else (x, y)
    points = max(x.count, y.count, _array(trace.get("z"), _Budget()).count)
    highest, lowest = (None, None) if kind in NO_EXTREMES else _extremes(positions, values)
    return Trace(name, kind, points, highest, lowest, "x" if horizontal else "y"), x, y


def _plotly_axis(layout: dict[str, Any], axis_id: str, arrays: list[_Array]) -> Axis:
    settings = _mapping(layout.get(axis_id[0] + "axis" + axis_id[1:]))
    title = _title(settings.get("title"))
    given = settings.get("range")
    if isinstance(given, list) and len(given) == 2:
        low, high = (_scalar(value) for value in given)
        if low is not None and high is not None:
            return Axis(title, low, high)
    return _axis_of(title, [value for each in arrays for value in each.values])


def _axis_of(title: str, values: list[Value | None]) -> Axis:
    """An axis's span from the values plotted on it: numbers' range, dates' range, or categories."""
    numbers = [value for value in values if isinstance(value, float)]
    texts = [value for value in values if isinstance(value, str)]
    if numbers and len(numbers) >= len(texts):
        return Axis(title, min(numbers), max(numbers))
    if texts and all(DATE.match(text) for text in texts):
        return Axis(title, min(texts), max(texts))
    if texts:
        distinct = list(dict.fromkeys(texts))
        return Axis(title, categories=len(distinct), examples=tuple(distinct[:MAX_EXAMPLES]))
    return Axis(title)


def _extremes(positions: _Array, values: _Array) -> tuple[Point | None, Point | None]:
    numbered = [(index, value) for index, value in enumerate(values.values) if isinstance(value, float)]
    if not numbered:
        return None, None
    high = max(numbered, key=lambda item: item[1])
    low = min(numbered, key=lambda item: item[1])

    def point(index: int, value: float) -> Point:
        at = positions.values[index] if index < len(positions.values) else None
        return Point(float(index) if positions.count == 0 else at, value)  # plotly's default x: 0, 1, …

    return point(*high), point(*low)


def _array(value: object, budget: _Budget) -> _Array:
    if isinstance(value, list):
        return _Array(len(value), [_scalar(item) for item in value[: budget.take(len(value))]])
    if isinstance(value, dict):
        return _typed_array(value, budget)
    return EMPTY


def _typed_array(value: dict[str, Any], budget: _Budget) -> _Array:
    """plotly's base64 typed array, of which only the first values the budget allows are decoded."""
    code, encoded = TYPED.get(str(value.get("dtype"))), value.get("bdata")
    if code is None or not isinstance(encoded, str):
        return EMPTY
    size = array.array(code).itemsize
    count = (len(encoded) * 3 // 4 - encoded[-2:].count("=")) // size
    wanted = budget.take(count)
    try:
        raw = base64.b64decode(encoded[: -(-wanted * size // 3) * 4], validate=True)
    except (binascii.Error, ValueError):
        return EMPTY
    numbers = array.array(code, raw[: len(raw) // size * size][: wanted * size])
    if sys.byteorder == "big":
        numbers.byteswap()
    return _Array(count, [_scalar(number) for number in numbers])


# -- what the template reports of a matplotlib figure -----------------------------------------


def from_report(report: object) -> Chart | None:
    """The kernel's account of a figure (see chart_facts.py in the template), checked: None when
    it is not one, and whatever is wrong in a part leaves that part out."""
    if not isinstance(report, dict) or not isinstance(report.get("axes"), list):
        return None
    axes = [item for item in report["axes"][: MAX_PANELS * 4] if isinstance(item, dict)]
    panels = tuple(_reported_panel(item) for item in axes[:MAX_PANELS])
    return Chart("matplotlib", _text(report.get("title")), panels, max(0, len(axes) - MAX_PANELS))


def _reported_panel(item: dict[str, Any]) -> Panel:
    traces = item.get("traces")
    traces = (
        [trace for trace in traces[: MAX_TRACES * 4] if isinstance(trace, dict)]
        if isinstance(traces, list)
        else []
    )
    return Panel(
        _text(item.get("title")),
        _reported_axis(item.get("x")),
        _reported_axis(item.get("y")),
        tuple(_reported_trace(trace) for trace in traces[:MAX_TRACES]),
        max(0, len(traces) - MAX_TRACES) + min(_count(item.get("more_traces")), 10**6),
    )


def _reported_axis(item: object) -> Axis | None:
    if not isinstance(item, dict):
        return None
    title = _text(item.get("title"))
    examples = item.get("categories")
    if isinstance(examples, list) and examples:
        names = tuple(_text(name) for name in examples[:MAX_EXAMPLES])
        return Axis(title, categories=_count(item.get("category_count")) or len(examples), examples=names)
    span = item.get("range")
    if isinstance(span, list) and len(span) == 2:
        low, high = (_scalar(value) for value in span)
        if low is not None and high is not None:
            return Axis(title, low, high)
    return Axis(title)


def _reported_trace(item: dict[str, Any]) -> Trace:
    return Trace(
        _text(item.get("name")),
        _text(item.get("kind"))[:20] or "unknown",
        _count(item.get("points")),
        _reported_point(item.get("highest")),
        _reported_point(item.get("lowest")),
        "x" if item.get("value_axis") == "x" else "y",
    )


def _reported_point(item: object) -> Point | None:
    if not isinstance(item, dict):
        return None
    value = _scalar(item.get("value"))
    return Point(_scalar(item.get("at")), value) if isinstance(value, float) else None


# -- shared -----------------------------------------------------------------------------------


def _scalar(value: object) -> Value | None:
    """A finite number as a float, a text cut short, anything else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        number = float(value) if abs(value) < 1e300 else math.inf
        return number if math.isfinite(number) else None
    if isinstance(value, str):
        return value[:MAX_TEXT]
    return None


def _text(value: object) -> str:
    return value[:MAX_TEXT] if isinstance(value, str) else ""


def _title(value: object) -> str:
    """A plotly title: a text, or {"text": …}."""
    return _text(value.get("text")) if isinstance(value, dict) else _text(value)


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _mapping(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _axis_id(trace: dict[str, Any], letter: str) -> str:
    value = trace.get(letter + "axis")
    return value if isinstance(value, str) and AXIS_ID.fullmatch(value) and value[0] == letter else letter
