"""A session's secret variables through the API: names go out, values never do (nor are they in
the database in the clear); names are checked, a session holds at most 32, and another user's
session is 404."""

from __future__ import annotations

import json

import pytest
from django.db import connection as database

from analyst.connections import registry, session_secrets
from analyst.models import SessionConnection, SessionSecret
from analyst.sessions import forks

pytestmark = pytest.mark.django_db
VALUE = "sk-test-Q7w9e8r7t6y5"


def post(client, session, body):
    return client.post(f"/api/sessions/{session.id}/secrets", json.dumps(body), "application/json")


def test_names_go_out_values_never(api, session):
    answers = [post(api, session, {"name": "OPENAI_API_KEY", "value": VALUE})]
    assert answers[0].status_code == 201
    assert answers[0].json() == {"secrets": [{"name": "OPENAI_API_KEY"}]}
    answers.append(post(api, session, {"name": "OPENAI_API_KEY", "value": VALUE + "-new"}))
    assert answers[-1].status_code == 201, "the same name again replaces its value"
    answers.append(post(api, session, {"name": "A_TOKEN", "value": "tok-12345"}))
    answers.append(api.get(f"/api/sessions/{session.id}/secrets"))
    assert answers[-1].json() == {"secrets": [{"name": "A_TOKEN"}, {"name": "OPENAI_API_KEY"}]}
    answers.append(api.get(f"/api/sessions/{session.id}"))
    assert not any(VALUE in a.content.decode() or "tok-12345" in a.content.decode() for a in answers)

    with database.cursor() as cursor:
        cursor.execute(f"select * from {SessionSecret._meta.db_table}")
        stored = repr(cursor.fetchall())
    assert VALUE not in stored and "tok-12345" not in stored, "sealed at rest"
    assert session_secrets.all_secrets(session) == {"OPENAI_API_KEY": VALUE + "-new", "A_TOKEN": "tok-12345"}

    deleted = api.delete(f"/api/sessions/{session.id}/secrets/A_TOKEN")
    assert deleted.status_code == 204
    assert api.delete(f"/api/sessions/{session.id}/secrets/A_TOKEN").status_code == 404
    assert api.get(f"/api/sessions/{session.id}/secrets").json() == {"secrets": [{"name": "OPENAI_API_KEY"}]}


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ({"name": "lower_case", "value": VALUE}, "environment variable's name"),
        ({"name": "9LIVES", "value": VALUE}, "environment variable's name"),
        ({"name": "WITH-DASH", "value": VALUE}, "environment variable's name"),
        ({"name": "A" * 129, "value": VALUE}, "environment variable's name"),
        ({"value": VALUE}, "environment variable's name"),
        ({"name": "PATH", "value": VALUE}, "kernel itself relies on"),
        ({"name": "LD_PRELOAD", "value": VALUE}, "kernel itself relies on"),
        ({"name": "KEY", "value": ""}, "non-empty string"),
        ({"name": "KEY", "value": 12345}, "non-empty string"),
        ({"name": "KEY", "value": "abc"}, "at least 4 characters"),
        ({"name": "KEY", "value": "a\0bcdef"}, "no NUL"),
    ],
)
def test_bad_names_and_values_are_refused(api, session, body, says):
    response = post(api, session, body)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_secret"
    assert says in response.json()["error"]["message"]
    assert not SessionSecret.objects.exists()


def test_at_most_32_per_session(api, session):
    for i in range(32):
        assert post(api, session, {"name": f"KEY_{i}", "value": f"value-{i}"}).status_code == 201
    refused = post(api, session, {"name": "ONE_MORE", "value": "value-x"})
    assert refused.status_code == 400 and "at most 32" in refused.json()["error"]["message"]
    assert post(api, session, {"name": "KEY_0", "value": "replaced"}).status_code == 201, "a replacement fits"


def test_another_users_session_is_404(api, stranger_api, session):
    assert post(api, session, {"name": "MINE", "value": VALUE}).status_code == 201
    path = f"/api/sessions/{session.id}/secrets"
    assert stranger_api.get(path).status_code == 404
    assert post(stranger_api, session, {"name": "THEIRS", "value": VALUE}).status_code == 404
    assert stranger_api.delete(f"{path}/MINE").status_code == 404
    assert api.get(path).json() == {"secrets": [{"name": "MINE"}]}


def test_methods_not_allowed(api, session):
    path = f"/api/sessions/{session.id}/secrets"
    assert api.put(path, "{}", "application/json").status_code == 405
    assert api.get(f"{path}/MINE").status_code == 405


def test_ones_own_fork_keeps_the_secrets_someone_elses_gets_none(api, alice, mallory, session):
    assert post(api, session, {"name": "MINE", "value": VALUE}).status_code == 201
    mine = forks.do_fork(source=session, owner=alice)
    assert session_secrets.all_secrets(mine) == {"MINE": VALUE}
    theirs = forks.do_fork(source=session, owner=mallory)
    assert session_secrets.all_secrets(theirs) == {}


def test_connection_and_variable_secrets_are_redacted_by_their_names(api, alice, session):
    warehouse = registry.do_create(
        owner=alice,
        fields={
            "name": "warehouse",
            "kind": "postgres",
            "url": "postgresql://analyst@db.internal/sales",
            "secret": "pw-Zq8!s3cr3t",
        },
    )
    SessionConnection.objects.create(session=session, connection=warehouse)
    assert post(api, session, {"name": "API_KEY", "value": VALUE}).status_code == 201
    redactor = session_secrets.redactor_for(session)
    shown = redactor.text(f"postgresql://analyst:pw-Zq8%21s3cr3t@127.0.0.1:17001/sales key={VALUE}")
    assert shown == "postgresql://analyst:«secret:warehouse»@127.0.0.1:17001/sales key=«secret:API_KEY»"
