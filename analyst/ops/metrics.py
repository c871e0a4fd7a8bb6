"""Prometheus metrics: counters and histograms any process adds to in Redis, gauges read at scrape.

Workers count and time in Redis (a hash per metric), so the web process's /metrics sees every
worker's numbers and a restart loses none:

    metrics.count("provider_errors", code="rate_limited")
    metrics.observe("turn_seconds", 12.3, outcome="done")

Neither ever raises: a metric that cannot be stored is logged and dropped, never a failed turn.
``collect()`` renders the exposition: those series, plus gauges computed from the database,
Redis and sandboxd at scrape time (a source that does not answer reads 0 in its ``*_up`` gauge).
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta

import redis
from django.conf import settings
from django.db import DatabaseError
from django.db.models import Count
from django.utils import timezone
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.utils import floatToGoString

from analyst.kernels.sandboxd_stats import SandboxdDown, sandboxd_stats
from analyst.lib.redis import key, redis_client
from analyst.ops import health

log = logging.getLogger(__name__)
NAMESPACE = "analyst"


@dataclass(frozen=True)
class Counter:
    help: str
    labels: tuple[str, ...] = ()


@dataclass(frozen=True)
class Histogram:
    help: str
    buckets: tuple[float, ...]
    labels: tuple[str, ...] = ()


COUNTERS = {
    "provider_errors": Counter("Model provider calls that failed, by error code", ("code",)),
    "provider_retries": Counter("Model provider calls retried after a retryable error"),
    "reconciler_actions": Counter("What the reconciler did to stuck turns, by action", ("action",)),
}
HISTOGRAMS = {
    "turn_seconds": Histogram(
        "Seconds from a turn's start to its end, by outcome",
        (1, 2.5, 5, 10, 20, 30, 60, 120, 300, 600, 900),
        ("outcome",),
    ),
    "cell_seconds": Histogram(
        "Seconds a code cell ran in its sandbox", (0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300)
    ),
}
TURN_STATUSES = ("queued", "running", "done", "failed", "cancelled")
# kombu's Redis transport keeps a queue's prioritised messages in lists beside the queue's own.
PRIORITY_SEPARATOR = "\x06\x16"
PRIORITY_STEPS = (3, 6, 9)


# Writing: any process, never raising.


def count(name: str, amount: int = 1, **labels: str) -> None:
    """Add ``amount`` to the counter ``name`` (one of COUNTERS) for these label values."""
    try:
        field = _series(name, COUNTERS, labels)
        redis_client().hincrby(_key(name), field, amount)
    except Exception:  # never fail the caller: a metric is worth less than a turn
        log.warning("metric %s not counted", name, exc_info=True)


def observe(name: str, seconds: float, **labels: str) -> None:
    """Record one observation of the histogram ``name`` (one of HISTOGRAMS)."""
    try:
        series = _series(name, HISTOGRAMS, labels)
        value = float(seconds)
        if math.isnan(value):
            raise ValueError("a NaN observation")
        bucket = next((b for b in HISTOGRAMS[name].buckets if value <= b), math.inf)
        pipe = redis_client().pipeline(transaction=True)
        pipe.hincrby(_key(name), f"{series}|{floatToGoString(bucket)}", 1)
        pipe.hincrbyfloat(_key(name), f"{series}|sum", value)
        pipe.execute()
    except Exception:  # never fail the caller: a metric is worth less than a turn
        log.warning("metric %s not observed", name, exc_info=True)


def _series(name: str, known: Mapping[str, Counter | Histogram], labels: Mapping[str, str]) -> str:
    if name not in known:
        raise ValueError(f"unknown metric {name!r}")
    if set(labels) != set(known[name].labels):
        raise ValueError(f"{name} takes the labels {known[name].labels}, not {tuple(labels)}")
    return json.dumps([str(labels[label]) for label in known[name].labels])


def _key(name: str) -> str:
    return key("metrics", name)


# Reading: the web process, at scrape time.


def exposition() -> bytes:
    """Everything in Prometheus's text format."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(ScrapeCollector())
    return generate_latest(registry)


