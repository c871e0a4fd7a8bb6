"""ANALYST_HTTPS=true turns on Secure cookies, HSTS (a year, subdomains), the redirect to https
(the probes excepted) and trust in X-Forwarded-Proto; off by default, for `make run` on http.
Settings are read at start, so each case runs in a fresh process with the variable set."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

from tests.sandboxd_process import ROOT

PROBE = """
import json
import django
django.setup()
from django.conf import settings
from django.test import Client

names = ["SESSION_COOKIE_SECURE", "CSRF_COOKIE_SECURE", "SECURE_HSTS_SECONDS",
         "SECURE_HSTS_INCLUDE_SUBDOMAINS", "SECURE_SSL_REDIRECT", "SECURE_PROXY_SSL_HEADER"]
found = {name: getattr(settings, name) for name in names}
client = Client(HTTP_HOST="127.0.0.1")
plain = client.get("/accounts/login/")
proxied = client.get("/accounts/login/", HTTP_X_FORWARDED_PROTO="https")
found["plain"] = [plain.status_code, plain.get("Location")]
found["proxied"] = [proxied.status_code, proxied.get("Strict-Transport-Security"),
                    bool(proxied.cookies["csrftoken"]["secure"])]
found["livez"] = client.get("/livez").status_code
print(json.dumps(found))
"""


def settings_with(tmp_path: Any, **env: str) -> dict[str, Any]:
    base = {k: v for k, v in os.environ.items() if k != "ANALYST_HTTPS"}
    base.update(
        DJANGO_SETTINGS_MODULE="config.settings", SECRET_KEY="test-only", DEBUG="0",
        DATABASE_URL=f"sqlite:///{tmp_path / 'unused.sqlite3'}", **env,
    )  # fmt: skip
    run = subprocess.run(
        [sys.executable, "-c", PROBE],
        cwd=ROOT,
        env=base,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return json.loads(run.stdout.strip().splitlines()[-1])


def test_https_on_secures_cookies_sends_hsts_and_redirects_http(tmp_path):
    found = settings_with(tmp_path, ANALYST_HTTPS="true")
    assert found["SESSION_COOKIE_SECURE"] is True and found["CSRF_COOKIE_SECURE"] is True
    assert found["SECURE_HSTS_SECONDS"] == 365 * 24 * 3600 and found["SECURE_HSTS_INCLUDE_SUBDOMAINS"] is True
    assert found["SECURE_SSL_REDIRECT"] is True
    assert found["SECURE_PROXY_SSL_HEADER"] == ["HTTP_X_FORWARDED_PROTO", "https"]
    assert found["plain"] == [301, "https://127.0.0.1/accounts/login/"]
    assert found["proxied"] == [200, "max-age=31536000; includeSubDomains", True]
    assert found["livez"] == 200, "the container's probes call http directly"


def test_off_by_default_for_plain_http(tmp_path):
    found = settings_with(tmp_path)
    assert not found["SESSION_COOKIE_SECURE"] and not found["CSRF_COOKIE_SECURE"]
    assert found["SECURE_HSTS_SECONDS"] == 0 and not found["SECURE_SSL_REDIRECT"]
    assert found["SECURE_PROXY_SSL_HEADER"] is None
    assert found["plain"] == [200, None]
    assert found["proxied"] == [200, None, False]
