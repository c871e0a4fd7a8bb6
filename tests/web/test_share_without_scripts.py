"""A share page read without scripts: it says the page is drawn by scripts and links a static
copy, the session as its HTML report (tables as HTML, charts as images), served under a policy of
its own that lets nothing in it run or load but the scripts of plotly figures, by their hashes; a
revoked link's copy is gone with it."""

from __future__ import annotations

import pytest
from django.test import Client
from django.utils import timezone

from analyst.models import ShareLink
from analyst.realtime import events

pytestmark = pytest.mark.django_db

TABLE = '<table class="dataframe"><tr><th>region</th></tr><tr><td>north</td></tr></table>'


@pytest.fixture
def link(session):
    events.append(session.id, "cell", {"code": "df"})
    events.append(session.id, "result", {"data": {"text/html": TABLE, "text/plain": "  region\n0 north"}})
    events.append(session.id, "assistant_message", {"text": "One region."})
    return ShareLink.objects.create(session=session)


def test_the_share_page_links_a_static_copy_for_readers_without_scripts(link):
    page = Client().get(f"/s/{link.token}/").content.decode()
    assert '<noscript><p class="noscript-note" data-testid="static-link">' in page
    assert f'href="/s/{link.token}/static"' in page


def test_the_static_copy_is_the_report_its_tables_html_and_nothing_runs(link):
    response = Client().get(f"/s/{link.token}/static")
    assert response.status_code == 200 and response["Content-Type"].startswith("text/html")
    policy = response["Content-Security-Policy"]
    assert policy.startswith(
        "sandbox allow-scripts; default-src 'none'; img-src data:; style-src 'unsafe-inline';"
        " base-uri 'none'; form-action 'none'; script-src 'sha256-"
    )  # its own origin; no script but a plotly figure's own (tests/e2e/test_report.py), and here none
    assert response["X-Content-Type-Options"] == "nosniff"
    assert "Content-Disposition" not in response  # read in place, not downloaded
    page = response.content.decode()
    assert "<td>north</td>" in page and "One region." in page and "<script" not in page


def test_a_revoked_links_static_copy_is_gone(link):
    link.revoked_at = timezone.now()
    link.save()
    assert Client().get(f"/s/{link.token}/static").status_code == 404
