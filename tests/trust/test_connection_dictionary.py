"""A connection's data dictionary (PATCH /api/connections/<id> {"dictionary"}): set by whoever
manages the connection (a workspace's admins and owners; 403 for its other members, 404 for a
stranger), checked against the tables its last Test found and bounded as a file's, and given to
the model beside the connection's schema."""

from __future__ import annotations

import json

import pytest

from analyst.connections import attachments, describe, registry
from analyst.models import AnalysisSession, Connection
from analyst.trust.dictionary import MAX_TEXT, MAX_TOTAL
from tests.connections.conftest import WAREHOUSE
from tests.workspaces.conftest import client_of, user

pytestmark = pytest.mark.django_db

SCHEMA = {
    "tables": [
        {
            "name": "public.orders",
            "columns": [{"name": "id", "type": "INTEGER"}, {"name": "net", "type": "NUMERIC"}],
        },
        {"name": "public.customers", "columns": [{"name": "email", "type": "TEXT"}]},
    ]
}
DICTIONARY = {
    "tables": {
        "public.orders": {
            "text": "  One row per order,\n since 2019. ",
            "columns": {"net": "EUR, before VAT"},
        },
        "public.customers": {"text": "", "columns": {"email": ""}},  # empty: left out
    }
}


@pytest.fixture
def warehouse(team) -> Connection:
    connection = registry.do_create(owner=user("olga"), fields=WAREHOUSE, workspace=team)
    Connection.objects.filter(id=connection.id).update(schema=SCHEMA)
    connection.refresh_from_db()
    return connection


def patch(name: str, connection: Connection, body: object):
    return client_of(name).patch(f"/api/connections/{connection.id}", json.dumps(body), "application/json")


@pytest.mark.parametrize("name", ["olga", "adam"])
def test_an_admin_or_owner_sets_it_checked_and_trimmed(warehouse, name):
    response = patch(name, warehouse, {"dictionary": DICTIONARY})
    assert response.status_code == 200, response.content
    expected = {
        "tables": {
            "public.orders": {"text": "One row per order, since 2019.", "columns": {"net": "EUR, before VAT"}}
        }
    }
    assert response.json()["connection"]["dictionary"] == expected
    warehouse.refresh_from_db()
    assert warehouse.dictionary == expected
    assert (
        client_of("vic").get(f"/api/connections/{warehouse.id}").json()["connection"]["dictionary"]
        == expected
    )
    assert patch(name, warehouse, {"dictionary": {}}).json()["connection"]["dictionary"] == {}


@pytest.mark.parametrize("name", ["eve", "vic"])
def test_an_editor_or_viewer_may_not(warehouse, name):
    response = patch(name, warehouse, {"dictionary": DICTIONARY})
    assert response.status_code == 403
    assert "admin" in response.json()["error"]["message"]
    warehouse.refresh_from_db()
    assert warehouse.dictionary == {}


def test_a_stranger_gets_404(warehouse, mallory):
    assert patch("mallory", warehouse, {"dictionary": DICTIONARY}).status_code == 404


@pytest.mark.parametrize(
    ("dictionary", "words"),
    [
        ([], "must be an object"),
        ({"file": "x"}, "has no field 'file'"),
        ({"tables": {"public.refunds": {"text": "x"}}}, "has no table 'public.refunds'; its tables are"),
        ({"tables": {"public.orders": {"columns": {"vat": "x"}}}}, "has no column 'vat'"),
        ({"tables": {"public.orders": {"text": 3}}}, "must be a string"),
        ({"tables": {"public.orders": {"text": "x" * (MAX_TEXT + 1)}}}, "at most 1,000"),
    ],
)
def test_a_bad_dictionary_changes_nothing(warehouse, dictionary, words):
    Connection.objects.filter(id=warehouse.id).update(
        dictionary={"tables": {"public.orders": {"text": "kept"}}}
    )
    response = patch("olga", warehouse, {"dictionary": dictionary, "read_only": False})
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_dictionary"
    assert words in response.json()["error"]["message"]
    warehouse.refresh_from_db()
    assert warehouse.dictionary == {"tables": {"public.orders": {"text": "kept"}}}
    assert warehouse.read_only is True, "the rest of the PATCH is not applied either"


def test_the_whole_is_bounded(warehouse):
    wide = {"name": "wide", "columns": [{"name": f"c{i}", "type": "TEXT"} for i in range(30)]}
    Connection.objects.filter(id=warehouse.id).update(schema={"tables": [wide]})
    columns = {f"c{i}": "w" * MAX_TEXT for i in range(MAX_TOTAL // MAX_TEXT + 1)}
    response = patch("olga", warehouse, {"dictionary": {"tables": {"wide": {"columns": columns}}}})
    assert response.status_code == 400
    assert f"at most {MAX_TOTAL:,} are allowed per connection" in response.json()["error"]["message"]


def test_before_a_test_no_table_can_be_described(team):
    connection = registry.do_create(owner=user("olga"), fields=WAREHOUSE, workspace=team)
    response = patch("olga", connection, {"dictionary": {"tables": {"orders": {"text": "x"}}}})
    assert response.status_code == 400
    assert "Test the connection first" in response.json()["error"]["message"]


def test_the_model_is_told_it_beside_the_schema(team, warehouse):
    patch("adam", warehouse, {"dictionary": DICTIONARY})
    session = AnalysisSession.objects.create(owner=user("eve"), workspace=team, model="anthropic/claude-test")
    attachments.do_attach(session=session, connection=warehouse)
    told = describe.told(session)
    assert (
        "- public.orders: id INTEGER, net NUMERIC\n"
        "  the user says: One row per order, since 2019.\n"
        "  column 'net': EUR, before VAT\n"
        "- public.customers: email TEXT"
    ) in told

    # A Test that finds the table changed: what it no longer has is not told.
    Connection.objects.filter(id=warehouse.id).update(
        schema={"tables": [{"name": "public.orders", "columns": [{"name": "id", "type": "INTEGER"}]}]}
    )
    told = describe.told(session)
    assert "One row per order" in told and "EUR, before VAT" not in told
