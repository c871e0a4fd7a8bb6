"""The whole path for connections: a real Celery worker on real Redis, a real sandboxd letting
sandboxes out to loopback (SANDBOXD_EGRESS_LOOPBACK, as the tests' servers listen there), a
scripted model, and a fresh database on the running Postgres.

The worker runs statements under a short SQL timeout (ANALYST_SQL_TIMEOUT, which reaches a
session's kernel in the egress config the worker builds), so that a test of a long query is
stopped soon; the queries of every other test here take milliseconds."""

from __future__ import annotations

import pytest

from tests.fakes.model_server import ScriptedModelServer
from tests.integration.conftest import (
    LEASE_SECONDS,
    alice,
    api,
    model_server,
    session,
    stack,
    worker,
    worker_environment,
)
from tests.sandboxd_process import SandboxdProcess
from tests.servers.fixtures import mariadb, postgres

__all__ = ["alice", "api", "mariadb", "model_server", "postgres", "session", "stack", "worker"]

SQL_TIMEOUT_SECONDS = 3


@pytest.fixture(scope="package")
def worker_env(
    django_db_setup: None, sandboxd: SandboxdProcess, model_server: ScriptedModelServer
) -> dict[str, str]:
    return worker_environment(
        sandboxd,
        model_server,
        ANALYST_TURN_LEASE=str(LEASE_SECONDS),
        ANALYST_DELTA_INTERVAL="0.05",
        ANALYST_SQL_TIMEOUT=str(SQL_TIMEOUT_SECONDS),
    )
