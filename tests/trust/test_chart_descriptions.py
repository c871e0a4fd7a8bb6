"""Charts in words for the model: real plotly figures (as a kernel displays them) and real
matplotlib figures (the facts the template reports of them) described; hostile JSON of either
kind bounded, never a crash."""

from __future__ import annotations

import base64
import json
import math
import subprocess
import time
from pathlib import Path

import pytest
from django.conf import settings

from analyst.trust.charts import (
    MAX_CHARTS,
    MAX_TRACES,
    MAX_TRACES_READ,
    PLOTLY,
    REPORTED,
    chart_of,
    describe,
    describe_results,
    from_plotly,
    from_report,
)
from sandboxes import Result, templates

# Figures made by the template's own python (the project's environment has neither library),
# so the JSON is exactly what a kernel of that template displays.
PLOTLY_FIGURES = """
import json, sys
import numpy as np
import plotly.express as px
import plotly.graph_objects as go
import plotly.io as pio
rng = np.random.default_rng(1)
xs = rng.normal(size=5000)
ys = xs * 2
ys[1234] = 99.5
ys[4321] = -42.25
figures = [
    px.bar(x=["North", "South", "East", "West"], y=[1200, 300, 650, 800], title="Revenue by region",
           labels={"x": "Region", "y": "Revenue"}),
    px.scatter(x=xs, y=ys, title="Spread", labels={"x": "score", "y": "twice"}),
    go.Figure([go.Scatter(x=[1, 2, 3, 4], y=[10, 12, 9, 15], mode="lines", name="2023"),
               go.Scatter(x=[1, 2, 3, 4], y=[11, 14, 13, 18], mode="lines", name="2024")],
              layout={"title": {"text": "Visits"}, "xaxis": {"title": {"text": "quarter"}},
                      "yaxis": {"title": {"text": "visits"}, "range": [0, 20]}}),
    px.pie(names=["rent", "food", "travel"], values=[50, 30, 20], title="Spending"),
    go.Figure(go.Bar(x=[5, 7], y=["cats", "dogs"], orientation="h", name="pets")),
]
renderer = pio.renderers["plotly_mimetype"]
print(json.dumps([renderer.to_mimebundle(figure.to_dict())["application/vnd.plotly.v1+json"]
                  for figure in figures]))
"""
MATPLOTLIB_FIGURES = """
import json, sys
from importlib.util import module_from_spec, spec_from_file_location
import matplotlib
matplotlib.use("agg")
import matplotlib.pyplot as plt
import numpy as np
spec = spec_from_file_location("chart_facts", sys.argv[1])
chart_facts = module_from_spec(spec)
spec.loader.exec_module(chart_facts)

bars, ax = plt.subplots()
ax.bar(["North", "South", "East"], [1200, 300, 650], label="2024")
ax.set_title("Revenue by region"); ax.set_xlabel("Region"); ax.set_ylabel("Revenue")
lines, (left, right) = plt.subplots(1, 2)
lines.suptitle("Two plots")
x = np.linspace(0, 10, 300_000)
left.plot(x, np.sin(x), label="sine"); left.plot([0, 10], [0.5, 0.5], "o", label="marks")
right.pie([50, 30, 20], labels=["rent", "food", "travel"])
untitled, ax = plt.subplots()
ax.scatter([1, 2, 3], [4, 1, 9])
print(json.dumps([chart_facts.facts(figure) for figure in (bars, lines, untitled)]))
"""


def template() -> templates.Template:
    return templates.get("code-interpreter", Path(settings.SANDBOXD_TEMPLATES_DIR))


def made_by_the_template(script: str, *args: str) -> list:
    run = subprocess.run(
        [str(template().python), "-c", script, *args], check=True, capture_output=True, text=True, timeout=120
    )
    return json.loads(run.stdout)


@pytest.fixture(scope="module")
def plotly_figures() -> list:
    return made_by_the_template(PLOTLY_FIGURES)