class ScrapeCollector:
    """Reads every source afresh on each scrape; a source that fails costs only its own series."""

    def collect(self) -> Iterator[Metric]:
        yield from self._redis_series()
        yield from self._database_gauges()
        yield from self._sandboxd_gauges()

    def _redis_series(self) -> Iterator[Metric]:
        try:
            client = redis_client()
            stored = {name: client.hgetall(_key(name)) for name in (*COUNTERS, *HISTOGRAMS)}
            depth = queue_depth(client)
            workers = len(health.alive())
        except redis.RedisError:
            log.warning("metrics: Redis did not answer", exc_info=True)
            yield _gauge("redis_up", "1 when Redis answered this scrape", 0)
            return
        yield _gauge("redis_up", "1 when Redis answered this scrape", 1)
        for name, spec in COUNTERS.items():
            yield _counter(name, spec, stored[name])
        for name, hist in HISTOGRAMS.items():
            yield _histogram(name, hist, stored[name])
        yield _gauge("queue_depth", "Turn and file tasks waiting in the Celery queue", depth)
        yield _gauge("workers_alive", "Workers whose heartbeat is recent", workers)

    def _database_gauges(self) -> Iterator[Metric]:
        from analyst.models import Event, Turn

        try:
            by_status = dict.fromkeys(TURN_STATUSES, 0)
            for row in Turn.objects.values("status").order_by().annotate(n=Count("id")):
                by_status[row["status"]] = row["n"]
            since = timezone.now() - timedelta(seconds=settings.ANALYST_QUEUED_TOO_LONG)
            too_long = Turn.objects.filter(status=Turn.Status.QUEUED, created_at__lt=since).count()
            events = Event.objects.count()
        except DatabaseError:
            log.warning("metrics: the database did not answer", exc_info=True)
            yield _gauge("database_up", "1 when the database answered this scrape", 0)
            return
        yield _gauge("database_up", "1 when the database answered this scrape", 1)
        turns = GaugeMetricFamily(f"{NAMESPACE}_turns", "Turns by status", labels=["status"])
        for status, n in by_status.items():
            turns.add_metric([status], n)
        yield turns
        yield _gauge(
            "turns_queued_too_long",
            f"Turns queued longer than ANALYST_QUEUED_TOO_LONG ({settings.ANALYST_QUEUED_TOO_LONG:g} s)",
            too_long,
        )
        yield _gauge("events_stored", "Events in the event log", events)

    def _sandboxd_gauges(self) -> Iterator[Metric]:
        try:
            stats = sandboxd_stats()
        except SandboxdDown as exc:
            log.warning("metrics: sandboxd %s", exc)
            yield _gauge("sandboxd_up", "1 when sandboxd answered this scrape", 0)
            return
        yield _gauge("sandboxd_up", "1 when sandboxd answered this scrape", 1)
        yield _gauge("sandboxes", "Live sandboxes on sandboxd", stats.get("sandboxes", 0))
        pool = stats.get("pool") or {}
        yield _gauge("sandbox_pool_size", "Warm kernels sandboxd keeps per template", pool.get("size", 0))
        ready = GaugeMetricFamily(
            f"{NAMESPACE}_sandbox_pool_ready", "Warm kernels ready now, by template", labels=["template"]
        )
        for template, n in sorted((pool.get("ready") or {}).items()):
            ready.add_metric([template], n)
        yield ready
        egress = stats.get("egress") or {}
        for name, help in EGRESS_TOTALS.items():
            yield CounterMetricFamily(f"{NAMESPACE}_sandbox_egress_{name}", help, value=egress.get(name, 0))


# sandboxd's egress totals since it started (its /stats "egress"), as counters.
EGRESS_TOTALS = {
    "connections": "Connections sandboxes made through sandboxd's egress",
    "refused": "Connections out of sandboxes that sandboxd refused or could not make",
    "bytes_in": "Bytes that came into sandboxes through sandboxd's egress",
    "bytes_out": "Bytes that went out of sandboxes through sandboxd's egress",
}


def queue_depth(client: redis.Redis) -> int:
    queue = settings.CELERY_TASK_DEFAULT_QUEUE
    names = [queue, *(f"{queue}{PRIORITY_SEPARATOR}{step}" for step in PRIORITY_STEPS)]
    pipe = client.pipeline(transaction=False)
    for name in names:
        pipe.llen(name)
    return sum(pipe.execute())


def _gauge(name: str, help: str, value: float) -> GaugeMetricFamily:
    return GaugeMetricFamily(f"{NAMESPACE}_{name}", help, value=value)


def _counter(name: str, spec: Counter, stored: Mapping[bytes, bytes]) -> CounterMetricFamily:
    family = CounterMetricFamily(f"{NAMESPACE}_{name}", spec.help, labels=list(spec.labels))
    if not spec.labels and not stored:
        family.add_metric([], 0)
    for field, value in sorted(stored.items()):
        family.add_metric(json.loads(field), int(value))
    return family


def _histogram(name: str, spec: Histogram, stored: Mapping[bytes, bytes]) -> HistogramMetricFamily:
    family = HistogramMetricFamily(f"{NAMESPACE}_{name}", spec.help, labels=list(spec.labels))
    series: dict[str, dict[str, float]] = {}
    for raw_field, raw_value in stored.items():
        labels, _, part = raw_field.decode().rpartition("|")
        series.setdefault(labels, {})[part] = float(raw_value)
    for labels, parts in sorted(series.items()):
        family.add_metric(json.loads(labels), _cumulative(spec.buckets, parts), parts.get("sum", 0.0))
    return family


def _cumulative(bounds: Sequence[float], parts: Mapping[str, float]) -> list[tuple[str, float]]:
    running, buckets = 0.0, []
    for bound in (*(floatToGoString(b) for b in bounds), "+Inf"):
        running += parts.get(bound, 0.0)
        buckets.append((bound, running))
    return buckets
