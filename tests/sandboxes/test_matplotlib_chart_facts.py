"""A matplotlib figure shown in a kernel carries, beside its PNG, the facts of it for the model
(application/vnd.analyst.chart+json, the template's chart_facts.py); a figure whose facts cannot
be gathered still shows."""

from __future__ import annotations

MIME = "application/vnd.analyst.chart+json"
BARS = (
    "plt.bar(['North', 'South', 'East'], [1200, 300, 650], label='2024')\n"
    "plt.title('Revenue by region'); plt.xlabel('Region'); plt.ylabel('Revenue')\n"
    "plt.show()"
)


def test_a_shown_figure_carries_its_facts_beside_its_png(sandbox):
    (result,) = sandbox.run_code(BARS).results
    assert result.png and set(result.formats()) == {"text/plain", "image/png", MIME}
    (axes,) = result.extra[MIME]["axes"]
    assert axes["title"] == "Revenue by region"
    assert axes["x"] == {"title": "Region", "categories": ["North", "South", "East"], "category_count": 3}
    assert axes["y"]["title"] == "Revenue" and axes["y"]["range"][1] >= 1200
    assert axes["traces"] == [
        {
            "name": "2024",
            "kind": "bar",
            "points": 3,
            "value_axis": "y",
            "highest": {"at": "North", "value": 1200.0},
            "lowest": {"at": "South", "value": 300.0},
        }
    ]


def test_a_figure_as_the_last_expression_and_one_whose_facts_fail(sandbox):
    figure = sandbox.run_code("fig, ax = plt.subplots(); ax.plot([3, 1, 2], label='a'); fig").main_result
    assert figure.extra[MIME]["axes"][0]["traces"][0]["points"] == 3
    broken = "fig, ax = plt.subplots(); ax.plot([1, 2]); fig.get_axes = None; plt.show()"
    (result,) = sandbox.run_code(broken).results
    assert result.png and MIME not in result.bundle
    assert not sandbox.run_code("print('still here')").error
