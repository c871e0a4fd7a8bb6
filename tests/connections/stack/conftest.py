"""The whole path for connections: a real Celery worker on real Redis, a real sandboxd letting
sandboxes out to loopback (SANDBOXD_EGRESS_LOOPBACK, as the tests' servers listen there), a
scripted model, and a fresh database on the running Postgres."""

from __future__ import annotations

from tests.integration.conftest import alice, api, model_server, session, stack, worker, worker_env
from tests.servers.fixtures import mariadb, postgres

__all__ = ["alice", "api", "mariadb", "model_server", "postgres", "session", "stack", "worker", "worker_env"]
