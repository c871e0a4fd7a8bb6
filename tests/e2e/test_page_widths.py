"""Every page, in every state a user meets, fits a 1280 px desktop and a 390 px phone: nothing
scrolls sideways, the session's title keeps its words while a turn runs, the header's controls
go into a menu when there is no room, the sidebar stays in view while the transcript scrolls,
Send is off while a turn runs, and every page names the app's favicon."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.test import Client

from analyst.models import AnalysisSession, DataFile, Event, ShareLink, Turn
from tests.integration.conftest import database_url
from tests.web_process import web_server

DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
TITLE = "Quarterly revenue by region and product line"
UNBROKEN = "sales_2024_all_regions_export_final_version_three_checked.csv"


@pytest.fixture(scope="module")
def pages_web(django_db_setup: None) -> Iterator[str]:
    """A web server of this module's own (no worker: these sessions are written, not run)."""
    with web_without_worker("e2e-page-widths") as url:
        yield url


@contextlib.contextmanager
def web_without_worker(name: str) -> Iterator[str]:
    """The web server alone, offering two models (no worker: the sessions shown are written)."""
    env = {
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "SECRET_KEY": settings.SECRET_KEY,  # the login cookie the test makes must hold there
        "DATABASE_URL": database_url(),
        "REDIS_URL": settings.REDIS_URL,
        "ANALYST_MODELS": "anthropic/claude-sonnet-4-5,openai/gpt-4.1",
        "ANTHROPIC_API_KEY": "unused",
        "OPENAI_API_KEY": "unused",
    }
    with web_server(env, name=name) as url:
        yield url


@dataclass
class World:
    """alice's sessions in each state, and a share link to the long one."""

    user: Any
    empty: AnalysisSession
    running: AnalysisSession
    long: AnalysisSession
    share: ShareLink


@pytest.fixture
def world(transactional_db: None, pages_web: str) -> World:
    user = get_user_model().objects.create_user("alice_with_a_rather_long_username")
    for n in range(12):
        listed = AnalysisSession.objects.create(
            owner=user, model="anthropic/claude-sonnet-4-5", title=f"{TITLE}, take {n}"
        )
        DataFile.objects.create(
            session=listed, name=UNBROKEN, path=f"data/{UNBROKEN}", size=10, stored="x.csv"
        )
    empty = AnalysisSession.objects.create(owner=user, model="anthropic/claude-sonnet-4-5", title="Empty")
    running = AnalysisSession.objects.create(owner=user, model="anthropic/claude-sonnet-4-5", title=TITLE)
    done = Turn.objects.create(
        session=running, requested_by=user, kind=Turn.Kind.CHAT, input="?", status="done"
    )
    turn = Turn.objects.create(
        session=running, requested_by=user, kind=Turn.Kind.CHAT, input="?", status=Turn.Status.RUNNING
    )
    tool = {"tool_call_id": "toolu_1"}
    spent = {"calls": 3, "input_tokens": 123_456, "output_tokens": 7_890, "cost_usd": 1.2345}
    write(
        running,
        [
            ("user_message", {"text": "Load the data"}, done),
            ("turn_started", {"kind": "chat"}, done),
            ("assistant_message", {"text": "Loaded."}, done),
            ("turn_done", {"usage": spent}, done),
            ("user_message", {"text": "Which region sells most?"}, turn),
            ("turn_started", {"kind": "chat"}, turn),
            (
                "tool_call",
                {"id": "toolu_1", "name": "run_python", "code": "df.groupby('region').sum()"},
                turn,
            ),
            ("stdout", {"text": "crunching\n", **tool}, turn),
        ],
    )
    long = AnalysisSession.objects.create(owner=user, model="openai/gpt-4.1", title=f"{TITLE} ({UNBROKEN})")
    write(long, long_log(user, long))
    share = ShareLink.objects.create(session=long)
    return World(user, empty, running, long, share)


def write(session: AnalysisSession, written: list[tuple[str, dict[str, Any], Turn | None]]) -> None:
    Event.objects.bulk_create(
        [
            Event(session=session, seq=n, type=kind, payload=payload, turn=turn)
            for n, (kind, payload, turn) in enumerate(written, 1)
        ]
    )
    AnalysisSession.objects.filter(id=session.id).update(next_seq=len(written) + 1)


