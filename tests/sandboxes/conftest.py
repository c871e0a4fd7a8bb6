"""A sandboxd under bubblewrap, whatever driver "auto" would choose (bwrap_service.py), and one under
gVisor (gvisor_service.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from sandboxes import Sandbox
from tests.conftest import sandbox_maker
from tests.sandboxd_process import SandboxdProcess, own_sandboxd_process
from tests.sandboxes.bwrap_service import BWRAP_SETTINGS
from tests.sandboxes.gvisor_service import GVISOR_SETTINGS


@pytest.fixture(scope="module")
def bwrap_sandboxd() -> Iterator[SandboxdProcess]:
    with own_sandboxd_process(BWRAP_SETTINGS, prefix="sandboxd-bwrap-test-") as process:
        yield process


@pytest.fixture
def make_bwrap_sandbox(bwrap_sandboxd: SandboxdProcess) -> Iterator[Callable[[], Sandbox]]:
    with sandbox_maker(bwrap_sandboxd) as make:
        yield make


@pytest.fixture(scope="package")
def gvisor_sandboxd() -> Iterator[SandboxdProcess]:
    with own_sandboxd_process(GVISOR_SETTINGS, prefix="sandboxd-gvisor-test-", start_timeout=120) as process:
        yield process
