"""GET /api/sessions/<id>/export?format=py|ipynb&bundle=zip: the script or the notebook in a .zip,
with the session's uploads at the paths its cells read and a requirements.txt of what they import,
pinned as the sandbox's template pins it. The script's first line fixes its encoding, whatever the
title says (that it runs elsewhere, against real kernels: tests/integration/test_exports_run_elsewhere.py)."""

from __future__ import annotations

import ast
import io
import zipfile

import nbformat
import pytest
from django.core.files.base import ContentFile

from analyst.models import DataFile
from analyst.realtime import events
from analyst.sessions.exports import runtime

SALES = b"region,amount\nnorth,10\nsouth,32\n"
CELLS = (
    "import seaborn as sns\nfrom sklearn.linear_model import LinearRegression\nimport os, json",
    "from scipy import stats\nimport helpers  # a module the cells wrote themselves\n%pip install tabulate",
    "import tabulate",
)


@pytest.fixture
def analysed(session, media):
    for name, content in (("sales.csv", SALES), ("book.xlsx", b"PK not really a workbook")):
        upload = DataFile(session=session, name=name, path=f"data/{name}", size=len(content))
        upload.stored.save(name, ContentFile(content))
    for code in CELLS:
        events.append(session.id, "cell", {"code": code})
    events.append(session.id, "cell", {"code": "import requests"})  # failed: not a requirement
    events.append(session.id, "error", {"name": "ModuleNotFoundError", "value": "No module named 'requests'"})
    session.title = "Sales: by region"
    session.save()
    return session


def bundle(api, session, format: str) -> zipfile.ZipFile:
    response = api.get(f"/api/sessions/{session.id}/export", {"format": format, "bundle": "zip"})
    assert response.status_code == 200, response.content
    assert response["Content-Type"] == "application/zip"
    assert response["Content-Disposition"] == f'attachment; filename="sales-by-region-{format}.zip"'
    return zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content)))


def test_the_script_comes_with_its_data_and_requirements(api, analysed):
    made = bundle(api, analysed, "py")
    assert sorted(made.namelist()) == [
        "sales-by-region/data/book.xlsx",
        "sales-by-region/data/sales.csv",
        "sales-by-region/requirements.txt",
        "sales-by-region/sales-by-region.py",
    ]
    assert made.read("sales-by-region/data/sales.csv") == SALES
    pins = runtime.pinned_packages()
    expected = [pins[name] for name in ("matplotlib", "numpy", "pandas", "seaborn", "scikit-learn")]
    expected += [pins[name] for name in ("scipy", "tabulate", "openpyxl")]
    requirements = made.read("sales-by-region/requirements.txt").decode().splitlines()
    assert [line for line in requirements if not line.startswith("#")] == expected
    assert requirements[-1] == "# Not in the sandbox's template (a module of its own?): helpers"
    assert all(pin.split("==")[1][0].isdigit() for pin in expected)  # pinned, as the template is
    script = made.read("sales-by-region/sales-by-region.py").decode()
    assert "put them at those paths beside this file" in script and "data/sales.csv" in script


def test_the_notebook_comes_with_them_too(api, analysed):
    made = bundle(api, analysed, "ipynb")
    assert "sales-by-region/sales-by-region.ipynb" in made.namelist()
    assert "sales-by-region/data/book.xlsx" in made.namelist()
    book = nbformat.reads(made.read("sales-by-region/sales-by-region.ipynb").decode(), as_version=4)
    first = next(cell for cell in book.cells if cell.cell_type == "code")
    assert first.source.splitlines() == list(runtime.implicit_imports())
    assert first.metadata["analyst"]["by"] == "sandbox"


def test_the_implicit_imports_are_the_kernels_own():
    """Read from the template's startup file, which every kernel runs: the names a cell finds."""
    assert runtime.implicit_imports() == (
        "import matplotlib.pyplot as plt",
        "import numpy as np",
        "import pandas as pd",
    )


def test_a_title_cannot_choose_the_scripts_encoding(api, session):
    # Read as UTF-7, "+AAo-" is a line break: the rest of the commented title would run.
    session.title = "-*- coding: utf-7 -*- +AAo-raise SystemExit(3)"
    session.save()
    events.append(session.id, "cell", {"code": "print(1)"})
    script = api.get(f"/api/sessions/{session.id}/export", {"format": "py"}).content
    assert script.startswith(b"# -*- coding: utf-8 -*-\n")
    tree = ast.parse(script)  # as Python reads a file: by its coding line
    assert not [node for node in ast.walk(tree) if isinstance(node, ast.Raise)]
    assert [ast.unparse(node) for node in tree.body][-1] == "print(1)"


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ({"format": "html", "bundle": "zip"}, "a .zip holds a notebook or a script"),
        ({"format": "py", "bundle": "tar"}, "unknown bundle 'tar'"),
    ],
)
def test_what_no_bundle_holds_is_400(api, session, query, message):
    response = api.get(f"/api/sessions/{session.id}/export", query)
    assert response.status_code == 400 and message in response.json()["error"]["message"]


def test_a_stranger_gets_no_bundle(stranger_api, analysed):
    response = stranger_api.get(f"/api/sessions/{analysed.id}/export", {"format": "py", "bundle": "zip"})
    assert response.status_code == 404
