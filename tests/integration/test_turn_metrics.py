"""A real turn in the real worker moves the series /metrics shows: its latency by outcome, its
cell's latency, the provider's retries and errors (workers count in Redis; the web side reads)."""

from prometheus_client.parser import text_string_to_metric_families

from analyst.ops import metrics
from tests.fakes.model_server import anthropic_error, anthropic_text, anthropic_tool_call
from tests.integration.conftest import wait_for


def scrape() -> dict[tuple[str, tuple], float]:
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(metrics.exposition().decode())
        for sample in family.samples
    }


def grew(before: dict, after: dict, name: str, **labels: str) -> float:
    key = (name, tuple(sorted(labels.items())))
    return after.get(key, 0) - before.get(key, 0)


def test_a_turn_with_a_retry_and_a_cell_is_measured(stack, api, session):
    before = scrape()
    stack.script(
        anthropic_error(529, "overloaded_error", "Overloaded"),
        anthropic_tool_call("run_python", {"code": "1 + 1"}),
        anthropic_text("Two."),
    )
    api.post(f"/api/sessions/{session.id}/messages", {"content": "Add"}, "application/json")
    assert wait_for(session)[-1]["type"] == "turn_done"
    after = scrape()
    assert grew(before, after, "analyst_turn_seconds_count", outcome="done") == 1
    assert grew(before, after, "analyst_cell_seconds_count") == 1
    assert grew(before, after, "analyst_provider_retries_total") == 1


def test_a_provider_error_is_counted_by_its_code(stack, api, alice):
    from analyst.models import AnalysisSession

    session = AnalysisSession.objects.create(owner=alice, model="anthropic/claude-test")
    before = scrape()
    stack.script(anthropic_error(401, "authentication_error", "invalid x-api-key"))
    api.post(f"/api/sessions/{session.id}/messages", {"content": "Hi"}, "application/json")
    assert wait_for(session)[-1]["type"] == "turn_failed"
    after = scrape()
    assert grew(before, after, "analyst_provider_errors_total", code="authentication_failed") == 1
    assert grew(before, after, "analyst_turn_seconds_count", outcome="failed") == 1
