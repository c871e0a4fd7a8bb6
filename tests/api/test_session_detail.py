"""Rename, change the model of, and delete a session; its files panel: the owner's alone."""

from __future__ import annotations

import json

from django.core.files.base import ContentFile

from analyst.models import AnalysisSession, DataFile

JSON = "application/json"


def test_changing_the_model_says_whether_it_has_a_key(api, session, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    change = json.dumps({"model": "openai/gpt-test"})
    assert api.patch(f"/api/sessions/{session.id}", change, JSON).json()["model_key_missing"] is True
    change = json.dumps({"model": "anthropic/claude-test"})
    assert api.patch(f"/api/sessions/{session.id}", change, JSON).json()["model_key_missing"] is False


def test_rename_and_change_the_model(api, session):
    response = api.patch(
        f"/api/sessions/{session.id}", json.dumps({"title": " Churn ", "model": "openai/gpt-test"}), JSON
    )
    assert response.status_code == 200
    assert (response.json()["title"], response.json()["model"]) == ("Churn", "openai/gpt-test")
    bad = api.patch(f"/api/sessions/{session.id}", json.dumps({"model": "nope/x"}), JSON)
    assert bad.status_code == 400 and bad.json()["error"]["code"] == "invalid_model"
    assert api.patch(f"/api/sessions/{session.id}", json.dumps({"title": ""}), JSON).status_code == 400
    session.refresh_from_db()
    assert (session.title, session.model) == ("Churn", "openai/gpt-test")


def test_a_stranger_can_neither_see_nor_change_nor_delete(stranger_api, session):
    url = f"/api/sessions/{session.id}"
    assert stranger_api.get(url).status_code == 404
    assert stranger_api.patch(url, json.dumps({"title": "mine"}), JSON).status_code == 404
    assert stranger_api.delete(url).status_code == 404
    assert stranger_api.get(f"{url}/files").status_code == 404
    assert stranger_api.get(f"{url}/files/download?path=data/a.csv").status_code == 404
    assert AnalysisSession.objects.filter(id=session.id, title=session.title).exists()


def test_delete(api, session, media, django_capture_on_commit_callbacks):
    data_file = DataFile(session=session, name="a.csv", path="data/a.csv", size=4)
    data_file.stored.save("a.csv", ContentFile(b"a\n1\n"))
    stored = data_file.stored.path
    with django_capture_on_commit_callbacks(execute=True):  # stored files go once the rows have
        assert api.delete(f"/api/sessions/{session.id}").status_code == 200
    assert not AnalysisSession.objects.filter(id=session.id).exists()
    assert not __import__("os").path.exists(stored)


def test_files_panel_lists_and_downloads_uploads_without_a_sandbox(api, session, media):
    data_file = DataFile(session=session, name="a.csv", path="data/a.csv", size=4, rows=1, columns=1)
    data_file.stored.save("a.csv", ContentFile(b"a\n1\n"))
    body = api.get(f"/api/sessions/{session.id}/files").json()
    assert body["max_upload"] > 0
    (listed,) = body["files"]
    base = f"/api/sessions/{session.id}/files"
    assert {key: listed[key] for key in ("path", "name", "size", "rows", "columns", "kind")} == {
        "path": "data/a.csv",
        "name": "a.csv",
        "size": 4,
        "rows": 1,
        "columns": 1,
        "kind": "upload",
    }
    assert listed["download_url"] == f"{base}/download?path=data%2Fa.csv"
    assert (listed["delete_url"], listed["options_url"]) == (
        f"{base}/{data_file.id}",
        f"{base}/{data_file.id}/options",
    )
    download = api.get(body["files"][0]["download_url"])
    assert download.status_code == 200 and b"".join(download) == b"a\n1\n"
    assert download["Content-Length"] == "4"
    assert download["Content-Disposition"] == 'attachment; filename="a.csv"'
    assert api.get(f"/api/sessions/{session.id}/files/download?path=../../etc/passwd").status_code == 404
