"""A session taken away (GET /api/sessions/<id>/export): a notebook that nbformat validates and
`jupyter nbconvert --execute` runs top to bottom beside its data, a script that Python runs, and
an HTML report that holds the charts and tables and nothing that could run or fetch."""

from __future__ import annotations

import base64
import json
import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import nbformat
import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.test import Client

from analyst.models import ApiToken
from tests.fakes.model_server import anthropic_text, anthropic_tool_call
from tests.integration.conftest import wait_for
from tests.integration.test_resume_and_fork import _csv, run_cell

SALES = b"region,amount\nnorth,10\nsouth,32\neast,7\n"
READ = "import pandas as pd\nsales = pd.read_csv('data/sales.csv')\nprint(len(sales), 'rows')\nsales"
MISSING = "sales['margin']"
CHART = "import matplotlib.pyplot as plt\nsales.plot.bar(x='region', y='amount')\nplt.show()"
FIGURE = "import plotly.express as px\npx.bar(sales, x='region', y='amount').show()"
# An answer with what a hostile model would write into a report: HTML that runs, an image that
# fetches from elsewhere.
ANSWER = (
    "South sells the most: **32**.\n\n| region | amount |\n|---|---|\n| south | 32 |\n\n"
    '<img src=x onerror="alert(1)"><script>alert(2)</script>\n\n![pixel](http://127.0.0.2/pixel.png)'
)
TEMPLATE_PYTHON = Path(settings.SANDBOXD_TEMPLATES_DIR) / "code-interpreter" / "venv" / "bin" / "python"


@pytest.fixture
def analysed(stack, api, session):
    """A session with an upload, a model turn (a table, a failing cell, a chart, a plotly figure,
    an answer) and a cell of the user's own."""
    response = api.post(f"/api/sessions/{session.id}/files", {"file": _csv("sales.csv", SALES)})
    assert response.status_code == 202, response.content
    wait_for(session, "file_added")
    stack.script(
        anthropic_tool_call("run_python", {"code": READ}, tool_id="toolu_01"),
        anthropic_tool_call("run_python", {"code": MISSING}, tool_id="toolu_02"),
        anthropic_tool_call("run_python", {"code": CHART}, tool_id="toolu_03"),
        anthropic_tool_call("run_python", {"code": FIGURE}, tool_id="toolu_04"),
        anthropic_text(ANSWER),
    )
    asked = api.post(
        f"/api/sessions/{session.id}/messages", {"content": "Who sells most?"}, "application/json"
    )
    assert asked.status_code == 202
    wait_for(session)
    run_cell(api, session, "total = int(sales.amount.sum())\nprint('total', total)")
    session.title = "Sales by region"
    session.save()
    return session


def export(api, session, format: str):
    response = api.get(f"/api/sessions/{session.id}/export", {"format": format})
    assert response.status_code == 200, response.content
    return response


