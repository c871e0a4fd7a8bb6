"""An upload's data dictionary through the API: the owner describes the file, its tables and
columns (only those the sandbox found in it, within bounds), the listing shows it, the model is
given it beside the file's schema, and a fork keeps it."""

from __future__ import annotations

import json

import pytest
from django.core.files.base import ContentFile

from analyst.files import reports
from analyst.models import AnalysisSession, DataFile
from analyst.sessions import forks
from analyst.trust.dictionary import MAX_TEXT, MAX_TOTAL
from analyst.turns.agent.prompt import system_prompt

SALES = json.dumps(
    {
        "format": "csv",
        "tables": [
            {
                "path": "data/sales.csv",
                "rows": 2,
                "columns": [{"name": "region", "dtype": "object"}, {"name": "amount", "dtype": "float64"}],
                "column_count": 2,
            }
        ],
    }
)
BOOK = json.dumps(
    {
        "format": "excel",
        "sheets": ["Q1", "Q2"],
        "tables": [
            {
                "path": "data/book.xlsx",
                "sheet": "Q1",
                "rows": 1,
                "columns": [{"name": "net", "dtype": "int64"}],
            },
            {
                "path": "data/book.xlsx",
                "sheet": "Q2",
                "rows": 1,
                "columns": [{"name": "gross", "dtype": "int64"}],
            },
        ],
    }
)


def described_file(session: AnalysisSession, name: str, report: str) -> DataFile:
    """An upload as the sandbox would have described it (through the same checks)."""
    description = reports.checked(report)
    data_file = DataFile(
        session=session,
        name=name,
        path=f"data/{name}",
        size=4,
        placement="ready",
        description=description,
        summary=reports.summary(f"data/{name}", description),
    )
    data_file.stored.save(name, ContentFile(b"a\n1\n"))
    return data_file


@pytest.fixture
def sales(session, media) -> DataFile:
    return described_file(session, "sales.csv", SALES)


def describe(client, data_file: DataFile, body: object, session: AnalysisSession | None = None):
    session = session or data_file.session
    sent = body if isinstance(body, str) else json.dumps(body)
    return client.patch(f"/api/sessions/{session.id}/files/{data_file.id}", sent, "application/json")


def dictionary_of(data_file: DataFile) -> dict:
    return DataFile.objects.get(id=data_file.id).dictionary


def test_the_owner_describes_a_file_and_its_columns(api, session, sales):
    sent = {
        "file": "  Sales export\nfrom the shop. ",
        "tables": {"": {"columns": {"amount": "net revenue in EUR, before VAT", "region": ""}}},
    }
    response = describe(api, sales, {"dictionary": sent})
    assert response.status_code == 200, response.content
    saved = {
        "file": "Sales export from the shop.",
        "tables": {"": {"columns": {"amount": "net revenue in EUR, before VAT"}}},
    }
    assert response.json()["file"]["dictionary"] == saved
    assert dictionary_of(sales) == saved
    (listed,) = api.get(f"/api/sessions/{session.id}/files").json()["files"]
    assert listed["dictionary"] == saved
    assert listed["url"] == f"/api/sessions/{session.id}/files/{sales.id}"

    # The whole dictionary is replaced: what is left out is gone.
    assert describe(api, sales, {"dictionary": {"file": "Shop sales."}}).json()["file"]["dictionary"] == {
        "file": "Shop sales."
    }
    assert describe(api, sales, {"dictionary": {}}).status_code == 200
    assert dictionary_of(sales) == {}


def test_a_workbook_is_described_sheet_by_sheet(api, session, media):
    book = described_file(session, "book.xlsx", BOOK)
    sent = {
        "tables": {
            "Q1": {"text": "First quarter", "columns": {"net": "after tax"}},
            "Q2": {"columns": {"gross": "before tax"}},
        }
    }
    assert describe(api, book, {"dictionary": sent}).status_code == 200
    assert dictionary_of(book) == sent
    refused = describe(api, book, {"dictionary": {"tables": {"Q1": {"columns": {"gross": "x"}}}}})
    assert refused.json()["error"]["message"] == "table 'Q1' has no column 'gross'"


@pytest.mark.parametrize(
    ("body", "code", "message"),
    [
        ("[", "invalid_json", "the request body is not valid JSON"),
        (
            {"dictionary": "amounts"},
            "invalid_dictionary",
            'the dictionary must be an object: {"file": "…", "tables": {…}}',
        ),
        (
            {"dictionary": {"notes": "x"}},
            "invalid_dictionary",
            "the dictionary has no field 'notes'; it has 'file' and 'tables'",
        ),
        ({"dictionary": {"file": 3}}, "invalid_dictionary", "the description of sales.csv must be a string"),
        (
            {"dictionary": {"tables": []}},
            "invalid_dictionary",
            "'tables' must be an object of the file's tables by name ('' for a file of one table)",
        ),
        (
            {"dictionary": {"tables": {"Q1": {}}}},
            "invalid_dictionary",
            "sales.csv has no table 'Q1'; its tables are '' ('' is a file of one table)",
        ),
        (
            {"dictionary": {"tables": {"": {"columns": {"price": "x"}}}}},
            "invalid_dictionary",
            "the table has no column 'price'",
        ),
        (
            {"dictionary": {"tables": {"": {"columns": {"amount": None}}}}},
            "invalid_dictionary",
            "the description of column 'amount' must be a string",
        ),
        (
            {"dictionary": {"tables": {"": {"columns": ["amount"]}}}},
            "invalid_dictionary",
            "the columns of the table must be an object of descriptions by column name",
        ),
        (
            {"dictionary": {"tables": {"": {"text": "x", "rows": 3}}}},
            "invalid_dictionary",
            "the table has no field 'rows'; it has 'columns' and 'text'",
        ),
        (
            {"dictionary": {"file": "x" * (MAX_TEXT + 1)}},
            "invalid_dictionary",
            f"the description of sales.csv is {MAX_TEXT + 1:,} characters long; at most {MAX_TEXT:,} are"
            " allowed",
        ),
    ],
)
def test_bad_dictionaries_are_refused_and_change_nothing(api, sales, body, code, message):
    kept = {"file": "Shop sales."}
    assert describe(api, sales, {"dictionary": kept}).status_code == 200
    response = describe(api, sales, body)
    assert (response.status_code, response.json()) == (400, {"error": {"code": code, "message": message}})
    assert dictionary_of(sales) == kept


