"""Uploads of every common shape, through the API into a real sandbox: each is described there,
the model is told how to load it, the panel shows the same facts, corrections read it again, a
delete takes it out of the sandbox, and a question asked at once waits for its files."""

from __future__ import annotations

import json
import time

from django.core.files.base import ContentFile

from analyst.models import DataFile
from sandboxes import Sandbox
from tests import made_files
from tests.api.conftest import upload
from tests.fakes.model_server import anthropic_text
from tests.integration.test_resume_and_fork import run_cell
from tests.printed import printed_in_last_turn


def added(session, name: str, *, after: int = 0, timeout: float = 90) -> dict:
    """The payload of ``name``'s newest file_added event (waiting for one newer than seq ``after``)."""
    deadline = time.monotonic() + timeout
    while True:
        found = [
            e
            for e in session.events.filter(type="file_added", seq__gt=after).order_by("seq")
            if e.payload["name"] == name
        ]
        if found:
            return found[-1].payload
        failed = session.events.filter(type="error", payload__code="file_not_placed", seq__gt=after)
        assert not failed.exists(), failed.first().payload
        assert time.monotonic() < deadline, f"{name} was not described"
        time.sleep(0.1)


def uploaded(api, session, name: str, content: bytes) -> dict:
    response = upload(api, session, name, content)
    assert response.status_code == 202, response.content
    return added(session, name)


def ask(stack, api, session, question: str = "What is in it?") -> str:
    """The system prompt of the model's first request for ``question``."""
    stack.script(anthropic_text("Here it is."))
    seen = len(stack.requests)
    ends = ["turn_done", "turn_failed", "turn_cancelled"]
    ended_before = session.events.filter(type__in=ends).count()
    response = api.post(f"/api/sessions/{session.id}/messages", {"content": question}, "application/json")
    assert response.status_code == 202, response.content
    deadline = time.monotonic() + 90
    while session.events.filter(type__in=ends).count() <= ended_before:
        assert time.monotonic() < deadline, "the turn did not end"
        time.sleep(0.05)
    last = session.events.order_by("-seq").first()
    assert last.type == "turn_done", (last.type, last.payload)
    return stack.requests[seen].json["system"]


def loads_to(api, session, load: str) -> list:
    """Run the describer's load call in the session's kernel: the frame's shape and dtypes."""
    code = f"_df = {load}\nprint(json.dumps([list(_df.shape), [str(t) for t in _df.dtypes]]))"
    return json.loads(printed_in_last_turn(run_cell(api, session, "import json\n" + code)))


def test_a_csv_exported_by_a_french_excel(stack, api, session):
    payload = uploaded(api, session, "ventes.csv", made_files.FRENCH_CSV)
    (table,) = payload["tables"]
    assert (payload["status"], payload["format"], payload["read_error"]) == ("ready", "csv", "")
    assert table["detected"]["delimiter"] == ";" and table["detected"]["decimal"] == ","
    assert table["detected"]["encoding"].replace("-", "").lower() in ("cp1252", "windows1252", "latin1")
    assert (table["rows"], table["column_count"]) == (3, 4)
    assert (payload["rows"], payload["columns"]) == (3, 4)
    dtypes = {c["name"]: c["dtype"] for c in table["columns"]}
    assert dtypes["prix"] == "float64" and dtypes["quantité"] == "int64", dtypes
    shape, loaded = loads_to(api, session, table["load"])
    assert (shape, loaded[1:3]) == ([3, 4], ["float64", "int64"])
    system = ask(stack, api, session)
    assert table["load"] in system and "prix (float64" in system and "data/ventes.csv" in system


def test_a_workbook_is_described_sheet_by_sheet(stack, api, session):
    payload = uploaded(api, session, "economy.xlsx", made_files.workbook())
    assert (payload["format"], payload["sheets"]) == ("excel", ["employment", "gdp"])
    shapes = {t["sheet"]: (t["rows"], t["column_count"]) for t in payload["tables"]}
    assert shapes == {"employment": (3, 2), "gdp": (2, 4)}
    employment = next(t for t in payload["tables"] if t["sheet"] == "employment")
    assert "sheet_name='employment'" in employment["load"]
    assert loads_to(api, session, employment["load"])[0] == [3, 2]
    system = ask(stack, api, session)
    assert "pd.read_excel('data/economy.xlsx', sheet_name='employment')" in system
    assert "sheet 'gdp': 2 rows x 4 columns" in system
    listed = next(
        f for f in api.get(f"/api/sessions/{session.id}/files").json()["files"] if f["kind"] == "upload"
    )
    assert [t["sheet"] for t in listed["tables"]] == ["employment", "gdp"]


def test_parquet_is_read_and_duckdb_queries_it_in_place(stack, api, session):
    payload = uploaded(api, session, "airports.parquet", made_files.parquet())
    (table,) = payload["tables"]
    assert (payload["format"], table["rows"], table["column_count"]) == ("parquet", 6, 2)
    query = "select state, count(*) from 'data/airports.parquet' group by 1 order by 1"
    code = f"import duckdb\nprint(duckdb.sql({query!r}).fetchall())"
    assert printed_in_last_turn(run_cell(api, session, code)).strip() == "[('CA', 2), ('NY', 1), ('TX', 3)]"


