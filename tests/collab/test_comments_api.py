"""Comments through the API: any member comments on a question, a cell or an answer; their author
or an admin deletes them; a stranger finds no session."""

from __future__ import annotations

import pytest

from analyst.collab.comments import MAX_LENGTH
from analyst.models import AuditEntry, Comment
from tests.collab.conftest import seq_of
from tests.workspaces.conftest import bearer_client, client_of

pytestmark = pytest.mark.django_db(transaction=True)


def url(session, *rest) -> str:
    return "/".join([f"/api/sessions/{session.id}/comments", *map(str, rest)])


def comment(name, session, seq, text="Check the North."):
    return client_of(name).post(url(session), {"seq": seq, "text": text}, "application/json")


def test_a_viewer_comments_on_an_answer_and_every_member_reads_it(session):
    answer = seq_of(session, "assistant_message")
    made = comment("vic", session, answer, "Is <b>North</b> net of returns?")
    assert made.status_code == 201, made.json()
    assert made.json() | {"created_at": "…"} == {
        "id": made.json()["id"],
        "seq": answer,
        "text": "Is <b>North</b> net of returns?",  # kept as written: the page shows it as text
        "author": "vic",
        "created_at": "…",
    }
    for name in ("olga", "adam", "eve", "vic"):
        listed = client_of(name).get(url(session))
        assert [c["text"] for c in listed.json()["comments"]] == ["Is <b>North</b> net of returns?"]
    entry = AuditEntry.objects.get(action="comment_add")
    assert (entry.username, entry.target) == ("vic", f"session:{session.id}")


@pytest.mark.parametrize("type", ["user_message", "tool_call", "assistant_message"])
def test_questions_cells_and_answers_take_comments(session, type):
    assert comment("eve", session, seq_of(session, type)).status_code == 201


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ({"seq": 3, "text": "x"}, "this session has no question, cell or answer with seq 3"),  # stdout
        ({"seq": 99, "text": "x"}, "this session has no question, cell or answer with seq 99"),
        ({"seq": "4", "text": "x"}, "'seq' must be the seq of a question, a cell or an answer"),
        ({"seq": 4, "text": "  \n"}, "'text' must be a non-empty string"),
        ({"seq": 4}, "'text' must be a non-empty string"),
        ({"seq": 4, "text": "x" * (MAX_LENGTH + 1)}, f"a comment is at most {MAX_LENGTH:,} characters"),
    ],
)
def test_a_bad_comment_is_400_and_says_why(session, body, says):
    refused = client_of("eve").post(url(session), body, "application/json")
    assert refused.status_code == 400
    assert refused.json()["error"]["code"] == "invalid_comment"
    assert says in refused.json()["error"]["message"]
    assert not Comment.objects.exists()


def test_a_stranger_finds_no_session_and_no_comment(session, mallory):
    made = comment("vic", session, 4).json()
    stranger = bearer_client(mallory)
    assert stranger.get(url(session)).status_code == 404
    assert stranger.post(url(session), {"seq": 4, "text": "hi"}, "application/json").status_code == 404
    assert stranger.delete(url(session, made["id"])).status_code == 404
    assert Comment.objects.count() == 1


def test_a_comment_of_another_session_is_not_found_here(session, team):
    from analyst.models import AnalysisSession

    other = AnalysisSession.objects.create(owner=session.owner, workspace=team, model="m")
    made = comment("vic", session, 4).json()
    assert client_of("vic").delete(f"/api/sessions/{other.id}/comments/{made['id']}").status_code == 404
    assert Comment.objects.filter(id=made["id"]).exists()


def test_its_author_or_an_admin_deletes_a_comment_not_another_member(session):
    first, second = comment("vic", session, 4).json(), comment("vic", session, 2).json()
    refused = client_of("eve").delete(url(session, first["id"]))
    assert refused.status_code == 403
    assert refused.json()["error"] == {
        "code": "forbidden",
        "message": "only its author or an admin of Team may delete a comment",
    }
    assert client_of("vic").delete(url(session, first["id"])).status_code == 204
    assert client_of("adam").delete(url(session, second["id"])).status_code == 204
    assert not Comment.objects.exists()
    assert AuditEntry.objects.filter(action="comment_delete").count() == 2
