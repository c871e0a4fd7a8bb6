"""pytest fixtures of the test servers; a test folder's conftest imports those it uses."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.servers.database import Database
from tests.servers.http_api import HttpApi, http_api
from tests.servers.mariadb import mariadb_server
from tests.servers.postgres import postgres_database
from tests.servers.s3 import S3Store, s3_store


@pytest.fixture(scope="session")
def mariadb() -> Iterator[Database]:
    """One private MariaDB server for the whole run."""
    with mariadb_server() as database:
        yield database


@pytest.fixture(scope="session")
def postgres() -> Iterator[Database]:
    with postgres_database() as database:
        yield database


@pytest.fixture(scope="session")
def api() -> Iterator[HttpApi]:
    with http_api() as server:
        yield server


@pytest.fixture(scope="session")
def s3() -> Iterator[S3Store]:
    with s3_store() as store:
        yield store
