"""With several sandboxd hosts, /healthz's sandboxd check passes while one of them answers (new
sessions go there) and says how many do, naming none."""

from __future__ import annotations

from analyst.ops import health
from tests.kernels.conftest import nowhere


def test_one_host_down_of_three_is_healthy_and_counted(on_hosts, settings):
    settings.SANDBOXD_HOSTS = [*settings.SANDBOXD_HOSTS, nowhere()]
    check = health.check_sandboxd()
    assert check.ok and check.details == {"hosts": 3, "healthy": 2}


def test_every_host_down_fails_without_naming_them(settings):
    settings.SANDBOXD_HOSTS = [nowhere(), nowhere()]
    check = health.check_sandboxd()
    assert not check.ok and check.details == {"hosts": 2, "healthy": 0}
    assert check.error == "no sandbox host answers"
