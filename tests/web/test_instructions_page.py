"""The instructions page: a person reads and saves the instructions every session of theirs gives
the model; a bad text is refused with the reason and kept in the box; the menu links to it."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from analyst.models import SavedInstructions
from analyst.trust.instructions import MAX_LENGTH

pytestmark = pytest.mark.django_db

PAGE = "/settings/instructions/"


def test_saving_shows_them_again(browser, alice):
    page = browser.get(PAGE)
    assert page.status_code == 200
    assert 'data-testid="instructions-link"' in page.content.decode()  # the menu has it
    saved = browser.post(PAGE, {"text": "Fiscal year starts in April.\r\nUse EUR."}, follow=True)
    assert saved.redirect_chain == [(PAGE, 302)]
    assert SavedInstructions.objects.get(user=alice).text == "Fiscal year starts in April.\nUse EUR."
    html = saved.content.decode()
    assert "Fiscal year starts in April.\nUse EUR.</textarea>" in html
    assert "from their next question" in html
    assert 'data-testid="instructions-saved"' in html


def test_too_long_is_refused_and_kept_in_the_box(browser, alice):
    SavedInstructions.objects.create(user=alice, text="Use EUR.")
    refused = browser.post(PAGE, {"text": "x" * (MAX_LENGTH + 1)})
    assert refused.status_code == 400
    html = refused.content.decode()
    assert f"are {MAX_LENGTH + 1:,} characters long; at most {MAX_LENGTH:,} are allowed" in html
    assert "x" * (MAX_LENGTH + 1) + "</textarea>" in html
    assert SavedInstructions.objects.get(user=alice).text == "Use EUR."


def test_each_person_sees_their_own(browser, alice):
    mallory = get_user_model().objects.create_user("mallory", password="a-long-passphrase")
    SavedInstructions.objects.create(user=mallory, text="Mallory's secret rule")
    assert "Mallory's secret rule" not in browser.get(PAGE).content.decode()


def test_text_is_escaped(browser, alice):
    browser.post(PAGE, {"text": "</textarea><script>alert(1)</script>"})
    html = browser.get(PAGE).content.decode()
    assert "<script>alert(1)" not in html
    assert "&lt;/textarea&gt;&lt;script&gt;" in html


def test_a_stranger_is_sent_to_log_in():
    response = Client().get(PAGE)
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")
