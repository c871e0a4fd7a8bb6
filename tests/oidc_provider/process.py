"""Start the test OpenID provider (django-oauth-toolkit under uvicorn) on a free loopback port, with
its own SQLite database and RSA key, the app registered as its client."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from tests.sandboxd_process import ROOT, free_port

DISCOVERY = "/.well-known/openid-configuration"


class OIDCProvider:
    client_id = "analyst-tests"
    client_secret = "analyst-tests-secret"
    password = "provider-passphrase"

    def __init__(self, redirect_uris: list[str]) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="oidc-provider-"))
        self.log_path = self.folder / "provider.log"
        self.port = free_port()
        self.issuer = f"http://127.0.0.1:{self.port}/o"
        self.redirect_uris = redirect_uris
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        key_file = self.folder / "key.pem"
        key_file.write_bytes(
            key.private_bytes(
                serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
            )
        )
        self.env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "tests.oidc_provider.settings",
            "OIDC_PROVIDER_DB": str(self.folder / "provider.sqlite3"),
            "OIDC_PROVIDER_KEY_FILE": str(key_file),
        }
        self.process: subprocess.Popen[bytes] | None = None

    def manage(self, *args: str) -> None:
        subprocess.run(
            [sys.executable, "-m", "django", *args], cwd=ROOT, env=self.env, check=True, capture_output=True
        )

    def start(self) -> OIDCProvider:
        self.manage("migrate", "--verbosity", "0")
        self.manage("provider_client", self.client_id, self.client_secret, " ".join(self.redirect_uris))
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "uvicorn", "tests.oidc_provider.asgi:application",
                 "--host", "127.0.0.1", "--port", str(self.port)],
                cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT,
            )  # fmt: skip
        deadline = time.monotonic() + 30
        while not self._answers():
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(
                    f"the OpenID provider did not start:\n{self.log_path.read_text(errors='replace')}"
                )
            time.sleep(0.1)
        return self

    def _answers(self) -> bool:
        try:
            return httpx.get(self.issuer + DISCOVERY, timeout=1).status_code == 200
        except httpx.HTTPError:
            return False

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self.folder, ignore_errors=True)

    def set_user(self, username: str, *, email: str, groups: list[str], active: bool = True) -> None:
        """Make or change the provider's ``username`` (its password: ``self.password``)."""
        flags = [] if active else ["--inactive"]
        self.manage(
            "provider_user", username, "--password", self.password, "--email", email,
            "--groups", ",".join(groups), *flags,
        )  # fmt: skip

    def discovery_fetches(self) -> int:
        """How many times the discovery document was asked for (uvicorn's access log), the
        provider's own start-up check excepted."""
        return self.log_path.read_text(errors="replace").count(f"GET /o{DISCOVERY} HTTP") - 1

    def app_settings(self) -> dict[str, str]:
        """The app's settings for signing in here."""
        return {
            "ANALYST_OIDC_ISSUER": self.issuer,
            "ANALYST_OIDC_CLIENT_ID": self.client_id,
            "ANALYST_OIDC_CLIENT_SECRET": self.client_secret,
        }
