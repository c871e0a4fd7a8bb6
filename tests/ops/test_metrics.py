"""/metrics speaks Prometheus: turns by status, queue depth, turns queued too long, events stored,
sandboxd's sandboxes and pool, and what workers counted and timed in Redis; a source that does
not answer reads 0 in its *_up gauge instead of failing the scrape."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone
from prometheus_client.parser import text_string_to_metric_families

from analyst.lib.redis import redis_client
from analyst.models import AnalysisSession, Turn
from analyst.ops import metrics
from analyst.realtime import events
from sandboxes import Sandbox

pytestmark = pytest.mark.django_db


def scrape(client, **headers) -> dict[tuple[str, tuple], float]:
    response = client.get("/metrics", **headers)
    assert response.status_code == 200, response.content
    assert response["Content-Type"].startswith("text/plain; version=")
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(response.content.decode())
        for sample in family.samples
    }


@pytest.fixture
def session(db):
    user = get_user_model().objects.create_user("olga")
    return AnalysisSession.objects.create(owner=user, model="anthropic/claude-test")


def make_turns(session, status, n):
    for _ in range(n):
        Turn.objects.create(
            session=session, requested_by=session.owner, kind="chat", input="?", status=status
        )


def test_turns_by_status_queue_depth_and_events(client, session, redis_keys, with_sandboxd, settings):
    for status, n in (("queued", 3), ("running", 1), ("done", 4), ("failed", 2), ("cancelled", 1)):
        make_turns(session, status, n)
    settings.ANALYST_QUEUED_TOO_LONG = 60
    old = timezone.now() - timedelta(seconds=61)
    Turn.objects.filter(id__in=Turn.objects.filter(status="queued").values("id")[:2]).update(created_at=old)
    for text in ("one", "two", "three", "four", "five"):
        events.append(session.id, "user_message", {"text": text})
    settings.CELERY_TASK_DEFAULT_QUEUE = f"{redis_keys}:queue"
    redis = redis_client()
    redis.rpush(settings.CELERY_TASK_DEFAULT_QUEUE, "t1", "t2", "t3")
    redis.rpush(f"{settings.CELERY_TASK_DEFAULT_QUEUE}\x06\x163", "t4")  # a prioritised task

    got = scrape(client)
    for status, n in (("queued", 3), ("running", 1), ("done", 4), ("failed", 2), ("cancelled", 1)):
        assert got[("analyst_turns", (("status", status),))] == n
    assert got[("analyst_turns_queued_too_long", ())] == 2
    assert got[("analyst_events_stored", ())] == 5
    assert got[("analyst_queue_depth", ())] == 4
    assert got[("analyst_database_up", ())] == 1
    assert got[("analyst_redis_up", ())] == 1


def test_counted_errors_and_observed_latencies(client, db, redis_keys, with_sandboxd):
    metrics.count("provider_errors", code="rate_limited")
    metrics.count("provider_errors", code="rate_limited")
    metrics.count("provider_errors", code="overloaded")
    metrics.count("provider_retries", 3)
    metrics.count("reconciler_actions", action="requeued")
    metrics.observe("turn_seconds", 12.3, outcome="done")
    metrics.observe("turn_seconds", 0.5, outcome="done")
    metrics.observe("turn_seconds", 4000, outcome="failed")
    metrics.observe("cell_seconds", 0.4)

    got = scrape(client)
    assert got[("analyst_provider_errors_total", (("code", "rate_limited"),))] == 2
    assert got[("analyst_provider_errors_total", (("code", "overloaded"),))] == 1
    assert got[("analyst_provider_retries_total", ())] == 3
    assert got[("analyst_reconciler_actions_total", (("action", "requeued"),))] == 1
    done = (("outcome", "done"),)
    assert got[("analyst_turn_seconds_count", done)] == 2
    assert got[("analyst_turn_seconds_sum", done)] == pytest.approx(12.8)
    assert got[("analyst_turn_seconds_bucket", (("le", "1.0"), ("outcome", "done")))] == 1
    assert got[("analyst_turn_seconds_bucket", (("le", "10.0"), ("outcome", "done")))] == 1
    assert got[("analyst_turn_seconds_bucket", (("le", "20.0"), ("outcome", "done")))] == 2
    assert got[("analyst_turn_seconds_bucket", (("le", "+Inf"), ("outcome", "done")))] == 2
    failed = (("outcome", "failed"),)
    assert got[("analyst_turn_seconds_bucket", (("le", "900.0"), ("outcome", "failed")))] == 0
    assert got[("analyst_turn_seconds_count", failed)] == 1
    assert got[("analyst_cell_seconds_bucket", (("le", "0.25"),))] == 0
    assert got[("analyst_cell_seconds_bucket", (("le", "0.5"),))] == 1
    assert got[("analyst_cell_seconds_sum", ())] == pytest.approx(0.4)


def test_nothing_counted_yet_reads_zero(client, db, redis_keys, with_sandboxd):
    got = scrape(client)
    assert got[("analyst_provider_retries_total", ())] == 0
    assert got[("analyst_workers_alive", ())] == 0
    assert not any(name == "analyst_provider_errors_total" for name, _ in got)


def test_sandboxes_and_the_warm_pool(client, db, redis_keys, with_sandboxd, make_sandbox):
    make_sandbox()
    got = scrape(client)
    assert got[("analyst_sandboxd_up", ())] == 1
    live = Sandbox.list(url=with_sandboxd.url, token=with_sandboxd.token)
    assert got[("analyst_sandboxes", ())] == len(live) >= 1
    assert got[("analyst_sandbox_pool_size", ())] == 1  # SANDBOXD_POOL_SIZE in tests/conftest.py
    assert ("analyst_sandbox_pool_ready", (("template", "code-interpreter"),)) in got


def test_sandboxd_down_reads_zero_and_the_scrape_still_answers(client, db, redis_keys, settings, closed_url):
    settings.SANDBOXD_URL = f"http://{closed_url}"
    got = scrape(client)
    assert got[("analyst_sandboxd_up", ())] == 0
    assert ("analyst_sandboxes", ()) not in got
    assert got[("analyst_database_up", ())] == 1


def test_redis_down_reads_zero_and_the_scrape_still_answers(
    client, db, redis_keys, with_sandboxd, settings, closed_url
):
    settings.REDIS_URL = f"redis://{closed_url}/0"
    got = scrape(client)
    assert got[("analyst_redis_up", ())] == 0
    assert ("analyst_queue_depth", ()) not in got
    assert got[("analyst_turns", (("status", "queued"),))] == 0
    assert got[("analyst_sandboxd_up", ())] == 1


def test_a_metrics_token_when_set_is_required(client, db, redis_keys, with_sandboxd, settings):
    settings.METRICS_TOKEN = "scraper-secret"
    assert client.get("/metrics").status_code == 401
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer wrong").status_code == 401
    assert scrape(client, HTTP_AUTHORIZATION="Bearer scraper-secret")[("analyst_redis_up", ())] == 1


def test_counting_never_raises(redis_keys, settings, closed_url, caplog):
    metrics.count("no_such_metric")
    metrics.count("provider_errors")  # its label missing
    metrics.count("provider_retries", code="x")  # a label it does not take
    metrics.observe("turn_seconds", float("nan"), outcome="done")
    metrics.observe("cell_seconds", "slow")  # type: ignore[arg-type]
    settings.REDIS_URL = f"redis://{closed_url}/0"
    metrics.count("provider_retries")
    metrics.observe("cell_seconds", 0.1)
    assert len([r for r in caplog.records if r.name == "analyst.ops.metrics"]) == 7
