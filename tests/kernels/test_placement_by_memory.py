"""A new sandbox goes to the healthy sandboxd host with the most memory available, by what each
host's /stats says; a host that does not answer is never chosen, and is lost only when there are
other hosts to go on with."""

from __future__ import annotations

import pytest

from analyst.kernels import hosts as sandbox_hosts
from analyst.kernels.hosts import Host
from sandboxes import ServiceUnavailable
from tests.kernels.conftest import nowhere


def test_place_chooses_by_the_stats_of_the_hosts_and_skips_one_that_is_down(on_hosts, settings):
    down = nowhere()
    settings.SANDBOXD_HOSTS = [*settings.SANDBOXD_HOSTS, down]
    surveyed = {host.url: host for host in sandbox_hosts.survey()}
    assert set(surveyed) == {*(host.url for host in on_hosts), down}
    assert not surveyed[down].healthy and surveyed[down].error
    up = [surveyed[host.url] for host in on_hosts]
    assert all(host.healthy and host.memory_available > 0 for host in up)
    # place() reads the answers the survey just had (each is remembered a few seconds).
    assert sandbox_hosts.place() == max(up, key=lambda host: host.memory_available).url


def test_the_most_memory_wins_among_healthy_hosts_only():
    hosts = [
        Host("http://a:8787", True, 3 << 30),
        Host("http://b:8787", True, 5 << 30),
        Host("http://c:8787", False, error="unreachable"),
    ]
    assert sandbox_hosts.choose(hosts) == "http://b:8787"
    assert sandbox_hosts.choose(hosts, avoid="http://b:8787") == "http://a:8787"
    assert (
        sandbox_hosts.choose([Host("http://a:8787", True, 1), Host("http://b:8787", True, 1)])
        == "http://a:8787"
    )
    with pytest.raises(ServiceUnavailable, match="no sandbox host answers"):
        sandbox_hosts.choose(hosts[2:])


def test_without_sandboxd_hosts_every_sandbox_stays_on_sandboxd_url(settings):
    settings.SANDBOXD_HOSTS = []
    assert sandbox_hosts.place() == ""  # the SDK's SANDBOXD_URL; nothing is probed
    assert not sandbox_hosts.is_lost(nowhere())  # nowhere else to go on


def test_a_host_is_lost_when_it_does_not_answer_now(on_hosts):
    assert sandbox_hosts.is_lost(nowhere())
    assert not sandbox_hosts.is_lost(on_hosts[0].url)
