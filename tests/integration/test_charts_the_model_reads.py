"""The model reads every chart in words: a matplotlib chart and a plotly chart drawn in a turn
come back to it described (title, axis titles, trace names, point counts), beside the PNG for a
model that sees images and alone for one that does not; the user's page still gets the charts."""

from __future__ import annotations

from analyst.models import AnalysisSession
from tests.fakes.model_server import anthropic_text, anthropic_tool_call, openai_text, openai_tool_call
from tests.integration.conftest import wait_for

CHARTS = (
    "import plotly.graph_objects as go\n"
    "plt.bar(['North', 'South', 'East'], [1200, 300, 650], label='sales 2024')\n"
    "plt.title('Revenue by region'); plt.xlabel('Region'); plt.ylabel('Revenue'); plt.legend()\n"
    "plt.show()\n"
    "fig = go.Figure(go.Scatter(x=list(range(500)), y=[i % 97 for i in range(500)], mode='lines',"
    " name='daily visits'))\n"
    "fig.update_layout(title='Visits per day', xaxis_title='day', yaxis_title='visits')\n"
    "fig.show()"
)
MATPLOTLIB = (
    '[Chart 1 (matplotlib, bar): no title]\nPlot 1: "Revenue by region"\n'
    'x axis "Region": 3 categories ("North", "South", "East")'
)
MATPLOTLIB_TRACE = '- "sales 2024": bar, 3 points; highest y=1200 at x="North"; lowest y=300 at x="South"'
PLOTLY = '[Chart 2 (plotly, line): "Visits per day"]\nx axis "day": 0 to 499; y axis "visits": 0 to 96'
PLOTLY_TRACE = '- "daily visits": line, 500 points; highest y=96 at x=96; lowest y=0 at x=0'


def asked_to_plot(api, session):
    response = api.post(f"/api/sessions/{session.id}/messages", {"content": "Plot"}, "application/json")
    assert response.status_code == 202
    log = wait_for(session)
    assert log[-1]["type"] == "turn_done", log[-1]
    results = [e["payload"] for e in log if e["type"] == "result"]
    assert "image/png" in results[0]["artifacts"] or "image/png" in results[0]["data"]  # the page's chart
    assert any("application/vnd.plotly.v1+json" in r["data"] or r["artifacts"] for r in results[1:])
    return log


def described(text):
    assert MATPLOTLIB in text and MATPLOTLIB_TRACE in text
    assert PLOTLY in text and PLOTLY_TRACE in text


def test_a_model_that_sees_images_gets_the_png_and_both_descriptions(stack, api, session):
    stack.script(anthropic_tool_call("run_python", {"code": CHARTS}), anthropic_text("Two charts."))
    asked_to_plot(api, session)
    follow_up = stack.requests[1].json["messages"][-1]["content"]
    tool_result = next(block for block in follow_up if block["type"] == "tool_result")
    assert [block["type"] for block in tool_result["content"]].count("image") == 1  # the matplotlib PNG
    described("\n".join(block["text"] for block in tool_result["content"] if block["type"] == "text"))


def test_a_model_that_sees_no_images_reads_both_descriptions(stack, api, session):
    AnalysisSession.objects.filter(id=session.id).update(model="ollama/qwen-test")
    stack.script(openai_tool_call("run_python", {"code": CHARTS}), openai_text("Two charts."))
    asked_to_plot(api, session)
    tool_message = stack.requests[1].json["messages"][-1]
    assert tool_message["role"] == "tool"
    assert isinstance(tool_message["content"], str)
    described(tool_message["content"])
    assert "you cannot see images" in tool_message["content"]
