"""Charts as facts: a matplotlib figure shown (plt.show(), a cell's end, display(fig)) carries,
besides its PNG, what a reader would take from it (application/vnd.analyst.chart+json), for a
model that cannot see the image and for one that can:

    {"title": "Sales", "axes": [{"title": "2024",
      "x": {"title": "month", "range": [0.0, 11.0]} or {"title": …, "categories": ["a", …],
            "category_count": 12},
      "y": {"title": "revenue", "range": [0.0, 1200.0]},
      "traces": [{"name": "north", "kind": "line", "points": 12, "value_axis": "y",
                  "highest": {"at": 7.0, "value": 1200.0}, "lowest": {"at": 0.0, "value": 3.0}}]}]}

Pies have no x and y, and their points' values are percentages. At most MAX_AXES axes and
MAX_TRACES traces each, texts cut to MAX_CHARS, extremes found among the first MAX_VALUES
values of a trace. Anything that goes wrong leaves the facts out, never the display. (The host
checks all of it again: any code in the kernel can display this type.)"""

from __future__ import annotations

import datetime
import itertools
import math
from typing import Any

MIME = "application/vnd.analyst.chart+json"
MAX_AXES = 6
MAX_TRACES = 12
MAX_CHARS = 80
MAX_CATEGORIES = 5
MAX_VALUES = 100_000


def register(shell: Any) -> None:
    """Add the formatter to ``shell``'s display formatter, for matplotlib's Figure."""
    from IPython.core.formatters import BaseFormatter
    from traitlets import ObjectName, Unicode

    class ChartFactsFormatter(BaseFormatter):  # type: ignore[misc]
        format_type = Unicode(MIME)
        print_method = ObjectName("_repr_analyst_chart_facts_")
        _return_type = (dict,)

    formatter = ChartFactsFormatter(parent=shell.display_formatter)
    shell.display_formatter.formatters[MIME] = formatter
    formatter.for_type_by_name("matplotlib.figure", "Figure", facts)


def facts(figure: Any) -> dict[str, Any] | None:
    """The facts of a matplotlib figure, or None when they cannot be gathered."""
    try:
        return _facts(figure)
    except Exception:  # noqa: BLE001  (facts left out, never a display broken)
        return None


def _facts(figure: Any) -> dict[str, Any]:
    suptitle = getattr(figure, "_suptitle", None)
    axes = [ax for ax in figure.get_axes() if ax.get_visible() and not _is_colorbar(ax)]
    return {
        "title": _cut(suptitle.get_text()) if suptitle is not None else "",
        "axes": [_axes(ax) for ax in axes[:MAX_AXES]],
    }


def _is_colorbar(ax: Any) -> bool:
    return getattr(ax, "_colorbar", None) is not None or ax.get_label() == "<colorbar>"


def _axes(ax: Any) -> dict[str, Any]:
    from matplotlib.container import BarContainer
    from matplotlib.patches import Wedge

    traces: list[dict[str, Any]] = []
    wedges = [patch for patch in ax.patches if isinstance(patch, Wedge)]
    if wedges:
        shares = [(patch.theta2 - patch.theta1) / 3.6 for patch in wedges]
        labels = [_cut(patch.get_label()) for patch in wedges]
        traces.append(_trace("", "pie", labels, shares))
        return {"title": _cut(ax.get_title()), "x": None, "y": None, "traces": traces}
    for line in ax.get_lines():
        kind = "scatter" if line.get_linestyle() in ("None", "", " ") else "line"
        traces.append(_trace(_label(line), kind, line.get_xdata(), line.get_ydata(), ax=ax))
    for collection in ax.collections:
        if type(collection).__name__ == "PathCollection":  # scatter()
            offsets = collection.get_offsets()
            traces.append(_trace(_label(collection), "scatter", offsets[:, 0], offsets[:, 1], ax=ax))
    for container in ax.containers:
        if isinstance(container, BarContainer):
            traces.append(_bars(ax, container))
    return {
        "title": _cut(ax.get_title()),
        "x": _axis(ax, ax.xaxis, ax.get_xlabel(), ax.get_xlim()),
        "y": _axis(ax, ax.yaxis, ax.get_ylabel(), ax.get_ylim()),
        "traces": traces[:MAX_TRACES],
        "more_traces": max(0, len(traces) - MAX_TRACES),
    }


