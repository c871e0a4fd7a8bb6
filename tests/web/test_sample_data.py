"""A new user can try the analyst without a file of their own: the sessions page offers a sample
data set, which starts a session holding it, its question ready in the composer."""

from __future__ import annotations

import pytest
from django.test import Client

from analyst.models import AnalysisSession, DataFile
from analyst.sessions import samples
from tests.api.test_upload_on_a_full_disk import fill
from tests.small_tmpfs import small_tmpfs
from tests.web.test_pages import app_attributes

pytestmark = pytest.mark.django_db


def test_a_new_users_sessions_page_offers_the_sample(browser):
    page = browser.get("/sessions/").content.decode()
    assert 'data-testid="try-sample"' in page and 'value="us-macro"' in page
    assert "US economy, 1959–2009" in page and "sample-first" in page


def test_trying_the_sample_starts_a_session_holding_its_file(browser, alice, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    response = browser.post("/sessions/sample", {"sample": "us-macro"})
    session = AnalysisSession.objects.get(owner=alice)
    assert response.status_code == 302
    assert response["Location"] == f"/sessions/{session.id}/?try=us-macro"
    assert session.title == "US economy, 1959–2009 (sample)"
    data_file = DataFile.objects.get(session=session)
    assert (
        data_file.path == "data/us_macro_quarterly.csv" and data_file.placement == DataFile.Placement.PLACING
    )
    with data_file.stored.open("rb") as stored:
        assert stored.read() == samples.US_MACRO.read()
    assert samples.US_MACRO.read().startswith(b'"year","quarter","realgdp"')

    page = app_attributes(browser.get(response["Location"]).content.decode())
    assert page["suggestion"] == samples.US_MACRO.question


def test_the_question_is_offered_only_before_the_first_turn(browser, alice, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    location = browser.post("/sessions/sample", {"sample": "us-macro"})["Location"]
    session = AnalysisSession.objects.get(owner=alice)
    session.turns.create(requested_by=alice, kind="chat", input="Something else")
    assert "suggestion" not in app_attributes(browser.get(location).content.decode())


def test_the_sidebar_lists_my_sessions_not_anyone_elses(browser, alice, django_user_model):
    mine = AnalysisSession.objects.create(owner=alice, model="anthropic/claude-test", title="Mine")
    other = AnalysisSession.objects.create(owner=alice, model="anthropic/claude-test", title="Also mine")
    bob = django_user_model.objects.create_user("bob", password="a-long-passphrase")
    AnalysisSession.objects.create(owner=bob, model="anthropic/claude-test", title="Bob's secret")
    page = browser.get(f"/sessions/{mine.id}/").content.decode()
    assert f'href="/sessions/{mine.id}/" title="Mine" aria-current="page">Mine<' in page
    assert f'href="/sessions/{other.id}/" title="Also mine">Also mine<' in page
    assert "Bob&#x27;s secret" not in page and "Bob's secret" not in page


def test_an_unknown_sample_or_a_get_creates_nothing(browser, alice):
    assert browser.post("/sessions/sample", {"sample": "nope"})["Location"] == "/sessions/"
    assert browser.get("/sessions/sample").status_code == 405
    assert (
        Client().post("/sessions/sample", {"sample": "us-macro"})["Location"].startswith("/accounts/login/")
    )
    assert not AnalysisSession.objects.exists()


def test_a_full_disk_leaves_no_empty_session_behind(browser, alice, settings):
    with small_tmpfs() as folder:
        settings.MEDIA_ROOT = folder
        fill(folder, leave=1024)  # the sample is 17 KiB
        response = browser.post("/sessions/sample", {"sample": "us-macro"}, follow=True)
    assert "storage is full" in response.content.decode()
    assert not AnalysisSession.objects.filter(owner=alice).exists()
