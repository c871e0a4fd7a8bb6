"""Sandbox.create() takes a kernel that was started, with pandas (and, warming up in the pool,
scikit-learn) imported, before it was asked for."""

import time
from collections.abc import Callable

import pytest

from sandboxes import Sandbox
from tests.conftest import TEST_SETTINGS
from tests.sandboxd_process import own_sandboxd_process

KERNEL_START = """
import os
ticks = os.sysconf('SC_CLK_TCK')
start = int(open('/proc/self/stat').read().rsplit(')', 1)[1].split()[19]) / ticks
uptime = float(open('/proc/uptime').read().split()[0])
time.time() - (uptime - start)
"""


def pooled(create: Callable[[], Sandbox]) -> Sandbox:
    """A sandbox whose kernel was started before it was asked for (the pool refills in the
    background, so a cold one may come first; the caller kills every sandbox ``create`` made)."""
    deadline = time.monotonic() + 60
    while True:
        asked_at = time.time()
        sandbox = create()
        started_at = float(sandbox.run_code("import time" + KERNEL_START).text)
        if started_at < asked_at - 0.2:
            return sandbox
        assert time.monotonic() < deadline, "no sandbox ever came from the warm pool"
        time.sleep(2)


def test_first_kernel_comes_from_the_pool(make_sandbox):
    make_sandbox()  # may take the pooled kernel the fixture's sandboxd started first
    time.sleep(0.1)
    sandbox = pooled(make_sandbox)
    modules = sandbox.run_code(
        "import sys; sorted(m for m in ('pandas', 'numpy', 'matplotlib', 'sklearn.linear_model')"
        " if m in sys.modules)"
    )
    assert modules.text == "['matplotlib', 'numpy', 'pandas', 'sklearn.linear_model']"  # warm.py's
    assert sandbox.run_code("pd.__name__, np.__name__").text == "('pandas', 'numpy')"
    names = sandbox.run_code("sorted(n for n in dir() if not n.startswith('_'))").text
    assert "sklearn" not in names and "importlib" not in names and "name" not in names, names


@pytest.mark.slow
def test_pooled_kernels_are_not_shared(make_sandbox):
    first = make_sandbox()
    first.run_code("marker = 'first'")
    for _ in range(3):
        assert make_sandbox().run_code("'marker' in dir()").text == "False"


def test_the_warm_up_can_be_turned_off():
    """SANDBOXD_POOL_WARM_UP=0: pooled kernels hold only what startup.py imports."""
    settings = {**TEST_SETTINGS, "SANDBOXD_POOL_SIZE": "1", "SANDBOXD_POOL_WARM_UP": "0"}
    made: list[Sandbox] = []
    with own_sandboxd_process(settings, prefix="sandboxd-no-warm-up-") as server:

        def create() -> Sandbox:
            made.append(Sandbox.create(url=server.url, token=server.token))
            return made[-1]

        try:
            sandbox = pooled(create)  # a kernel enters the pool once its warm-up, if any, is done
            imported = sandbox.run_code("import sys; ['pandas' in sys.modules, 'sklearn' in sys.modules]")
            assert imported.text == "[True, False]"
        finally:
            for sandbox in made:
                sandbox.kill()
                sandbox.close()