def test_the_notebook_is_valid_holds_everything_and_runs_top_to_bottom(analysed, api, tmp_path):
    response = export(api, analysed, "ipynb")
    assert response["Content-Disposition"] == 'attachment; filename="sales-by-region.ipynb"'
    book = nbformat.reads(response.content.decode(), as_version=4)
    nbformat.validate(book)
    markdown = [cell.source for cell in book.cells if cell.cell_type == "markdown"]
    assert markdown[0].startswith("# Sales by region") and "data/sales.csv" in markdown[0]
    assert any("Who sells most?" in text for text in markdown)
    assert any("South sells the most" in text for text in markdown)
    code = [cell for cell in book.cells if cell.cell_type == "code"]
    assert code[0].metadata["analyst"]["by"] == "sandbox"  # its implicit imports (test_export_bundles.py)
    code = code[1:]
    assert [cell.source for cell in code] == [READ, MISSING, CHART, FIGURE, code[-1].source]
    assert [cell.metadata["analyst"]["by"] for cell in code] == ["model"] * 4 + ["user"]
    read, missing, chart, figure, own = code
    assert read.outputs[0] == {"output_type": "stream", "name": "stdout", "text": "3 rows\n"}
    assert read.outputs[1].output_type == "execute_result" and "south" in read.outputs[1].data["text/html"]
    table = read.outputs[1].data["application/vnd.dataresource+json"]  # the grid's data, kept
    assert table["total_rows"] == 3 and table["data"][1] == {"index": 1, "region": "south", "amount": 32}
    assert missing.metadata["tags"] == ["raises-exception"]
    assert missing.outputs[-1].output_type == "error" and missing.outputs[-1].ename == "KeyError"
    assert base64.b64decode(chart.outputs[-1].data["image/png"]).startswith(b"\x89PNG")  # from storage
    assert figure.outputs[-1].data["application/vnd.plotly.v1+json"]["data"][0]["type"] == "bar"
    assert own.outputs == [{"output_type": "stream", "name": "stdout", "text": "total 49\n"}]

    # As a user would: the notebook and its data in a folder, run by nbconvert in a fresh kernel.
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "sales.csv").write_bytes(SALES)
    (tmp_path / "analysis.ipynb").write_bytes(response.content)
    kernels = tmp_path / "jupyter" / "kernels" / "template"
    kernels.mkdir(parents=True)
    spec = {
        "argv": [str(TEMPLATE_PYTHON), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "language": "python",
    }
    (kernels / "kernel.json").write_text(json.dumps({**spec, "display_name": "the template"}))
    done = subprocess.run(
        [sys.executable, "-m", "nbconvert", "--to", "notebook", "--execute", "--output", "ran.ipynb",
         "--ExecutePreprocessor.kernel_name=template", "--ExecutePreprocessor.timeout=120", "analysis.ipynb"],
        check=False, cwd=tmp_path, capture_output=True, text=True, timeout=300,
        env={**os.environ, "JUPYTER_PATH": str(tmp_path / "jupyter"), "MPLBACKEND": "agg"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    ran = [
        cell for cell in nbformat.read(tmp_path / "ran.ipynb", as_version=4).cells if cell.cell_type == "code"
    ][1:]
    assert ran[0].outputs[0]["text"] == "3 rows\n"
    assert ran[1].outputs[-1]["ename"] == "KeyError"  # failed again, and the run went on
    assert ran[-1].outputs[0]["text"] == "total 49\n"


def test_the_script_runs_beside_its_data(analysed, api, tmp_path):
    response = export(api, analysed, "py")
    assert response["Content-Disposition"] == 'attachment; filename="sales-by-region.py"'
    script = response.content.decode()
    assert script.count("# %%") >= 7 and "# Question: Who sells most?" in script
    assert f"# {MISSING}" in script and "KeyError" in script  # the failed cell, commented out
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "sales.csv").write_bytes(SALES)
    (tmp_path / "analysis.py").write_text(script)
    done = subprocess.run(
        [str(TEMPLATE_PYTHON), "analysis.py"], check=False, cwd=tmp_path, capture_output=True, text=True,
        timeout=120,
        env={"PATH": os.environ["PATH"], "MPLBACKEND": "agg", "HOME": str(tmp_path)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.splitlines() == ["3 rows", "total 49"]


def test_the_report_shows_tables_and_charts_and_nothing_that_runs_or_fetches(analysed, api):
    response = export(api, analysed, "html")
    assert response["Content-Disposition"] == 'attachment; filename="sales-by-region.html"'
    assert response["Content-Security-Policy"] == "sandbox; default-src 'none'"
    report = response.content.decode()
    (policy,) = [
        dict(a)["content"]
        for tag, a in markup(report)
        if dict(a).get("http-equiv") == "Content-Security-Policy"
    ]
    assert policy.startswith("default-src 'none'; img-src data:; style-src 'unsafe-inline';")
    assert policy.endswith(
        "script-src 'sha256-{}' 'sha256-{}'".format(*re.findall(r"sha256-([^']+)", policy))
    )
    assert "<h1>Sales by region</h1>" in report and "Who sells most?" in report
    assert "<strong>32</strong>" in report and "<td>south</td>" in report  # the answer's markdown
    assert report.count('<script type="application/json" class="figure-data">') == 1  # the plotly one
    assert "KeyError: " in report and "Full traceback" in report
    assert "\x1b[" not in report
    # The hostile markup is shown as the text it is, never as elements: no script but plotly.js,
    # the figure's data and the app's drawing of it (by their hashes), no handler, nothing that
    # loads from elsewhere.
    tags = markup(report)
    scripts = [dict(attributes) for tag, attributes in tags if tag == "script"]
    assert scripts == [{}, {"type": "application/json", "class": "figure-data"}, {"type": "module"}]
    assert [(tag, name) for tag, attributes in tags for name, _ in attributes if name.startswith("on")] == []
    assert [value for _, attributes in tags for _, value in attributes if "127.0.0.2" in (value or "")] == []
    images = [dict(attributes).get("src") or "" for tag, attributes in tags if tag == "img"]
    assert len(images) == 1 and images[0].startswith("data:image/png;base64,"), images  # the chart only
    assert "&lt;script&gt;alert(2)&lt;/script&gt;" in report


def markup(html: str) -> list[tuple[str, list[tuple[str, str | None]]]]:
    """Every start tag in ``html`` with its attributes, as a browser's parser reads them."""
    found: list[tuple[str, list[tuple[str, str | None]]]] = []

    class Collector(HTMLParser):
        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            found.append((tag, attrs))

    Collector().feed(html)
    return found


def test_an_unknown_format_is_refused_and_strangers_get_nothing(analysed, api):
    response = api.get(f"/api/sessions/{analysed.id}/export", {"format": "docx"})
    assert response.status_code == 400 and "ipynb, py, html" in response.json()["error"]["message"]
    bob = get_user_model().objects.create_user("bob")
    _, secret = ApiToken.issue(bob)
    stranger = Client(HTTP_AUTHORIZATION=f"Bearer {secret}")
    assert stranger.get(f"/api/sessions/{analysed.id}/export", {"format": "ipynb"}).status_code == 404
