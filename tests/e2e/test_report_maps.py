"""A plotly map in the HTML report opened from disk: plotly.js fetches a map's outlines from the
app's static files as it draws, which a file under the report's policy may not do, so the map drew
blank (and the policy refused the fetch). The report now holds the outlines its maps need."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model

from analyst.models import AnalysisSession, Event
from analyst.sessions import exports
from tests.e2e.test_report import opened

MAP = {
    "data": [{"type": "scattergeo", "lon": [-149.9, -104.99], "lat": [61.2, 39.74], "mode": "markers"}],
    "layout": {"geo": {"scope": "usa", "showland": True}, "title": {"text": "Airports"}},
}


@pytest.fixture
def session(transactional_db: None) -> Any:
    owner = get_user_model().objects.create_user("alice")
    session = AnalysisSession.objects.create(owner=owner, model="anthropic/claude-test", title="Maps")
    logged = [
        ("user_message", {"text": "Where are the airports?"}),
        ("turn_started", {"kind": "chat"}),
        ("tool_call", {"id": "toolu_1", "code": "px.scatter_geo(airports, scope='usa').show()"}),
        ("result", {"data": {"application/vnd.plotly.v1+json": MAP, "text/plain": "Figure"}}),
        ("assistant_message", {"text": "Anchorage and Denver."}),
        ("turn_done", {"usage": {}}),
    ]
    rows = [Event(session=session, seq=n, type=kind, payload=p) for n, (kind, p) in enumerate(logged, 1)]
    Event.objects.bulk_create(rows)
    AnalysisSession.objects.filter(id=session.id).update(next_seq=len(logged) + 1)
    return session


def test_a_map_in_the_report_is_drawn_on_its_outlines(browser, session, tmp_path):
    from playwright.sync_api import expect

    report = tmp_path / "report.html"
    report.write_bytes(exports.export(session, "html").content)
    page, refused = opened(browser, report.as_uri())
    try:
        expect(page.locator(".figure .main-svg").first).to_be_visible(timeout=30_000)
        expect(page.locator(".figure .layer.land path")).not_to_have_count(0, timeout=30_000)
        assert refused == []
    finally:
        page.close()
