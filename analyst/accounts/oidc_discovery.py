"""The OpenID provider's configuration, read from its issuer's discovery document once per process."""

from __future__ import annotations

import functools
from dataclasses import dataclass

import httpx

REQUIRED = ("issuer", "authorization_endpoint", "token_endpoint", "userinfo_endpoint", "jwks_uri")


class ProviderUnreachable(Exception):
    """The discovery document could not be fetched, or is not one; a later sign-in tries again."""


@dataclass(frozen=True)
class ProviderConfiguration:
    issuer: str
    authorization_endpoint: str
    token_endpoint: str
    userinfo_endpoint: str
    jwks_uri: str


@functools.cache
def provider_configuration(issuer: str) -> ProviderConfiguration:
    """The endpoints ``issuer`` publishes at /.well-known/openid-configuration. Cached once it
    succeeds (a failure is not): a provider moves its endpoints rarely, and a restart reads them
    again. Raises ProviderUnreachable, saying why."""
    url = f"{issuer.rstrip('/')}/.well-known/openid-configuration"
    try:
        response = httpx.get(url, timeout=10, follow_redirects=True)
        response.raise_for_status()
        document = response.json()
    except (httpx.HTTPError, ValueError) as error:
        raise ProviderUnreachable(f"{url}: {error}") from error
    if not isinstance(document, dict) or not all(isinstance(document.get(key), str) for key in REQUIRED):
        raise ProviderUnreachable(f"{url} does not name all of {', '.join(REQUIRED)}")
    # OpenID Connect Discovery 1.0, section 4.3: the document is the issuer's own.
    if document["issuer"].rstrip("/") != issuer.rstrip("/"):
        raise ProviderUnreachable(f"{url} is the document of issuer {document['issuer']!r}, not {issuer!r}")
    return ProviderConfiguration(**{key: document[key] for key in REQUIRED})