def long_log(user: Any, session: AnalysisSession) -> list[tuple[str, dict[str, Any], Turn | None]]:
    """Ten finished turns, each a wide table, a long line of code and a long printout."""
    written: list[tuple[str, dict[str, Any], Turn | None]] = []
    columns = [f"column_number_{n}" for n in range(30)]
    html = "<table><thead><tr>{}</tr></thead><tbody>{}</tbody></table>".format(
        "".join(f"<th>{c}</th>" for c in columns),
        "".join("<tr>" + "".join(f"<td>{r * c}</td>" for c in range(30)) + "</tr>" for r in range(5)),
    )
    for n in range(10):
        turn = Turn.objects.create(
            session=session, requested_by=user, kind=Turn.Kind.CHAT, input="?", status="done"
        )
        tool = {"tool_call_id": f"toolu_{n}"}
        code = (
            f"frame = pd.read_csv('data/{UNBROKEN}')  # " + "a long comment " * 20 + f"\nframe.info()  # {n}"
        )
        written += [
            ("user_message", {"text": f"Describe {UNBROKEN}, question {n}"}, turn),
            ("turn_started", {"kind": "chat"}, turn),
            ("tool_call", {"id": f"toolu_{n}", "name": "run_python", "code": code}, turn),
            ("stdout", {"text": "".join(f"{c:<40} 1000 non-null int64\n" for c in columns), **tool}, turn),
            ("result", {"data": {"text/html": html, "text/plain": "a table"}, **tool}, turn),
            ("cell_done", {"failed": False, **tool}, turn),
            ("assistant_message", {"text": f"The file {UNBROKEN} has 30 columns. " * 5}, turn),
            ("turn_done", {"usage": {"calls": 1, "input_tokens": 10, "output_tokens": 5}}, turn),
        ]
    return written


