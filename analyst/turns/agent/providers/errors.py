"""Errors of the model providers: each has a stable ``code`` and says whether a retry makes sense.

    ProviderError                 provider_error
    ├── MissingApiKey             missing_api_key        no key in the environment
    ├── MissingSetting            missing_setting        no endpoint or API version (Azure)
    ├── AuthenticationFailed      authentication_failed  401 / 403
    ├── UnknownModel              unknown_model          not_found_error naming a model, model_not_found
    ├── EndpointNotFound          endpoint_not_found     any other 404: the base URL is wrong
    ├── RateLimited          (r)  rate_limited           429, after retries
    ├── ProviderUnavailable  (r)  provider_unavailable   5xx, overloaded, unreachable, cut off
    ├── MalformedStream           malformed_stream       the answer is not the protocol we speak
    └── BadRequest                bad_request            any other 4xx, with the provider's message

(r): ``retryable`` is True; the provider has already retried these as far as it safely could
(never once a stream has started), so a caller may retry the whole turn later.
"""

from __future__ import annotations

import httpx


class ProviderError(Exception):
    """The model provider failed."""

    code = "provider_error"
    retryable = False

    def __init__(self, message: str = "") -> None:
        super().__init__(message or self.__class__.__doc__ or self.code)
        self.message = str(self)


class MissingApiKey(ProviderError):
    """No API key is configured for the provider."""

    code = "missing_api_key"

    def __init__(self, provider: str, env_var: str) -> None:
        super().__init__(f"no API key configured for {provider}: set {env_var}")
        self.env_var = env_var


class MissingSetting(ProviderError):
    """A setting the provider needs besides its key (an endpoint, an API version) is not configured."""

    code = "missing_setting"

    def __init__(self, provider: str, env_var: str, what: str) -> None:
        super().__init__(f"{provider} needs {what}: set {env_var}")
        self.env_var = env_var


class AuthenticationFailed(ProviderError):
    """The provider refused the API key."""

    code = "authentication_failed"


class UnknownModel(ProviderError):
    """The provider does not know the model."""

    code = "unknown_model"


class EndpointNotFound(ProviderError):
    """The provider has no such endpoint: its base URL is wrong."""

    code = "endpoint_not_found"


class RateLimited(ProviderError):
    """The provider kept refusing requests for exceeding a rate limit."""

    code, retryable = "rate_limited", True


class ProviderUnavailable(ProviderError):
    """The provider is unreachable, overloaded or failing."""

    code, retryable = "provider_unavailable", True


class MalformedStream(ProviderError):
    """The provider's answer does not follow its streaming protocol."""

    code = "malformed_stream"


class BadRequest(ProviderError):
    """The provider refused the request."""

    code = "bad_request"


def from_status(status: int, message: str) -> ProviderError:
    """The error an HTTP status stands for when the body names nothing more precise."""
    if status in (401, 403):
        return AuthenticationFailed(message)
    if status == 404:
        return UnknownModel(message)
    if status == 429:
        return RateLimited(message)
    if status >= 500:
        return ProviderUnavailable(message)
    return BadRequest(message)


def wrong_endpoint(request: httpx.Request, setting: str) -> EndpointNotFound:
    """A 404 for the request's path itself: the base URL (``setting``) does not lead to the API."""
    return EndpointNotFound(
        f"{request.method} {request.url} answered 404 Not Found: no such API endpoint there;"
        f" check {setting} (it should be the API's root, which the path is added to)"
    )


def from_transport(exc: httpx.TransportError, url: httpx.URL) -> ProviderError:
    """httpx's transport errors (connect, read, timeout, protocol) as a ProviderUnavailable."""
    if isinstance(exc, httpx.ReadTimeout):
        return ProviderUnavailable(f"{url} sent no answer in time (the model may be overloaded or hung)")
    if isinstance(exc, httpx.TimeoutException):
        return ProviderUnavailable(f"{url} did not answer in time ({type(exc).__name__})")
    return ProviderUnavailable(f"cannot reach {url}: {exc or type(exc).__name__}")
