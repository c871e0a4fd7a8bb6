"""The warm pool adapts: it grows while sandboxes are taken faster than one kernel warms up
(bounded by its maximum), and goes back to its size once nobody has taken one for a while. A fixed
pool of 2 emptied as soon as sessions came faster than one every ~1.5 s."""

from __future__ import annotations

import time

import httpx

from sandboxes.server.pool_sizing import DEMAND_WINDOW, PoolSizing
from tests.conftest import TEST_SETTINGS, sandbox_maker
from tests.sandboxd_process import own_sandboxd_process


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def sizing(clock: Clock) -> PoolSizing:
    return PoolSizing(minimum=2, maximum=6, idle_seconds=60, clock=clock)


def test_an_untouched_pool_keeps_its_size():
    assert sizing(Clock()).target() == 2


def test_it_grows_with_the_arrivals_that_come_while_one_kernel_warms_up():
    clock = Clock()
    pool = sizing(clock)
    pool.warmed(2.0)  # with its first guess of 2.0, still 2.0
    for _ in range(30):  # one a second for half a minute: ~2 arrive per warm-up
        pool.took(found=True)
        clock.now += 1
    assert pool.rate() == 30 / DEMAND_WINDOW
    assert pool.target() == 3  # two arrive while one warms, and one more
    assert pool.parallel() == 2


def test_a_take_that_finds_it_empty_grows_it_up_to_its_maximum():
    clock = Clock()
    pool = sizing(clock)
    for _ in range(10):
        pool.took(found=False)
    assert pool.target() == 6
    pool.took(found=True)  # a spare kernel again: the misses are forgiven
    assert pool.target() <= 3


def test_an_idle_pool_goes_back_to_its_size():
    clock = Clock()
    pool = sizing(clock)
    for _ in range(10):
        pool.took(found=False)
    clock.now += 59
    assert pool.target() > 2
    clock.now += 1
    assert pool.target() == 2 and pool.parallel() == 1


def pool_of(sandboxd) -> dict:
    headers = {"Authorization": f"Bearer {sandboxd.token}"}
    return httpx.get(f"{sandboxd.url}/stats", headers=headers).json()["pool"]


def wait_until(condition, sandboxd, what: str, timeout: float = 120) -> dict:
    deadline = time.monotonic() + timeout
    while not condition(pool := pool_of(sandboxd)):
        assert time.monotonic() < deadline, f"{what}: {pool}"
        time.sleep(0.2)
    return pool


def test_sandboxd_grows_its_pool_under_arrivals_and_shrinks_it_when_idle():
    settings = {
        **TEST_SETTINGS,
        "SANDBOXD_POOL_SIZE": "1",
        "SANDBOXD_POOL_MAX": "3",
        "SANDBOXD_POOL_IDLE": "6",
        "SANDBOXD_POOL_WARM_UP": "0",
    }
    with (
        own_sandboxd_process(settings, prefix="sandboxd-pool-") as sandboxd,
        sandbox_maker(sandboxd) as make,
    ):
        ready = lambda pool: pool["ready"]["code-interpreter"]  # noqa: E731
        target = lambda pool: pool["target"]["code-interpreter"]  # noqa: E731
        wait_until(lambda pool: ready(pool) == 1, sandboxd, "the pool never filled")
        assert pool_of(sandboxd)["max"] == 3
        for _ in range(4):  # faster than one kernel starts: the pool is drained
            make()
        grown = wait_until(lambda pool: ready(pool) >= 2, sandboxd, "the pool did not grow")
        assert 2 <= target(grown) <= 3 and ready(grown) <= 3
        back = lambda pool: target(pool) == 1 and ready(pool) == 1  # noqa: E731
        wait_until(back, sandboxd, "the idle pool kept its extras")
        assert make().run_code("6 * 7").text == "42"
