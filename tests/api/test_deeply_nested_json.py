"""A JSON body nested past any use is a 400 invalid_json, however deep: 100,000 levels made the
parser raise RecursionError (an HTML 500)."""

from __future__ import annotations

import pytest

from analyst.models import AnalysisSession

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    "body",
    [
        "[" * 100_000 + "]" * 100_000,
        '{"title": ' + "[" * 100_000 + "]" * 100_000 + "}",
        '{"title": ' + '{"a": ' * 40 + "1" + "}" * 40 + "}",  # parses, but deeper than the cap
    ],
    ids=["array", "in-an-object", "over-the-cap"],
)
def test_a_deeply_nested_body_is_a_json_400(api, body):
    response = api.post("/api/sessions", body, content_type="application/json")
    assert response.status_code == 400 and response["Content-Type"] == "application/json"
    error = response.json()["error"]
    assert error["code"] == "invalid_json" and "nests deeper than" in error["message"]
    assert not AnalysisSession.objects.exists()


def test_a_body_within_the_cap_still_works(api, session):
    response = api.patch(f"/api/sessions/{session.id}", {"title": "Sales"}, content_type="application/json")
    assert response.status_code == 200 and response.json()["title"] == "Sales"
    refused = api.post("/api/sessions", "[1, 2]", content_type="application/json")
    assert refused.json()["error"]["message"] == "the request body must be a JSON object"
