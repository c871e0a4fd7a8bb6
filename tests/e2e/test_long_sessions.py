"""A long session opens at its end with only the turns near it built, and each earlier turn is
there when the reader scrolls to it (or follows a link to one of its cells); a huge output
comes to the page folded by the server, and "Show all" and its copy button bring the rest, for
the owner and for a share link's viewer."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.test import Client

from analyst.models import AnalysisSession, Event, ShareLink, Turn
from tests.e2e.test_reading_a_session import pasted
from tests.integration.conftest import database_url
from tests.web_process import web_server

TURNS = 120
HUGE_LINES = 20_000


@pytest.fixture(scope="module")
def reading_web(django_db_setup: None) -> Iterator[str]:
    """A web server of this module's own (no worker: these sessions are written, not run)."""
    env = {
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "SECRET_KEY": settings.SECRET_KEY,  # the login cookie the test makes must hold there
        "DATABASE_URL": database_url(),
        "REDIS_URL": settings.REDIS_URL,
    }
    with web_server(env, name="e2e-long-sessions") as url:
        yield url


@pytest.fixture
def owner(transactional_db: None, reading_web: str, browser: Any) -> Iterator[tuple[Any, Any]]:
    """(the owner, a browser context logged in as them)."""
    user = get_user_model().objects.create_user("alice")
    client = Client()
    client.force_login(user)
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.add_cookies(
        [{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": reading_web}]
    )
    yield user, context
    context.close()


def logged(user: Any, written: list[tuple[str, dict[str, Any]]]) -> AnalysisSession:
    """A session whose log is ``written``, stored as a worker stores it."""
    session = AnalysisSession.objects.create(owner=user, model="anthropic/claude-test")
    Event.objects.bulk_create(
        [
            Event(session=session, seq=n, type=kind, payload=payload)
            for n, (kind, payload) in enumerate(written, 1)
        ],
        batch_size=500,
    )
    AnalysisSession.objects.filter(id=session.id).update(next_seq=len(written) + 1)
    return session


def turn(n: int) -> list[tuple[str, dict[str, Any]]]:
    tool = {"tool_call_id": f"toolu_{n}"}
    return [
        ("user_message", {"text": f"Question {n}: which region sells most?"}),
        ("turn_started", {"kind": "chat"}),
        (
            "tool_call",
            {"id": f"toolu_{n}", "name": "run_python", "code": f"df.groupby('region').sum()  # {n}"},
        ),
        ("stdout", {"text": f"rows: {n}\n", **tool}),
        ("cell_done", {"failed": False, **tool}),
        ("assistant_message", {"text": f"South sells most at step {n}: **{n + 1}**."}),
        ("turn_done", {"usage": {"calls": 1, "input_tokens": 10, "output_tokens": 5}}),
    ]


def edited_cell(seq: int) -> list[tuple[str, dict[str, Any]]]:
    """The user's turn running an edited copy of the cell of ``seq``."""
    return [
        ("cell", {"code": "df.groupby('region').sum()  # edited", "edited_from": seq}),
        ("turn_started", {"kind": "cell"}),
        ("cell_done", {"failed": False}),
        ("turn_done", {"usage": {}}),
    ]


def test_a_long_session_builds_its_turns_as_the_reader_scrolls_to_them(reading_web, owner, shoot):
    from playwright.sync_api import expect

    user, context = owner
    written = [event for n in range(TURNS) for event in turn(n)]
    written += edited_cell(3)  # turn 0's tool_call
    session = logged(user, written)
    page = context.new_page()
    page.goto(f"{reading_web}/sessions/{session.id}/")
    questions = page.get_by_test_id("user-message")
    answers = page.get_by_test_id("assistant-message")
    expect(answers.last).to_contain_text(f"South sells most at step {TURNS - 1}: {TURNS}.")
    expect(answers.last).to_be_in_viewport()
    built = questions.count()
    assert 0 < built < TURNS / 2  # the turns near the end, not all of them
    height = "() => document.scrollingElement.scrollHeight"
    estimated = page.evaluate(height)  # the turns not built yet held by placeholders of about their height

    # Scrolled to the top: the first question is there; the turns passed on the way stay built.
    page.evaluate("() => document.scrollingElement.scrollTo({top: 0})")
    expect(questions.first.get_by_test_id("question-text")).to_have_text(
        "Question 0: which region sells most?"
    )
    expect(questions.first).to_be_in_viewport()
    shoot(page, "top")
    assert built < questions.count()
    for _ in range(60):  # down again, a screen at a time, as a reader would
        page.mouse.wheel(0, 900)
        page.wait_for_timeout(30)
    page.evaluate("() => document.scrollingElement.scrollTo({top: document.scrollingElement.scrollHeight})")
    expect(questions).to_have_count(TURNS)
    texts = page.get_by_test_id("question-text").all_inner_texts()  # not the comment controls beside each
    assert texts == [f"Question {n}: which region sells most?" for n in range(TURNS)]  # in order
    expect(page.get_by_test_id("code-cell")).to_have_count(TURNS + 1)
    assert 0.7 < estimated / page.evaluate(height) < 1.4  # the scrollbar was about right


def test_a_link_to_a_cell_not_built_yet_builds_its_turn(reading_web, owner):
    from playwright.sync_api import expect

    user, context = owner
    written = [event for n in range(TURNS) for event in turn(n)]
    written += edited_cell(3)  # turn 0's tool_call
    session = logged(user, written)
    page = context.new_page()
    page.goto(f"{reading_web}/sessions/{session.id}/")
    expect(page.locator("#cell-3")).to_have_count(0)  # turn 0: far above, not built
    page.get_by_test_id("cell-edited").click()
    expect(page.locator("#cell-3")).to_be_in_viewport()
    expect(page.locator("#cell-3").get_by_test_id("cell-summary")).to_have_text(
        "df.groupby('region').sum()  # 0"
    )


def test_turns_built_out_of_order_keep_regenerate_last_and_an_answer_asked_again_folded(reading_web, owner):
    """Turns are built from the end backwards, then as the reader scrolls: Regenerate stays under
    the last answer, and an answer asked again far above is folded whenever it is built."""
    from playwright.sync_api import expect

    user, context = owner
    session = AnalysisSession.objects.create(owner=user, model="anthropic/claude-test")
    chats = [
        Turn.objects.create(session=session, requested_by=user, kind=Turn.Kind.CHAT, input="?", status="done")
        for _ in range(TURNS)
    ]
    again = Turn.objects.create(
        session=session,
        requested_by=user,
        kind=Turn.Kind.CHAT,
        input="?",
        status="done",
        regenerates=chats[2],
    )
    written = [(kind, payload, chats[n]) for n in range(TURNS) for kind, payload in turn(n)]
    for kind, payload in turn(2):
        asked = {**payload, "regenerates": chats[2].id} if kind == "user_message" else payload
        written.append((kind, asked, again))
    Event.objects.bulk_create(
        [
            Event(session=session, seq=n, type=kind, payload=payload, turn=t)
            for n, (kind, payload, t) in enumerate(written, 1)
        ]
    )
    AnalysisSession.objects.filter(id=session.id).update(next_seq=len(written) + 1)

    page = context.new_page()
    page.goto(f"{reading_web}/sessions/{session.id}/")
    regenerate = page.get_by_test_id("regenerate")
    expect(regenerate).to_have_count(1)
    assert regenerate.get_attribute("data-turn") == str(again.id)
    page.evaluate("() => document.scrollingElement.scrollTo({top: 0})")  # turn 2 is built now
    expect(page.get_by_test_id("user-message").first).to_contain_text("Question 0: which region sells most?")
    expect(page.get_by_test_id("superseded")).to_have_count(1)
    earlier = page.locator(f'[data-testid=assistant-message][data-turn="{chats[2].id}"]')
    expect(earlier).to_have_class(re.compile(r"\bsuperseded\b"))
    expect(earlier).to_be_hidden()
    expect(regenerate).to_have_count(1)
    assert regenerate.get_attribute("data-turn") == str(again.id)


def huge_cell(lines: int, per_event: int = 2_000) -> list[tuple[str, dict[str, Any]]]:
    written: list[tuple[str, dict[str, Any]]] = [
        ("cell", {"code": f"for i in range({lines}):\n    print('line', i)"})
    ]
    written.append(("turn_started", {"kind": "cell"}))
    for start in range(0, lines, per_event):
        written.append(
            ("stdout", {"text": "".join(f"line {i}\n" for i in range(start, min(start + per_event, lines)))})
        )
    return [*written, ("cell_done", {"failed": False}), ("turn_done", {"usage": {}})]


def test_a_huge_output_comes_folded_and_show_all_and_copy_bring_the_rest(reading_web, owner):
    from playwright.sync_api import expect

    user, context = owner
    context.grant_permissions(["clipboard-write"])
    session = logged(user, huge_cell(HUGE_LINES))
    page = context.new_page()
    asked = log_requests(page)
    with page.expect_response(lambda r: "/events?" in r.url and "fold=300" in r.url) as first:
        page.goto(f"{reading_web}/sessions/{session.id}/")
    assert len(first.value.body()) < 30_000  # not the 180 kB the lines take
    cell = page.get_by_test_id("code-cell")
    expect(cell.get_by_test_id("show-all")).to_have_text(f"Show all {HUGE_LINES:,} lines")
    assert asked == [first.value.url]  # the page's own read took the answer its head preloaded
    assert shown_lines(cell) == [f"line {i}" for i in range(300)]
    cell.get_by_test_id("copy-output").click()
    expect(cell.get_by_test_id("copy-output")).to_have_text("Copied")
    assert pasted(page) == "".join(f"line {i}\n" for i in range(HUGE_LINES))
    expect(cell.get_by_test_id("show-all")).to_have_count(1)  # copying kept the fold
    cell.get_by_test_id("show-all").click()
    expect(cell.get_by_test_id("show-all")).to_have_count(0)
    assert shown_lines(cell) == [f"line {i}" for i in range(HUGE_LINES)]


def test_a_share_viewer_gets_the_huge_output_folded_and_whole_on_request(reading_web, owner, browser):
    from playwright.sync_api import expect

    user, _ = owner
    written = huge_cell(HUGE_LINES, per_event=10)  # 2,000 events: more than a share viewer's page
    link = ShareLink.objects.create(session=logged(user, written))
    viewer = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        page = viewer.new_page()
        asked = log_requests(page)
        page.goto(f"{reading_web}/s/{link.token}/")
        cell = page.get_by_test_id("code-cell")
        expect(cell.get_by_test_id("show-all")).to_have_text(f"Show all {HUGE_LINES:,} lines")
        expect(cell.get_by_test_id("show-all")).to_be_enabled()
        assert [url.split("?")[1] for url in asked] == [
            "after=0&limit=5000&fold=300",  # preloaded, a page of 1,000 for a share viewer
            "after=1000&limit=5000&fold=300",
            "after=2000&limit=5000&fold=300",
        ]
        assert shown_lines(cell) == [f"line {i}" for i in range(300)]
        cell.get_by_test_id("show-all").click()
        expect(cell.get_by_test_id("show-all")).to_have_count(0)
        assert shown_lines(cell) == [f"line {i}" for i in range(HUGE_LINES)]
    finally:
        viewer.close()


def log_requests(page: Any) -> list[str]:
    """The URLs of the page's requests to the event log, as they are made."""
    asked: list[str] = []
    page.on("request", lambda request: "/events?" in request.url and asked.append(request.url))
    return asked


def shown_lines(cell: Any) -> list[str]:
    return cell.locator("pre.stream").evaluate("pre => pre.textContent.split('\\n').filter(Boolean)")