def test_a_zip_of_several_files_gives_several_tables_and_a_delete_takes_them_all(stack, api, session):
    archive = made_files.zipped({"north.csv": made_files.SALES_CSV, "sub/south.tsv": b"a\tb\n1\t2\n"})
    payload = uploaded(api, session, "exports.zip", archive)
    assert payload["format"] == "zip"
    paths = sorted(t["path"] for t in payload["tables"])
    assert paths == ["data/exports/north.csv", "data/exports/sub/south.tsv"]
    listing = api.get(f"/api/sessions/{session.id}/files").json()["files"]
    assert [f["kind"] for f in listing] == ["upload"], "unpacked members are the upload's, not outputs"
    system = ask(stack, api, session)
    assert "data/exports/north.csv: 4 rows x 3 columns." in system

    assert api.delete(listing[0]["delete_url"]).status_code == 200
    session.refresh_from_db()
    with Sandbox.connect(session.sandbox_id) as sandbox:
        assert [e.name for e in sandbox.files.list("data")] == []
    assert "Deleted by the user, no longer in the working folder: data/exports.zip." in ask(
        stack, api, session
    )


def test_a_gzip_csv_is_read_as_it_is(stack, api, session):
    payload = uploaded(api, session, "sales.csv.gz", made_files.gzipped(made_files.SALES_CSV))
    (table,) = payload["tables"]
    assert (payload["compression"], table["rows"], table["column_count"]) == ("gzip", 4, 3)
    assert loads_to(api, session, table["load"])[0] == [4, 3]


def test_bad_files_say_why_and_the_sandbox_keeps_serving(stack, api, session):
    parquet = made_files.parquet()
    bad = {
        "broken.parquet": parquet[: len(parquet) // 2],
        "notreally.xlsx": made_files.SALES_CSV,
        "bomb.zip": made_files.zipped({"zeros.csv": b"0" * (50 << 20)}),  # packs about 1,000 to 1
    }
    for name, content in bad.items():
        assert upload(api, session, name, content).status_code == 202
    errors = {name: added(session, name)["read_error"] for name in bad}
    assert all(errors.values()), errors
    assert "parquet" in errors["broken.parquet"].lower()
    assert "zip" in errors["bomb.zip"].lower() or "large" in errors["bomb.zip"].lower()
    statuses = {f["name"]: f["status"] for f in api.get(f"/api/sessions/{session.id}/files").json()["files"]}
    assert statuses == dict.fromkeys(bad, "ready"), statuses  # in the sandbox, said to be unreadable
    assert printed_in_last_turn(run_cell(api, session, "print(1 + 1)")).strip() == "2"
    system = ask(stack, api, session)
    assert "data/broken.parquet (Parquet): could not be read as a table" in system


def test_a_correction_reads_the_file_again(stack, api, session):
    content = b"title of the export\nname|score\nana|1\nbob|2\n"
    payload = uploaded(api, session, "scores.txt", content)
    file_id, seq = payload["id"], session.events.order_by("-seq").first().seq
    response = api.post(
        f"/api/sessions/{session.id}/files/{file_id}/options",
        {"delimiter": ",", "header_row": 0},
        "application/json",
    )
    assert response.status_code == 202, response.content
    again = added(session, "scores.txt", after=seq)
    (table,) = again["tables"]
    assert again["options"] == {"delimiter": ",", "header_row": 0}
    assert table["column_count"] == 1 and table["preview"]["columns"] == ["title of the export"]
    assert loads_to(api, session, table["load"])[0] == [3, 1]


def test_a_question_asked_while_a_file_is_on_its_way_waits_for_it(stack, api, session):
    """The placement's own message has not come (lost, or the worker is busy): the turn places the
    file itself before it asks the model, and says so on the page."""
    data_file = DataFile(
        session=session, name="sales.csv", path="data/sales.csv", size=len(made_files.SALES_CSV)
    )
    data_file.stored.save("sales.csv", ContentFile(made_files.SALES_CSV))  # placing, never sent
    system = ask(stack, api, session)
    assert "data/sales.csv" in system and "unit_price (float64" in system
    types = [e.type for e in session.events.order_by("seq")]
    assert types.index("files_waiting") < types.index("file_added") < types.index("assistant_message")
    waiting = session.events.get(type="files_waiting").payload
    assert waiting == {"files": [{"id": data_file.id, "name": "sales.csv", "path": "data/sales.csv"}]}


def test_a_question_right_after_an_upload_is_answered_knowing_the_file(stack, api, session):
    assert upload(api, session, "sales.csv", made_files.SALES_CSV).status_code == 202
    system = ask(stack, api, session)  # sent at once: the file's placement may not have started
    assert "data/sales.csv" in system and "unit_price (float64" in system