@pytest.fixture(scope="module")
def matplotlib_facts() -> list:
    return made_by_the_template(MATPLOTLIB_FIGURES, str(template().source / "chart_facts.py"))


def test_a_plotly_bar_chart(plotly_figures):
    text = describe(from_plotly(plotly_figures[0]), 1)
    assert text.splitlines()[0] == '[Chart 1 (plotly, bar): "Revenue by region"]'
    assert 'x axis "Region": 4 categories ("North", "South", "East", "West")' in text
    assert 'y axis "Revenue": 300 to 1200' in text
    assert '(unnamed): bar, 4 points; highest y=1200 at x="North"; lowest y=300 at x="South"' in text


def test_a_scatter_of_many_points_gives_its_count_and_extremes(plotly_figures):
    chart = from_plotly(plotly_figures[1])
    (trace,) = chart.panels[0].traces
    assert (trace.kind, trace.points) == ("scatter", 5000)  # numpy arrays arrive base64-typed
    assert trace.highest.value == 99.5 and trace.lowest.value == -42.25
    assert "5,000 points" in describe(chart, 2) and '"score"' in describe(chart, 2)


def test_a_line_chart_with_two_traces_and_a_set_range(plotly_figures):
    text = describe(from_plotly(plotly_figures[2]), 1)
    assert '"Visits"' in text and 'x axis "quarter": 1 to 4' in text and 'y axis "visits": 0 to 20' in text
    assert '"2023": line, 4 points; highest y=15 at x=4; lowest y=9 at x=3' in text
    assert '"2024": line, 4 points; highest y=18 at x=4; lowest y=11 at x=1' in text


def test_a_pie(plotly_figures):
    text = describe(from_plotly(plotly_figures[3]), 1)
    assert "(plotly, pie)" in text and "axis" not in text
    assert '3 slices; largest 50 ("rent"); smallest 20 ("travel")' in text


def test_a_figure_with_no_title_and_horizontal_bars(plotly_figures):
    text = describe(from_plotly(plotly_figures[4]), 1)
    assert text.splitlines()[0] == "[Chart 1 (plotly, bar): no title]"
    assert '"pets": bar, 2 points; highest x=7 at y="dogs"; lowest x=5 at y="cats"' in text


def test_matplotlib_figures_from_the_templates_facts(matplotlib_facts):
    bars, lines, untitled = (describe(from_report(facts), 1) for facts in matplotlib_facts)
    assert "(matplotlib, bar): no title" in bars and 'Plot 1: "Revenue by region"' in bars
    assert 'x axis "Region": 3 categories ("North", "South", "East")' in bars
    assert '"2024": bar, 3 points; highest y=1200 at x="North"; lowest y=300 at x="South"' in bars
    assert lines.startswith('[Chart 1 (matplotlib, line, scatter, pie): "Two plots"]')
    assert '"sine": line, 300,000 points; highest y=1' in lines and '"marks": scatter, 2 points' in lines
    assert '3 slices; largest 50 ("rent"); smallest 20 ("travel")' in lines
    assert "no title" in untitled and "(unnamed): scatter, 3 points; highest y=9 at x=3" in untitled


def test_a_cells_charts_are_described_in_order_and_other_results_not(plotly_figures, matplotlib_facts):
    results = [
        Result.from_bundle({"text/plain": "42"}),
        Result.from_bundle({PLOTLY: plotly_figures[0], "text/plain": "Figure({...})"}),
        Result.from_bundle({"image/png": "iVBORw0KGgo=", REPORTED: matplotlib_facts[0]}),
    ]
    text = describe_results(results)
    assert text.index("[Chart 1 (plotly, bar)") < text.index("[Chart 2 (matplotlib, bar)")
    assert "42" not in text and describe_results(results[:1]) == ""
    many = describe_results([results[1]] * (MAX_CHARTS + 3))
    assert many.count("[Chart ") == MAX_CHARTS and many.endswith("[3 more charts not described]")