def logged_in(browser: Any, web: str, user: Any, viewport: dict[str, int]) -> Any:
    client = Client()
    client.force_login(user)
    context = browser.new_context(viewport=viewport)
    context.add_cookies([{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": web}])
    return context


def wide(page: Any) -> int:
    """How far the page scrolls sideways (0: not at all)."""
    return page.evaluate("document.documentElement.scrollWidth - innerWidth")


def past_the_edge(page: Any) -> list[str]:
    """The outermost elements reaching past the window's right edge (outside boxes that scroll):
    what may widen a page, for the failure's message."""
    return page.evaluate(
        """() => [...document.body.querySelectorAll('*')]
          .filter(e => e.getBoundingClientRect().right > innerWidth + 0.5)
          .filter(e => e.parentElement.getBoundingClientRect().right <= innerWidth + 0.5)
          .filter(e => !e.parentElement.closest('pre, .table-output, .tabulator'))
          .slice(0, 5).map(e => `${e.tagName.toLowerCase()}.${e.className}`)"""
    )


def visited(page: Any, url: str, ready: str) -> Any:
    from playwright.sync_api import expect

    page.goto(url)
    expect(page.locator(ready).first).to_be_visible()
    page.wait_for_timeout(200)  # the grids, fonts and fonts' reflow settle
    return page


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_no_page_scrolls_sideways(world, pages_web, browser, viewport, shoot):
    strangers = browser.new_context(viewport=viewport)
    context = logged_in(browser, pages_web, world.user, viewport)
    try:
        page = strangers.new_page()
        states = {
            "sign-in": visited(page, f"{pages_web}/accounts/login/", "[data-testid=login-form]"),
        }
        too_wide = {}

        def check(name: str, page: Any) -> None:
            shoot(page, f"{viewport['width']}-{name}")
            if wide(page) > 0:
                too_wide[name] = (wide(page), past_the_edge(page))

        check("sign-in", states["sign-in"])
        check("sign-up", visited(page, f"{pages_web}/accounts/signup/", "[data-testid=signup-form]"))
        check(
            "share-anonymous", visited(page, f"{pages_web}/s/{world.share.token}/", "[data-testid=code-cell]")
        )
        page = context.new_page()
        check("sessions", visited(page, f"{pages_web}/sessions/", "[data-testid=session-list]"))
        check(
            "empty-session",
            visited(page, f"{pages_web}/sessions/{world.empty.id}/", "[data-testid=composer-input]"),
        )
        check(
            "running-turn",
            visited(page, f"{pages_web}/sessions/{world.running.id}/", "[data-testid=code-cell]"),
        )
        check(
            "long-output", visited(page, f"{pages_web}/sessions/{world.long.id}/", "[data-testid=code-cell]")
        )
        page.get_by_test_id("cell-toggle").last.click()  # the model's code shown
        check("long-output-code-shown", page)
        check(
            "instructions",
            visited(page, f"{pages_web}/settings/instructions/", "[data-testid=instructions-form]"),
        )
        visited(page, f"{pages_web}/settings/tokens/", "[data-testid=token-create-form]")
        page.get_by_test_id("token-create-name").fill("nightly report script")
        page.get_by_test_id("token-create").click()
        page.get_by_test_id("token-secret").wait_for()
        check("api-tokens", page)
        check("share-owner", visited(page, f"{pages_web}/s/{world.share.token}/", "[data-testid=code-cell]"))
        assert too_wide == {}, f"pages that scroll sideways at {viewport['width']} px (by px): {too_wide}"
    finally:
        context.close()
        strangers.close()


def test_the_header_keeps_the_title_while_a_turn_runs_and_send_is_off(world, pages_web, browser):
    from playwright.sync_api import expect

    context = logged_in(browser, pages_web, world.user, DESKTOP)
    page = visited(context.new_page(), f"{pages_web}/sessions/{world.running.id}/", "[data-testid=code-cell]")
    expect(page.get_by_test_id("kernel-interrupt")).to_be_visible()  # the turn runs
    expect(page.get_by_test_id("session-usage")).not_to_be_empty()
    title = page.locator(".session-title")
    assert title.bounding_box()["width"] >= 200, "the title is squeezed"
    expect(page.get_by_test_id("send")).to_be_disabled()
    context.close()


def test_on_a_phone_the_header_controls_are_in_a_menu(world, pages_web, browser):
    from playwright.sync_api import expect

    context = logged_in(browser, pages_web, world.user, PHONE)
    page = visited(context.new_page(), f"{pages_web}/sessions/{world.long.id}/", "[data-testid=code-cell]")
    restart = page.get_by_test_id("kernel-restart")
    expect(restart).to_be_hidden()
    menu = page.get_by_test_id("header-menu")
    expect(menu).to_be_visible()
    assert on_screen(menu)
    menu.click()
    for control in ("kernel-restart", "kernel-run-all", "variables-toggle", "files-toggle"):
        expect(page.get_by_test_id(control)).to_be_visible()
        assert on_screen(page.get_by_test_id(control)), control
    title = page.locator(".session-title")
    assert title.bounding_box()["width"] > 150, "the title keeps room beside the menu"
    page.get_by_test_id("files-toggle").click()  # a drawer opened from the menu closes it
    expect(restart).to_be_hidden()
    expect(page.get_by_test_id("files-panel")).to_be_in_viewport()
    context.close()


def test_on_a_phone_the_sessions_page_and_cells_fit(world, pages_web, browser):
    context = logged_in(browser, pages_web, world.user, PHONE)
    page = visited(context.new_page(), f"{pages_web}/sessions/", "[data-testid=session-list]")
    assert on_screen(page.get_by_test_id("new-session"))
    assert shows_whole(page.get_by_test_id("new-session-model")), "the model is cut"
    page = visited(page, f"{pages_web}/sessions/{world.long.id}/", "[data-testid=code-cell]")
    wrapped = page.evaluate(
        """[...document.querySelectorAll('.cell-header > *')].filter(e => e.offsetParent)
           .filter(e => e.getClientRects().length > 1 || e.getBoundingClientRect().height > 30)
           .map(e => e.className)"""
    )
    assert wrapped == [], "cell header parts wrapped word by word"
    assert shows_whole(page.get_by_test_id("model-picker")), "the model picker is cut"
    context.close()


def test_the_sidebar_stays_in_view_while_the_transcript_scrolls(world, pages_web, browser):
    from playwright.sync_api import expect

    context = logged_in(browser, pages_web, world.user, DESKTOP)
    page = visited(context.new_page(), f"{pages_web}/sessions/{world.long.id}/", "[data-testid=code-cell]")
    page.evaluate("() => document.scrollingElement.scrollTo({top: document.scrollingElement.scrollHeight})")
    page.wait_for_timeout(200)
    expect(page.get_by_test_id("session-nav")).to_be_in_viewport()
    context.close()


def test_every_page_names_the_favicon(world, pages_web, browser):
    context = logged_in(browser, pages_web, world.user, DESKTOP)
    page = context.new_page()
    for path in (
        "/accounts/login/",
        "/sessions/",
        f"/sessions/{world.empty.id}/",
        f"/s/{world.share.token}/",
    ):
        page.goto(f"{pages_web}{path}")
        href = page.locator("link[rel=icon]").get_attribute("href")
        icon = httpx.get(f"{pages_web}{href}")
        assert icon.status_code == 200 and icon.headers["content-type"].startswith("image/svg+xml"), path
        assert b"<svg" in icon.content
    context.close()


def on_screen(locator: Any) -> bool:
    box = locator.bounding_box()
    page = locator.page.viewport_size
    return box is not None and box["x"] >= 0 and box["x"] + box["width"] <= page["width"]


def shows_whole(select: Any) -> bool:
    """Whether a <select> is wide enough for its chosen option's text (and its arrow)."""
    return select.evaluate(
        """e => {
          const probe = document.createElement('span');
          probe.style.font = getComputedStyle(e).font;
          probe.style.position = 'absolute';
          probe.textContent = e.selectedOptions[0].text;
          document.body.append(probe);
          const needed = probe.getBoundingClientRect().width;
          probe.remove();
          return e.clientWidth >= needed + 24;
        }"""
    )
