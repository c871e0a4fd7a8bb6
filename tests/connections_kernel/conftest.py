from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.connections_kernel import configs
from tests.connections_kernel.template_shell import TemplateShell
from tests.servers.database import Database
from tests.servers.fixtures import api, mariadb, postgres, s3  # noqa: F401 (fixtures)


@pytest.fixture
def shell(tmp_path: Path) -> Iterator[TemplateShell]:
    workdir = tmp_path / "work"
    workdir.mkdir()
    template_shell = TemplateShell(workdir)
    yield template_shell
    template_shell.close()


@dataclass
class Server:
    kind: str  # "postgres" or "mariadb"
    db: Database
    config: Callable[..., dict[str, Any]]  # configs.postgres or configs.mysql, for db

    def attach(self, shell: TemplateShell, name: str = "w", **settings: Any) -> None:
        """Attach ``db`` as ``name``, its forwarder port being the server's own."""
        config = self.config(self.db, **settings.pop("changes", {}))
        shell.set_egress({name: config}, {name: settings.pop("port", self.db.port)}, **settings)


@pytest.fixture(params=["postgres", "mariadb"])
def server(request: pytest.FixtureRequest) -> Server:
    """Each SQL server in turn."""
    build = configs.postgres if request.param == "postgres" else configs.mysql
    return Server(kind=request.param, db=request.getfixturevalue(request.param), config=build)
