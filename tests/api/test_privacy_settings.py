"""A session's privacy settings and an upload's column marks through the API: checked (a bad value
changes nothing), the owner's alone, and what the model's system prompt then says and withholds."""

from __future__ import annotations

import json

from django.core.files.base import ContentFile

from analyst.files import reports
from analyst.models import AnalysisSession, DataFile
from analyst.sessions import forks
from analyst.trust import privacy
from analyst.turns.agent.prompt import system_prompt

PEOPLE = json.dumps(
    {
        "format": "csv",
        "tables": [
            {
                "path": "data/people.csv",
                "rows": 3,
                "columns": [
                    {"name": "name", "dtype": "object", "samples": ["Ann Vell"]},
                    {"name": "email", "dtype": "object", "samples": ["ann@vell.io"]},
                    {"name": "age", "dtype": "int64", "samples": ["41"]},
                ],
                "column_count": 3,
                "preview": {"columns": ["name", "email", "age"], "rows": [["Ann Vell", "ann@vell.io", "41"]]},
                "values": {
                    "name": ["Ann Vell", "Bo Rask", "Cy Orme"],
                    "email": ["ann@vell.io", "bo@rask.io"],
                },
            }
        ],
    }
)


def people(session: AnalysisSession) -> DataFile:
    description = reports.checked(PEOPLE)
    data_file = DataFile(
        session=session,
        name="people.csv",
        path="data/people.csv",
        size=4,
        placement="ready",
        description=description,
        summary=reports.summary("data/people.csv", description),
        proposed_marks={"": {"email": "email"}},
    )
    data_file.stored.save("people.csv", ContentFile(b"a\n1\n"))
    return data_file


def patch(client, url: str, body: object):
    return client.patch(url, json.dumps(body), "application/json")


def test_the_owner_sets_schema_mode_and_chart_images(api, session):
    response = patch(api, f"/api/sessions/{session.id}", {"privacy": "schema", "send_chart_images": False})
    assert response.status_code == 200
    assert (response.json()["privacy"], response.json()["send_chart_images"]) == ("schema", False)
    session.refresh_from_db()
    assert (session.privacy, session.send_chart_images) == ("schema", False)
    assert api.get(f"/api/sessions/{session.id}").json()["privacy"] == "schema"


def test_bad_values_change_nothing(api, session):
    for body in ({"privacy": "none", "title": "Renamed"}, {"send_chart_images": "no", "title": "Renamed"}):
        response = patch(api, f"/api/sessions/{session.id}", body)
        assert response.status_code == 400
        assert response.json()["error"]["code"] == "invalid_request"
    session.refresh_from_db()
    assert (session.privacy, session.send_chart_images, session.title) == ("full", True, "Untitled analysis")


def test_a_stranger_cannot_change_them(stranger_api, api, session, media):
    data_file = people(session)
    assert patch(stranger_api, f"/api/sessions/{session.id}", {"privacy": "schema"}).status_code == 404
    marks = {"column_marks": {"": {"email": "sensitive"}}}
    assert patch(stranger_api, f"/api/sessions/{session.id}/files/{data_file.id}", marks).status_code == 404
    data_file.refresh_from_db()
    assert data_file.column_marks == {}


def test_marks_are_merged_and_decide_proposals(api, session, media):
    data_file = people(session)
    url = f"/api/sessions/{session.id}/files/{data_file.id}"
    response = patch(api, url, {"column_marks": {"": {"email": "sensitive", "name": "sensitive"}}})
    assert response.status_code == 200, response.content
    assert response.json()["file"]["proposed_marks"] == {}
    response = patch(api, url, {"column_marks": {"": {"name": None, "age": "ordinary"}}})
    assert response.json()["file"]["column_marks"] == {"": {"email": "sensitive", "age": "ordinary"}}
    assert "values" not in response.json()["file"]["tables"][0], "the kept values stay on the server"
    listed = api.get(f"/api/sessions/{session.id}/files").json()["files"][0]
    assert listed["column_marks"] == {"": {"email": "sensitive", "age": "ordinary"}}


def test_bad_marks_are_refused_whole(api, session, media):
    data_file = people(session)
    url = f"/api/sessions/{session.id}/files/{data_file.id}"
    for marks, words in [
        ({"": {"phone": "sensitive"}}, "has no column 'phone'"),
        ({"Sheet1": {"email": "sensitive"}}, "has no table 'Sheet1'"),
        ({"": {"email": "secret"}}, 'must be "sensitive", "ordinary" or null'),
        (["email"], "must be an object"),
    ]:
        response = patch(api, url, {"column_marks": marks})
        assert response.status_code == 400
        assert response.json()["error"]["code"] == "invalid_column_marks"
        assert words in response.json()["error"]["message"]
    data_file.refresh_from_db()
    assert (data_file.column_marks, data_file.proposed_marks) == ({}, {"": {"email": "email"}})


def test_the_system_prompt_says_what_is_withheld(session, media):
    people(session)
    assert "First rows:" in system_prompt(session) and "Privacy:" not in system_prompt(session)
    DataFile.objects.update(column_marks={"": {"email": "sensitive"}})
    prompt = system_prompt(session)
    assert "columns the user marked sensitive (email)" in prompt
    assert "First rows:" not in prompt and "e.g." not in prompt, "samples are cut: none go"
    policy = privacy.policy_for(session)
    assert policy.redact("Ann Vell <ann@vell.io>")[0] == "Ann Vell <«col:email»>"
    session.privacy, session.send_chart_images = "schema", False
    session.save()
    prompt = system_prompt(session)
    assert "schema mode" in prompt and "Chart images are not sent" in prompt
    assert "Ann Vell" not in prompt and "ann@vell.io" not in prompt and "41" not in prompt
    assert "name (object); email (object); age (int64)" in prompt


def test_a_fork_keeps_the_mode_and_the_marks(alice, mallory, session, media):
    data_file = people(session)
    DataFile.objects.filter(id=data_file.id).update(column_marks={"": {"email": "sensitive"}})
    AnalysisSession.objects.filter(id=session.id).update(privacy="schema", send_chart_images=False)
    session.refresh_from_db()
    for owner in (alice, mallory):  # one's own fork, and one through a share link
        fork = forks.do_fork(source=session, owner=owner, files=True, kernel_state=False)
        assert (fork.privacy, fork.send_chart_images) == ("schema", False)
        copied = fork.files.get()
        assert (copied.column_marks, copied.proposed_marks) == (
            {"": {"email": "sensitive"}},
            {"": {"email": "email"}},
        )
        assert "Ann Vell" not in privacy.policy_for(fork).redact("Ann Vell wrote")[0]
