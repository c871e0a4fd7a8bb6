"""Isolation drivers, strongest first; ``choose_driver`` fails closed when none works."""

from __future__ import annotations

import logging

from sandboxes.drivers.base import Driver, DriverUnavailable
from sandboxes.drivers.bwrap import BwrapDriver
from sandboxes.drivers.gvisor import GVisorDriver

log = logging.getLogger(__name__)
DRIVERS: dict[str, type[Driver]] = {GVisorDriver.name: GVisorDriver, BwrapDriver.name: BwrapDriver}


def choose_driver(name: str = "auto", owner: tuple[int, int] | None = None) -> Driver:
    """The named driver, or with "auto" the strongest that works here without shortcomings.

    Raises DriverUnavailable when the named driver, or with "auto" every driver, cannot run.
    """
    if name != "auto":
        if name not in DRIVERS:
            raise DriverUnavailable(
                f"unknown isolation driver {name!r}", f"choose one of {', '.join(DRIVERS)}"
            )
        driver = DRIVERS[name]()
        driver.probe(*(owner or (None, None)))
        for shortcoming in driver.shortcomings:
            log.warning("%s: %s", name, shortcoming)
        return driver
    problems = []
    for cls in sorted(DRIVERS.values(), key=lambda d: -d.strength):
        driver = cls()
        try:
            driver.probe(*(owner or (None, None)))
        except DriverUnavailable as exc:
            problems.append(f"{cls.name}: {exc}")
            continue
        if driver.shortcomings:
            log.info("not choosing %s: %s", cls.name, "; ".join(driver.shortcomings))
            problems.append(f"{cls.name}: {'; '.join(driver.shortcomings)}")
            continue
        return driver
    raise DriverUnavailable(
        "no isolation driver works on this machine, so sandboxd will not run code: " + "; ".join(problems),
        "install bubblewrap (apt-get install bubblewrap) or gVisor (apt-get install runsc)",
    )
