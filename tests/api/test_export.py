"""GET /api/sessions/<id>/export?format=: the owner downloads the session as a notebook (also
with no format), a script or a report; an unknown format is 400, a stranger gets 404 (what each
format holds is tested in tests/integration/test_export.py)."""

from __future__ import annotations

import nbformat
import pytest

from analyst.realtime import events
from analyst.sessions.exports import runtime


@pytest.fixture
def ran(session):
    events.append(session.id, "cell", {"code": "print(1)"})
    events.append(session.id, "stdout", {"text": "1\n"})
    return session


@pytest.mark.parametrize(
    ("format", "content_type"),
    [("ipynb", "application/x-ipynb+json"), ("py", "text/x-python"), ("html", "text/html")],
)
def test_the_owner_downloads_each_format(api, ran, format, content_type):
    response = api.get(f"/api/sessions/{ran.id}/export", {"format": format})
    assert response.status_code == 200, response.content
    assert response["Content-Type"].startswith(content_type)
    assert response["Content-Disposition"] == f'attachment; filename="untitled-analysis.{format}"'
    assert "print(1)" in response.content.decode()


def test_the_notebook_holds_the_cell_and_its_output(api, ran):
    book = nbformat.reads(api.get(f"/api/sessions/{ran.id}/export").content.decode(), as_version=4)
    code = [cell for cell in book.cells if cell.cell_type == "code"]  # no format: the notebook
    assert [cell.source for cell in code] == ["\n".join(runtime.implicit_imports()), "print(1)"]
    assert code[1].outputs == [{"output_type": "stream", "name": "stdout", "text": "1\n"}]


def test_an_unknown_format_is_400(api, ran):
    response = api.get(f"/api/sessions/{ran.id}/export", {"format": "docx"})
    assert response.status_code == 400 and "ipynb, py, html" in response.json()["error"]["message"]


def test_a_stranger_gets_404(stranger_api, ran):
    response = stranger_api.get(f"/api/sessions/{ran.id}/export", {"format": "ipynb"})
    assert response.status_code == 404 and response.json()["error"]["code"] == "not_found"


def test_only_get(api, ran):
    assert api.post(f"/api/sessions/{ran.id}/export?format=py").status_code == 405
