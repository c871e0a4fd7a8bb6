"""With SANDBOXD_DRIVER=auto, sandboxd runs on the first driver whose probe passes here, and says so."""

import os

from django.conf import settings

from sandboxes.drivers import AUTO_ORDER
from sandboxes.drivers.base import DriverUnavailable


def probed_choice() -> tuple[str, list[str]]:
    """Run every probe for real, as sandboxd does: the driver "auto" should pick, and the ones
    it should pass over before it."""
    owner = (settings.SANDBOXD_UID_BASE, settings.SANDBOXD_UID_BASE) if os.geteuid() == 0 else (None, None)
    passed_over = []
    for cls in AUTO_ORDER:
        options = {"platform": settings.SANDBOXD_GVISOR_PLATFORM} if cls.name == "gvisor" else {}
        driver = cls(**options)
        try:
            driver.probe(*owner)
        except DriverUnavailable:
            passed_over.append(cls.name)
            continue
        if not driver.shortcomings:
            return cls.name, passed_over
        passed_over.append(cls.name)
    raise AssertionError(f"no driver passes its probe here: {passed_over}")


def test_auto_runs_on_the_driver_the_probes_chose_and_logs_why(sandboxd):
    expected, passed_over = probed_choice()
    log = sandboxd.read_log()
    forked = " (kernels forked)" if expected == "bwrap" and os.geteuid() == 0 else ""  # forkserver/
    assert f"isolation driver: {expected}{forked}\n" in log
    for name in passed_over:
        assert f"not choosing {name}: " in log
