"""The sessions page's search box: the owner's sessions whose title or file names hold every word
searched (case aside), never anyone else's; a search that finds nothing says so and offers the
whole list back."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model
from django.core.files.base import ContentFile

from analyst.models import AnalysisSession, DataFile

pytestmark = pytest.mark.django_db


def listed(response) -> list[str]:
    rows = re.findall(r'<tr data-testid="session-row">\s*<td><a [^>]*>([^<]*)</a>', response.content.decode())
    return sorted(rows)


@pytest.fixture
def sessions(alice):
    made = {}
    for title in ("US airports: delays by month", "Airline fares", "Untitled analysis"):
        made[title] = AnalysisSession.objects.create(owner=alice, model="anthropic/claude-test", title=title)
    upload = DataFile(session=made["Untitled analysis"], name="flights_2023.csv", path="data/f.csv", size=4)
    upload.stored.save("f.csv", ContentFile(b"a,b\n"), save=False)
    upload.save()
    mallory = get_user_model().objects.create_user("mallory", password="a-long-passphrase")
    AnalysisSession.objects.create(owner=mallory, model="anthropic/claude-test", title="Airports, secretly")
    return made


def test_every_word_must_match_a_title_or_a_file_name(browser, sessions):
    assert listed(browser.get("/sessions/", {"q": "airports"})) == ["US airports: delays by month"]
    assert listed(browser.get("/sessions/", {"q": "AIR"})) == [
        "Airline fares",
        "US airports: delays by month",
    ]
    assert listed(browser.get("/sessions/", {"q": "air month"})) == ["US airports: delays by month"]
    assert listed(browser.get("/sessions/", {"q": "flights"})) == ["Untitled analysis"]


def test_no_search_lists_them_all(browser, sessions):
    page = browser.get("/sessions/")
    assert len(listed(page)) == 3
    assert 'data-testid="session-search-input"' in page.content.decode()


def test_a_search_that_finds_nothing_says_so(browser, sessions):
    page = browser.get("/sessions/", {"q": "<b>secretly</b>"}).content.decode()
    assert "No session’s title or file names hold “&lt;b&gt;secretly&lt;/b&gt;”" in page
    assert 'data-testid="session-search-clear"' in page and "<b>secretly" not in page
