"""Shared fixtures: a real sandboxd process, sandboxes that clean up after themselves, and a
broker that cannot be reached."""

from __future__ import annotations

import contextlib
import shutil
import socket
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from sandboxes import Sandbox, SandboxError
from tests.channel_layers import drop_layers_left_behind
from tests.oidc_provider.process import OIDCProvider
from tests.sandboxd_process import SandboxdProcess

# Quotas small enough that attacks and limits are quick to prove.
TEST_SETTINGS = {
    "SANDBOXD_POOL_SIZE": "1",
    # A fixed pool: refills that grow it would compete with the tests for the CPU
    # (tests/sandboxes/test_adaptive_pool.py lets one grow).
    "SANDBOXD_POOL_MAX": "1",
    "SANDBOXD_DEFAULT_TTL": "600",
    "SANDBOXD_CELL_TIMEOUT": "60",
    "SANDBOXD_MEMORY_LIMIT": "1G",
    "SANDBOXD_PROCESS_LIMIT": "128",
    "SANDBOXD_DISK_LIMIT": "64M",
    "SANDBOXD_STDOUT_LIMIT": "64k",
    "SANDBOXD_MAX_UPLOAD": "32M",
    # No kernel started ahead for each sandbox's next new context (each upload's description makes
    # one): they would compete with the tests for the CPU. test_spare_kernel.py turns them on.
    "SANDBOXD_CONTEXT_SPARE": "0",
    # The tests' databases and servers listen on loopback; egress to them must be allowed.
    "SANDBOXD_EGRESS_LOOPBACK": "1",
}


DATABASE_FIXTURES = {"db", "transactional_db", "django_db_setup"}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test that touches the database, so `make test-postgres` can select them."""
    for item in items:
        if DATABASE_FIXTURES & set(getattr(item, "fixturenames", ())) or item.get_closest_marker("django_db"):
            item.add_marker(pytest.mark.database)


@pytest.fixture(autouse=True)
def channel_layers_left_behind_dropped() -> Iterator[None]:
    yield
    drop_layers_left_behind()


@pytest.fixture(scope="session")
def sandboxd() -> Iterator[SandboxdProcess]:
    """One real sandboxd for the whole run, under the default isolation driver (auto).

    Its folder is our own (not pytest's tmp_path, whose clean-up cannot remove mounted
    workdirs); when it stops, it must have removed every workdir it made.
    """
    base = Path(tempfile.mkdtemp(prefix="sandboxd-test-"))
    base.chmod(0o755)  # the unprivileged sandbox user must reach the workdirs below
    process = SandboxdProcess(data_dir=base / "data", log_path=base / "sandboxd.log", settings=TEST_SETTINGS)
    process.start()
    yield process
    process.stop()
    leftovers = list((base / "data" / "sandboxes").iterdir())
    assert not leftovers, f"sandboxd left workdirs behind: {leftovers}"
    shutil.rmtree(base)


@pytest.fixture
def make_sandbox(sandboxd: SandboxdProcess) -> Iterator[Callable[..., Sandbox]]:
    """Create sandboxes on the test sandboxd; each is killed when the test ends."""
    with sandbox_maker(sandboxd) as make:
        yield make


@contextlib.contextmanager
def sandbox_maker(process: SandboxdProcess) -> Iterator[Callable[..., Sandbox]]:
    """make(**options): a sandbox on ``process``; every one made is killed at the end."""
    created: list[Sandbox] = []

    def make(**kwargs: object) -> Sandbox:
        sandbox = Sandbox.create(url=process.url, token=process.token, **kwargs)  # type: ignore[arg-type]
        created.append(sandbox)
        return sandbox

    yield make
    for sandbox in created:
        try:
            sandbox.kill()
        except SandboxError:
            pass
        sandbox.close()


@pytest.fixture
def sandbox(make_sandbox: Callable[..., Sandbox]) -> Sandbox:
    return make_sandbox()


@pytest.fixture
def service_still_serves(
    sandboxd: SandboxdProcess, make_sandbox: Callable[..., Sandbox]
) -> Callable[[], None]:
    """Call after an attack: sandboxd is alive and a fresh sandbox still runs code."""

    def check() -> None:
        assert sandboxd.process is not None and sandboxd.process.poll() is None, sandboxd.read_log()
        assert make_sandbox().run_code("6 * 7").text == "42"

    return check


def workdir_of(sandboxd: SandboxdProcess, sandbox: Sandbox) -> Path:
    """The sandbox's workdir as sandboxd sees it (its mounts are private to its namespace)."""
    return sandboxd.view(sandboxd.data_dir / "sandboxes" / sandbox.sandbox_id)


@pytest.fixture
def broker_down(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Celery publishes to a port where nothing listens (its real publish path and retries)."""
    from analyst import tasks

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    app = tasks.run_turn.app
    monkeypatch.setattr(app.conf, "broker_url", f"redis://127.0.0.1:{port}/0")
    monkeypatch.setattr(app, "_pool", None)
    monkeypatch.setattr(app.amqp, "_producer_pool", None)
    yield


@pytest.fixture(scope="session")
def oidc_provider() -> Iterator[OIDCProvider]:
    """A real OpenID provider on loopback (tests/oidc_provider/), this app its registered client:
    for the test client (testserver) and for a web server on any loopback port."""
    provider = OIDCProvider(["http://testserver/oidc/callback/", "http://127.0.0.1/oidc/callback/"]).start()
    yield provider
    provider.stop()
