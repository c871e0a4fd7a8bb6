"""An export runs outside the sandbox: the .zip of the script, and that of the notebook, unpacked
in an empty folder, run top to bottom with the template's interpreter (the script with
`python`, the notebook with nbclient), for a session whose cells use `pd`, `np` and `plt` without
importing them, as the sandbox lets them."""

from __future__ import annotations

import io
import json
import os
import subprocess
import zipfile
from pathlib import Path

import nbformat
import pytest
from django.conf import settings
from nbclient import NotebookClient

from tests.fakes.model_server import anthropic_text, anthropic_tool_call
from tests.integration.conftest import wait_for
from tests.integration.test_resume_and_fork import _csv, run_cell

SALES = b"region,amount\nnorth,10\nsouth,32\neast,7\n"
READ = "sales = pd.read_csv('data/sales.csv')\nprint(np.round(sales.amount.mean(), 2))"
MISSING = "sales['margin']"
CHART = "sales.plot.bar(x='region', y='amount')\nplt.title('Sales by region')\nplt.show()"
OWN = "print(int(np.sum(sales.amount)), type(plt.gcf()).__name__)"
TEMPLATE_PYTHON = Path(settings.SANDBOXD_TEMPLATES_DIR) / "code-interpreter" / "venv" / "bin" / "python"


@pytest.fixture
def analysed(stack, api, session):
    response = api.post(f"/api/sessions/{session.id}/files", {"file": _csv("sales.csv", SALES)})
    assert response.status_code == 202, response.content
    wait_for(session, "file_added")
    stack.script(
        anthropic_tool_call("run_python", {"code": READ}, tool_id="toolu_01"),
        anthropic_tool_call("run_python", {"code": MISSING}, tool_id="toolu_02"),
        anthropic_tool_call("run_python", {"code": CHART}, tool_id="toolu_03"),
        anthropic_text("South sells the most."),
    )
    asked = api.post(
        f"/api/sessions/{session.id}/messages", {"content": "Who sells most?"}, "application/json"
    )
    assert asked.status_code == 202
    wait_for(session)
    ran = run_cell(api, session, OWN)
    assert [e["payload"]["text"] for e in ran if e["type"] == "stdout"] == ["16.33\n", "49 Figure\n"]
    session.title = "-*- coding: utf-7 -*- +AAo-raise SystemExit(3)"  # a title that tries its luck
    session.save()
    return session


def unpacked(api, session, format: str, into: Path) -> Path:
    response = api.get(f"/api/sessions/{session.id}/export", {"format": format, "bundle": "zip"})
    assert response.status_code == 200, response.content
    with zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content))) as made:
        made.extractall(into)
    (folder,) = into.iterdir()
    return folder


def test_the_script_runs_in_an_empty_folder_with_its_data(analysed, api, tmp_path):
    folder = unpacked(api, analysed, "py", tmp_path)
    script = next(folder.glob("*.py"))
    files = {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}
    assert files == {"data/sales.csv", "requirements.txt", script.name}
    done = subprocess.run(
        [str(TEMPLATE_PYTHON), script.name], check=False, cwd=folder, capture_output=True, text=True,
        timeout=120, env={"PATH": os.environ["PATH"], "MPLBACKEND": "agg", "HOME": str(tmp_path)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.splitlines() == ["16.33", "49 Figure"]
    pinned = (folder / "requirements.txt").read_text().splitlines()[1:]
    assert [line.split("==")[0] for line in pinned] == ["matplotlib", "numpy", "pandas"]


def test_the_notebook_runs_in_an_empty_folder_with_its_data(analysed, api, tmp_path, monkeypatch):
    folder = unpacked(api, analysed, "ipynb", tmp_path / "unpacked")
    kernels = tmp_path / "jupyter" / "kernels" / "template"
    kernels.mkdir(parents=True)
    spec = {
        "argv": [str(TEMPLATE_PYTHON), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "language": "python",
        "display_name": "the template",
    }
    (kernels / "kernel.json").write_text(json.dumps(spec))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    book = nbformat.read(next(folder.glob("*.ipynb")), as_version=4)
    NotebookClient(
        book, kernel_name="template", timeout=120, resources={"metadata": {"path": str(folder)}}
    ).execute()
    code = [cell for cell in book.cells if cell.cell_type == "code"]
    assert [cell.metadata["analyst"]["by"] for cell in code] == ["sandbox", "model", "model", "model", "user"]
    assert code[1].outputs[0]["text"] == "16.33\n"
    assert code[2].outputs[-1]["ename"] == "KeyError"  # failed again, and the run went on
    assert code[3].outputs[-1]["output_type"] == "display_data" and "image/png" in code[3].outputs[-1]["data"]
    assert code[4].outputs[0]["text"] == "49 Figure\n"