# -- hostile JSON -----------------------------------------------------------------------------


def nested(depth: int) -> dict:
    value: dict = {}
    for _ in range(depth):
        value = {"text": value, "data": [value], "axes": [value]}
    return value


@pytest.mark.parametrize(
    "figure",
    [
        None,
        "a figure",
        [1, 2],
        {"data": "not a list"},
        {"data": [1, "x", None, [], {"type": 7, "x": "abc", "y": {"dtype": "f8", "bdata": 5}}]},
        {"data": [{"type": "bar", "y": {"dtype": "f8", "bdata": "not base64!!"}}], "layout": []},
        {"data": [{"type": "bar", "y": {"dtype": "c16", "bdata": "AAAA"}, "xaxis": "../x"}]},
        {"data": [{"y": [True, None, [1], {"a": 1}, math.nan, math.inf, 10**400, -(10**400)]}]},
        {"data": [{"type": "pie", "values": "50", "labels": 3}], "layout": {"title": 5}},
        nested(50_000),
        {"data": [nested(50_000)], "layout": nested(50_000)},
    ],
)
def test_malformed_plotly_json_is_described_or_refused_without_a_crash(figure):
    chart = from_plotly(figure)
    if chart is not None:
        assert len(describe(chart, 1)) < 5_000


@pytest.mark.parametrize(
    "report",
    [
        None,
        {"axes": "x"},
        {"axes": [1, None, {"traces": "x"}, {"traces": [1, {"points": -5, "kind": ["bar"]}]}]},
        {"axes": [{"x": {"range": [math.nan, "b"]}, "y": {"categories": [{"a": 1}], "category_count": "9"}}]},
        {"axes": [{"traces": [{"highest": {"value": True}, "lowest": {"value": "1"}, "points": True}]}]},
        {"title": nested(50_000), "axes": [nested(50_000)]},
    ],
)
def test_a_malformed_report_is_described_or_refused_without_a_crash(report):
    chart = from_report(report)
    if chart is not None:
        assert len(describe(chart, 1)) < 5_000


def test_huge_arrays_are_counted_whole_and_read_only_in_part():
    numbers = list(range(3_000_000))
    encoded = base64.b64encode(bytes(8) * 2_000_000).decode()  # two million float zeros
    figure = {
        "data": [
            {"type": "scatter", "mode": "markers", "name": "list", "x": numbers, "y": numbers},
            {"type": "scatter", "mode": "markers", "name": "typed", "y": {"dtype": "f8", "bdata": encoded}},
        ]
        + [{"type": "bar", "name": f"t{n}", "y": numbers} for n in range(500)],
        "layout": {"title": "T" * 1_000_000},
    }
    started = time.monotonic()
    text = describe(from_plotly(figure), 1)
    assert time.monotonic() - started < 2
    assert '"list": scatter, 3,000,000 points' in text and '"typed": scatter, 2,000,000 points' in text
    assert f"- and {MAX_TRACES_READ - MAX_TRACES} more traces" in text  # in the plot
    assert f"\nand {2 + 500 - MAX_TRACES_READ} more traces" in text  # and not even looked at
    assert len(text) < 3_000  # the million-character title cut short


def test_many_traces_and_panels_of_a_report_are_cut():
    trace = {"name": "n" * 10_000, "kind": "line", "points": 10**12}
    report = {"axes": [{"traces": [trace] * 1000, "more_traces": 5}] * 1000}
    chart = from_report(report)
    assert len(chart.panels) == 6 and chart.more_panels > 0
    assert len(chart.panels[0].traces) == MAX_TRACES and chart.panels[0].more_traces > 0
    assert len(describe(chart, 1)) < 20_000


def test_a_result_that_is_no_chart_has_no_description():
    assert chart_of(Result.from_bundle({"text/plain": "x", "application/json": {"data": []}})) is None