@pytest.mark.parametrize(("body", "instead"), [({}, ""), ({"dictionary": {}, "name": "x"}, ", not 'name'")])
def test_a_body_must_name_what_it_changes(api, sales, body, instead):
    response = describe(api, sales, body)
    assert (response.status_code, response.json()["error"]["code"]) == (400, "invalid_request")
    message = response.json()["error"]["message"]
    assert message.startswith("send 'dictionary' or ") and message.endswith(instead)


def test_a_whole_dictionary_is_bounded(api, session, media):
    columns = [{"name": f"c{n}", "dtype": "int64"} for n in range(MAX_TOTAL // MAX_TEXT + 1)]
    wide = described_file(
        session,
        "wide.csv",
        json.dumps({"format": "csv", "tables": [{"path": "data/wide.csv", "columns": columns}]}),
    )
    every = {c["name"]: "x" * MAX_TEXT for c in columns}
    response = describe(api, wide, {"dictionary": {"tables": {"": {"columns": every}}}})
    assert response.status_code == 400
    total = MAX_TEXT * len(columns)
    assert response.json()["error"]["message"] == (
        f"the dictionary holds {total:,} characters; at most {MAX_TOTAL:,} are allowed per file"
    )
    del every["c0"]
    assert describe(api, wide, {"dictionary": {"tables": {"": {"columns": every}}}}).status_code == 200


def test_a_file_not_read_yet_takes_only_its_own_description(api, session, media):
    placing = DataFile(session=session, name="late.csv", path="data/late.csv", size=4)
    placing.stored.save("late.csv", ContentFile(b"a\n1\n"))
    assert describe(api, placing, {"dictionary": {"file": "Late orders"}}).status_code == 200
    refused = describe(api, placing, {"dictionary": {"tables": {"": {"columns": {"a": "x"}}}}})
    assert refused.json()["error"]["message"] == (
        "late.csv has no table ''; it has not been read yet, so only its own description ('file') can be set"
    )


def test_a_stranger_and_another_sessions_url_get_404(api, stranger_api, alice, session, sales):
    response = describe(stranger_api, sales, {"dictionary": {"file": "mine now"}})
    assert (response.status_code, response.json()["error"]["code"]) == (404, "not_found")
    other = AnalysisSession.objects.create(owner=alice, model="anthropic/claude-test")
    assert describe(api, sales, {"dictionary": {"file": "x"}}, session=other).status_code == 404
    assert dictionary_of(sales) == {}


def test_without_credentials_it_is_401(client, sales):
    response = describe(client, sales, {"dictionary": {"file": "x"}})
    assert response.status_code == 401
    assert dictionary_of(sales) == {}


def test_the_model_is_given_it_beside_the_files_schema(api, session, sales):
    sent = {"file": "Sales export.", "tables": {"": {"columns": {"amount": "net revenue in EUR"}}}}
    describe(api, sales, {"dictionary": sent})
    prompt = system_prompt(session)
    assert (
        sales.summary + "\nThe user's data dictionary for data/sales.csv:\n- the file: Sales export.\n"
        "- column 'amount': net revenue in EUR"
    ) in prompt


def test_the_model_is_told_of_sheets_and_not_of_columns_read_away(api, session, media):
    book = described_file(session, "book.xlsx", BOOK)
    sent = {"tables": {"Q1": {"text": "First quarter", "columns": {"net": "after tax"}}}}
    describe(api, book, {"dictionary": sent})
    assert "- table 'Q1': First quarter\n- column 'net' of table 'Q1': after tax" in system_prompt(session)
    # Read again with other columns (say, another header row): the old names are not told.
    DataFile.objects.filter(id=book.id).update(description=reports.checked(SALES))
    assert "data dictionary" not in system_prompt(session)


def test_a_fork_keeps_it(api, alice, mallory, session, sales):
    sent = {"file": "Sales export.", "tables": {"": {"columns": {"amount": "net revenue in EUR"}}}}
    describe(api, sales, {"dictionary": sent})
    for owner in (alice, mallory):  # one's own fork, and one through a share link
        fork = forks.do_fork(source=session, owner=owner, files=True, kernel_state=False)
        assert fork.files.get().dictionary == sent
        assert "- column 'amount': net revenue in EUR" in system_prompt(fork)
