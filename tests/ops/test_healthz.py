"""/healthz checks what it names: 200 when the database, Redis, sandboxd and a worker answer,
503 naming the part that did not; it shows no host, URL, worker name or token."""

from __future__ import annotations

import json

import pytest

from analyst.lib.redis import redis_client
from analyst.ops import health

pytestmark = pytest.mark.django_db


def get_health(client):
    response = client.get("/healthz")
    assert response["Content-Type"] == "application/json"
    return response.status_code, response.json()


def test_everything_up_is_200(client, redis_keys, with_sandboxd):
    assert health.beat("worker-host-1.internal")
    assert health.beat("worker-host-2.internal")
    status, body = get_health(client)
    assert status == 200, body
    assert body == {
        "status": "ok",
        "checks": {
            "database": {"ok": True},
            "redis": {"ok": True},
            "sandboxd": {"ok": True},
            "worker": {"ok": True, "alive": "yes", "count": 2},
        },
    }


def test_redis_unreachable_is_503_naming_redis(client, redis_keys, with_sandboxd, settings, closed_url):
    health.beat("worker-host")
    settings.REDIS_URL = f"redis://{closed_url}/0"
    status, body = get_health(client)
    assert status == 503
    assert body["status"] == "failing"
    assert body["checks"]["redis"] == {"ok": False, "error": "unreachable"}
    assert body["failing"] == ["redis", "worker"], "the heartbeats live in Redis too"
    assert body["checks"]["database"]["ok"] and body["checks"]["sandboxd"]["ok"]
    assert closed_url.split(":")[1] not in response_text(body)


def test_sandboxd_unreachable_is_503_naming_sandboxd(client, redis_keys, settings, closed_url):
    health.beat("worker-host")
    settings.SANDBOXD_URL = f"http://{closed_url}"
    settings.SANDBOXD_TOKEN = "a-token-never-shown"
    status, body = get_health(client)
    assert status == 503
    assert body["failing"] == ["sandboxd"]
    assert body["checks"]["sandboxd"] == {"ok": False, "error": "unreachable (ConnectError)"}
    assert "a-token-never-shown" not in response_text(body)
    assert closed_url.split(":")[1] not in response_text(body)


def test_sandboxd_refusing_our_token_is_503(client, redis_keys, with_sandboxd, settings):
    health.beat("worker-host")
    settings.SANDBOXD_TOKEN = "not-the-token"
    status, body = get_health(client)
    assert status == 503
    assert body["failing"] == ["sandboxd"]
    assert body["checks"]["sandboxd"]["error"].startswith("refused the token")


def test_no_worker_beat_is_503_naming_the_worker(client, redis_keys, with_sandboxd):
    status, body = get_health(client)
    assert status == 503
    assert body["failing"] == ["worker"]
    assert body["checks"]["worker"] == {
        "ok": False,
        "alive": "no",
        "count": 0,
        "error": "no worker beat recently",
    }


def test_worker_names_are_not_shown(client, redis_keys, with_sandboxd):
    health.beat("worker-7.secret-cluster.internal")
    status, body = get_health(client)
    assert status == 200
    assert "secret-cluster" not in response_text(body)
    assert health.alive() == ["worker-7.secret-cluster.internal"], "but alive() names them for the code"


def test_a_beat_lapses_after_three_intervals(redis_keys, settings):
    settings.ANALYST_WORKER_BEAT = 7
    health.beat("worker-host")
    ttl = redis_client().ttl(f"{redis_keys}:worker:worker-host")
    assert 20 <= ttl <= 21


def test_a_beat_with_redis_down_returns_false_and_does_not_raise(redis_keys, settings, closed_url):
    settings.REDIS_URL = f"redis://{closed_url}/0"
    assert health.beat("worker-host") is False


def response_text(body) -> str:
    return json.dumps(body)