def _bars(ax: Any, container: Any) -> dict[str, Any]:
    horizontal = getattr(container, "orientation", None) == "horizontal"
    patches = container.patches[:MAX_VALUES]
    if horizontal:
        positions = [patch.get_y() + patch.get_height() / 2 for patch in patches]
        values = [patch.get_width() for patch in patches]
    else:
        positions = [patch.get_x() + patch.get_width() / 2 for patch in patches]
        values = [patch.get_height() for patch in patches]
    name = _label(container)
    trace = _trace(name, "bar", positions, values, value_axis="x" if horizontal else "y", ax=ax)
    trace["points"] = len(container.patches)
    return trace


def _trace(
    name: str, kind: str, positions: Any, values: Any, *, value_axis: str = "y", ax: Any = None
) -> dict[str, Any]:
    points = len(values)
    pairs = [(index, _number(value)) for index, value in enumerate(list(values[:MAX_VALUES]))]
    numbered = [(index, value) for index, value in pairs if value is not None]
    trace: dict[str, Any] = {"name": name, "kind": kind, "points": points, "value_axis": value_axis}
    if numbered:
        position_axis = None if ax is None else ax.yaxis if value_axis == "x" else ax.xaxis
        for word, pick in (("highest", max), ("lowest", min)):
            index, value = pick(numbered, key=lambda item: item[1])
            at = positions[index] if index < len(positions) else None
            trace[word] = {"at": _position(position_axis, at), "value": value}
    return trace


def _axis(ax: Any, axis: Any, title: str, limits: tuple[float, float]) -> dict[str, Any]:
    from matplotlib.category import UnitData

    units = axis.get_units()
    if isinstance(units, UnitData) and units._mapping:  # strings plotted: categories, in order
        names = [_cut(str(name)) for name in itertools.islice(units._mapping, MAX_CATEGORIES)]
        return {"title": _cut(title), "categories": names, "category_count": len(units._mapping)}
    from matplotlib.dates import num2date

    low, high = (_number(value) for value in limits)
    if _is_date_axis(axis) and low is not None and high is not None:
        return {"title": _cut(title), "range": [num2date(low).isoformat(), num2date(high).isoformat()]}
    return {"title": _cut(title), "range": [low, high]}


def _position(axis: Any, value: Any) -> Any:
    """A position as a reader sees it on ``axis``: a category's name, a tick's label where one
    sits right there (pandas' bar charts), a date, or the number."""
    if isinstance(value, str):
        return _cut(value)
    if isinstance(value, datetime.date):
        return value.isoformat()
    if type(value).__name__ in ("datetime64", "Period"):
        return _cut(str(value))
    number = _number(value)
    if number is None or axis is None:
        return number
    from matplotlib.category import UnitData
    from matplotlib.dates import num2date
    from matplotlib.ticker import FixedFormatter

    units = axis.get_units()
    if isinstance(units, UnitData):
        names = {index: name for name, index in units._mapping.items()}
        return _cut(str(names[number])) if number in names else number
    if _is_date_axis(axis):
        return num2date(number).isoformat()
    if not isinstance(axis.get_major_formatter(), FixedFormatter):  # numbers' own ticks: "3.00"
        return number
    for location, label in zip(axis.get_majorticklocs(), axis.get_ticklabels(), strict=False):
        if math.isclose(location, number, abs_tol=1e-9) and label.get_text():
            return _cut(" ".join(label.get_text().split()))  # pandas' dates: "01\nJan\n2024"
    return number


def _is_date_axis(axis: Any) -> bool:
    from matplotlib.dates import AutoDateFormatter, ConciseDateFormatter, DateFormatter

    return isinstance(axis.get_major_formatter(), AutoDateFormatter | ConciseDateFormatter | DateFormatter)


def _label(artist: Any) -> str:
    label = artist.get_label() or ""
    return "" if label.startswith("_") else _cut(label)  # matplotlib's own names: "_child0"


def _number(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        return None
    return number if math.isfinite(number) else None


def _cut(text: str) -> str:
    text = str(text)
    return text if len(text) <= MAX_CHARS else text[: MAX_CHARS - 1] + "…"
