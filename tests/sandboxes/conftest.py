"""A sandboxd under bubblewrap, whatever driver "auto" would choose (bwrap_service.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from sandboxes import Sandbox, SandboxError
from tests.sandboxd_process import SandboxdProcess, own_sandboxd_process
from tests.sandboxes.bwrap_service import BWRAP_SETTINGS


@pytest.fixture(scope="module")
def bwrap_sandboxd() -> Iterator[SandboxdProcess]:
    with own_sandboxd_process(BWRAP_SETTINGS, prefix="sandboxd-bwrap-test-") as process:
        yield process


@pytest.fixture
def make_bwrap_sandbox(bwrap_sandboxd: SandboxdProcess) -> Iterator[Callable[[], Sandbox]]:
    created: list[Sandbox] = []

    def make() -> Sandbox:
        sandbox = Sandbox.create(url=bwrap_sandboxd.url, token=bwrap_sandboxd.token)
        created.append(sandbox)
        return sandbox

    yield make
    for sandbox in created:
        try:
            sandbox.kill()
        except SandboxError:
            pass
        sandbox.close()
