"""docker-compose.yml holds together: its services and their health checks, Redis's append-only
file on a volume, and only environment variables config/settings.py reads, each service given
the ones it needs. (No Docker here: the file is read, not run.)"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
APP_SERVICES = ("web", "worker", "sandboxd", "beat")  # the project's own image, configured by settings.py
NEEDS = {
    "web": {"SECRET_KEY", "DATABASE_URL", "REDIS_URL", "SANDBOXD_URL", "SANDBOXD_TOKEN"},
    "worker": {"SECRET_KEY", "DATABASE_URL", "REDIS_URL", "SANDBOXD_URL", "SANDBOXD_TOKEN"},
    "sandboxd": {"SECRET_KEY", "SANDBOXD_URL", "SANDBOXD_TOKEN"},
    "beat": {"SECRET_KEY", "DATABASE_URL", "REDIS_URL"},
}
READERS = {"envstr", "envbool", "envint", "envfloat", "envsecret", "envbytes"}


@pytest.fixture(scope="module")
def services() -> dict:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]


def settings_reads() -> set[str]:
    """Every environment variable config/settings.py reads, by name (and NAME_FILE for secrets)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse((ROOT / "config" / "settings.py").read_text())):
        if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            func = node.func
            called = func.id if isinstance(func, ast.Name) else ast.unparse(func)
            if called in READERS or called in ("os.environ.get", "os.getenv"):
                names.add(node.args[0].value)
                if called == "envsecret":
                    names.add(f"{node.args[0].value}_FILE")
        elif isinstance(node, ast.Subscript) and ast.unparse(node.value) == "os.environ":
            if isinstance(node.slice, ast.Constant):
                names.add(node.slice.value)
    return names


def environment(service: dict) -> dict[str, str]:
    env = service.get("environment") or {}
    if isinstance(env, list):
        env = dict(item.split("=", 1) for item in env)
    return {name: str(value) for name, value in env.items()}


def test_the_services(services):
    assert set(services) == {"web", "worker", "beat", "sandboxd", "redis", "postgres"}


def test_every_service_has_a_health_check(services):
    for name, service in services.items():
        check = service.get("healthcheck")
        assert check and check["test"][0] in ("CMD", "CMD-SHELL"), f"{name} has no health check"
        assert {"interval", "timeout", "retries"} <= set(check), name


@pytest.mark.parametrize(
    ("service", "probe"),
    [
        ("web", "http://127.0.0.1:8000/healthz"),
        ("sandboxd", "http://sandboxd:8787/health"),
        ("redis", "ping"),
        ("postgres", "pg_isready"),
        ("worker", "ping"),
        ("beat", "PeriodicTask"),
    ],
)
def test_each_health_check_probes_its_service(services, service, probe):
    assert any(probe in part for part in services[service]["healthcheck"]["test"])


def test_what_waits_for_a_service_waits_for_it_to_be_healthy(services):
    for name, service in services.items():
        for needed, condition in (service.get("depends_on") or {}).items():
            assert condition == {"condition": "service_healthy"}, (name, needed)
            assert "healthcheck" in services[needed]


def test_redis_keeps_an_append_only_file_on_a_volume(services):
    redis = services["redis"]
    command = redis["command"]
    assert command[command.index("--appendonly") + 1] == "yes"
    assert "--save" not in command or command[command.index("--save") + 1] != "", "persistence on"
    declared = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["volumes"]
    mounts = dict(volume.split(":", 1) for volume in redis["volumes"])
    assert {source for source, target in mounts.items() if target == "/data"} <= set(declared)
    assert "/data" in mounts.values(), "the append-only file lives in /data"


@pytest.mark.parametrize("service", APP_SERVICES)
def test_every_variable_passed_is_one_the_settings_read(services, service):
    passed = set(environment(services[service]))
    assert passed, f"{service} is given no environment"
    unknown = passed - settings_reads()
    assert not unknown, f"{service} is given {sorted(unknown)}, which config/settings.py never reads"


@pytest.mark.parametrize("service", APP_SERVICES)
def test_each_service_is_given_what_it_needs(services, service):
    env = environment(services[service])
    missing = NEEDS[service] - set(env)
    assert not missing, f"{service} lacks {sorted(missing)}"
    for secret in ("SECRET_KEY", "SANDBOXD_TOKEN"):
        assert re.fullmatch(rf"\$\{{{secret}:\?[^}}]+\}}", env[secret]), "a missing secret stops compose up"
    assert services[service].get("env_file") == ".env"


def test_the_addresses_name_the_services_that_serve_them(services):
    env = environment(services["web"])
    database = urlsplit(env["DATABASE_URL"])
    postgres = services["postgres"]["environment"]
    assert (database.hostname, database.username, database.password, database.path[1:]) == (
        "postgres",
        postgres["POSTGRES_USER"],
        postgres["POSTGRES_PASSWORD"],
        postgres["POSTGRES_DB"],
    )
    assert urlsplit(env["REDIS_URL"]).hostname == "redis"
    sandboxd = urlsplit(env["SANDBOXD_URL"])
    assert sandboxd.hostname == "sandboxd"
    assert f"http://sandboxd:{sandboxd.port}/health" in " ".join(services["sandboxd"]["healthcheck"]["test"])
    for service in APP_SERVICES:
        assert environment(services[service]) == env, "one configuration for the three app services"


def test_web_and_worker_share_the_media_folder(services):
    # The worker stores charts and reads uploads there; web serves the one and writes the other.
    mounts = {name: set(services[name].get("volumes", [])) for name in ("web", "worker")}
    assert "media:/app/var/media" in mounts["web"] & mounts["worker"]
