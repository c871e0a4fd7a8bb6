"""The report and the exports mark each figure of an answer that no output holds, with a footnote
saying so, and show no [[cell N]] marker; an answer stored before figures were traced exports as
it was written, without its markers."""

from __future__ import annotations

import json

import nbformat

from analyst.models import Turn
from analyst.realtime import events
from analyst.sessions import exports
from analyst.trust import tracing

ANSWER = "Revenue was 1,234 [[cell 1]] and churn 17.5% [[cell 1]]."
MARKED = "Revenue was 1,234 and churn 17.5%†."
FOOTNOTE = "† Not found in any output of the session."


def answered(session, alice, text, *, traced=True):
    turn = Turn.objects.create(session=session, requested_by=alice, kind=Turn.Kind.CHAT, input="Revenue?")
    events.append(session.id, "user_message", {"text": "Revenue?"}, turn=turn)
    events.append(session.id, "tool_call", {"id": "toolu_01", "code": "print(1234.4)", "cell": 1}, turn=turn)
    printed = events.append(session.id, "stdout", {"text": "1234.4\n", "tool_call_id": "toolu_01"}, turn=turn)
    events.append(session.id, "stdout", {"text": "1234.4\n"}, turn=turn)  # a later output, of no cell
    payload = {"text": text, **({"citations": tracing.cite(session, text)} if traced else {})}
    events.append(session.id, "assistant_message", payload, turn=turn)
    return printed


def test_the_cited_cell_traces_the_figure_and_the_invented_one_is_not(session, alice):
    printed = answered(session, alice, ANSWER)
    stored = session.events.get(type="assistant_message").payload["citations"]
    assert stored == [
        {"text": "1,234", "seq": printed.seq, "verified": True},  # the cited cell's, not the newest
        {"text": "17.5%", "verified": False},
    ]


def test_the_notebook_marks_the_untraced_figure(session, alice):
    answered(session, alice, ANSWER)
    book = nbformat.reads(exports.export(session, "ipynb").content.decode(), as_version=4)
    [answer] = [
        cell.source for cell in book.cells if cell.cell_type == "markdown" and "Revenue was" in cell.source
    ]
    assert MARKED in answer
    assert answer.endswith(FOOTNOTE)
    assert "[[" not in json.dumps(book)


def test_the_report_marks_the_untraced_figure(session, alice):
    answered(session, alice, ANSWER)
    html = exports.export(session, "html").content.decode()
    assert MARKED in html
    assert FOOTNOTE in html
    assert "[[cell" not in html
    script = exports.export(session, "py").content.decode()
    assert MARKED in script and "[[cell" not in script


def test_an_answer_from_before_tracing_exports_as_written(session, alice):
    answered(session, alice, ANSWER, traced=False)
    html = exports.export(session, "html").content.decode()
    assert "Revenue was 1,234 and churn 17.5%." in html
    assert "†" not in html
