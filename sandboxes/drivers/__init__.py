"""Isolation drivers; ``choose_driver`` picks one for sandboxd and fails closed when none works."""

from __future__ import annotations

import logging
from collections.abc import Mapping

from sandboxes.drivers.base import Driver, DriverUnavailable
from sandboxes.drivers.bwrap import BwrapDriver
from sandboxes.drivers.gvisor import GVisorDriver

log = logging.getLogger(__name__)
DRIVERS: dict[str, type[Driver]] = {GVisorDriver.name: GVisorDriver, BwrapDriver.name: BwrapDriver}
# What "auto" tries, in order: the first that works here without shortcomings. Bubblewrap comes
# first although gVisor is the stronger wall: here (systrap, nested virtualisation) gVisor misses
# the round-trip target (benchmarks/sandbox.py: `1+1` in 15-25 ms against 11-13 ms allowed, where
# bubblewrap takes 6-18 ms, in three runs on a loaded machine; 12.6 ms against 7.5 ms allowed,
# bubblewrap 6.1 ms, on a quiet one), so it is one setting away
# (SANDBOXD_DRIVER=gvisor) and the fallback where bubblewrap cannot run.
AUTO_ORDER: tuple[type[Driver], ...] = (BwrapDriver, GVisorDriver)

DriverOptions = Mapping[str, Mapping[str, object]]


def choose_driver(
    name: str = "auto", owner: tuple[int, int] | None = None, options: DriverOptions | None = None
) -> Driver:
    """The named driver, or with "auto" the first of AUTO_ORDER that works here without
    shortcomings. ``options`` holds keyword arguments per driver name (gVisor's platform).

    Raises DriverUnavailable when the named driver, or with "auto" every driver, cannot run.
    """
    options = options or {}
    if name != "auto":
        if name not in DRIVERS:
            raise DriverUnavailable(
                f"unknown isolation driver {name!r}", f"choose one of {', '.join(DRIVERS)}"
            )
        driver = DRIVERS[name](**options.get(name, {}))
        driver.probe(*(owner or (None, None)))
        for shortcoming in driver.shortcomings:
            log.warning("%s: %s", name, shortcoming)
        return driver
    problems = []
    for cls in AUTO_ORDER:
        driver = cls(**options.get(cls.name, {}))
        try:
            driver.probe(*(owner or (None, None)))
        except DriverUnavailable as exc:
            log.info("not choosing %s: %s", cls.name, exc)
            problems.append(f"{cls.name}: {exc}")
            continue
        if driver.shortcomings:
            log.info("not choosing %s: %s", cls.name, "; ".join(driver.shortcomings))
            problems.append(f"{cls.name}: {'; '.join(driver.shortcomings)}")
            continue
        return driver
    raise DriverUnavailable(
        "no isolation driver works on this machine, so sandboxd will not run code: " + "; ".join(problems),
        "install bubblewrap (apt-get install bubblewrap) or gVisor (scripts/ensure-system-packages)",
    )
