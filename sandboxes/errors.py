"""Errors shared by sandboxd and the SDK: each has a stable ``code`` sent in JSON error bodies.

    SandboxError
    ├── AuthenticationError        401 unauthorized
    ├── InvalidRequest             400 invalid_request
    │   ├── InvalidPath            400 invalid_path
    │   └── TemplateNotFound       400 template_not_found
    ├── NotFound                   404 not_found
    │   ├── SandboxNotFound        404 sandbox_not_found
    │   ├── ContextNotFound        404 context_not_found
    │   ├── FileNotFound           404 file_not_found
    │   ├── SnapshotNotFound       404 snapshot_not_found
    │   └── VariableNotFound       404 variable_not_found (no table of that name to preview)
    ├── SandboxExpired             410 sandbox_expired
    ├── ContextBusy                409 context_busy
    ├── EgressUnavailable          409 egress_unavailable (this driver, or sandboxd, cannot open egress)
    ├── FileTooLarge               413 file_too_large
    ├── SnapshotTooLarge           413 snapshot_too_large
    ├── SnapshotCorrupt            422 snapshot_corrupt
    ├── SnapshotFailed             500 snapshot_failed (a kernel's state could not be saved or loaded)
    ├── InspectionFailed           500 inspection_failed (a kernel's variables could not be described)
    ├── QuotaExceeded              507 quota_exceeded
    ├── CapacityExceeded           503 capacity_exceeded, retryable
    ├── ServiceUnavailable         503 service_unavailable, retryable (sandboxd unreachable or failing)
    └── RequestTimeout             --- retryable: the SDK gave up waiting (request_timeout)

``retryable`` says whether the same request may succeed later unchanged (sandboxd partitioned,
restarting or full); a caller that retries should back off. The others will fail again as sent.

A failing *cell* is not an exception: it is ``Execution.error`` (an ExecutionError).
An exception raised by a run_code handler (on_stdout, on_result ...) is not wrapped either: it
reaches the caller as raised, after the stream is closed and so the cell interrupted.
"""

from __future__ import annotations


class SandboxError(Exception):
    code = "internal_error"
    http_status = 500
    retryable = False

    def __init__(self, message: str = "") -> None:
        super().__init__(message or self.__class__.__doc__ or self.code)
        self.message = str(self)


class AuthenticationError(SandboxError):
    """The sandbox service token is missing or wrong."""

    code, http_status = "unauthorized", 401


class InvalidRequest(SandboxError):
    """The request is malformed."""

    code, http_status = "invalid_request", 400


class InvalidPath(InvalidRequest):
    """The path is outside the sandbox's workdir or otherwise not allowed."""

    code = "invalid_path"


class TemplateNotFound(InvalidRequest):
    """No template of that name is built on this sandbox service."""

    code = "template_not_found"


class NotFound(SandboxError):
    """No such resource."""

    code, http_status = "not_found", 404


class SandboxNotFound(NotFound):
    """No sandbox with that id exists."""

    code = "sandbox_not_found"


class ContextNotFound(NotFound):
    """No code context with that id exists in the sandbox."""

    code = "context_not_found"


class FileNotFound(NotFound):
    """No file at that path in the sandbox."""

    code = "file_not_found"


class SnapshotNotFound(NotFound):
    """No snapshot with that id exists."""

    code = "snapshot_not_found"


class VariableNotFound(NotFound):
    """No DataFrame or Series of that name in the code context."""

    code = "variable_not_found"


class SandboxExpired(SandboxError):
    """The sandbox reached the end of its time to live and was removed."""

    code, http_status = "sandbox_expired", 410


class ContextBusy(SandboxError):
    """The code context is already running a cell."""

    code, http_status = "context_busy", 409


class EgressUnavailable(SandboxError):
    """This sandbox cannot be given egress: its driver has a network stack of its own, or
    sandboxd lacks the privilege to enter its network namespace."""

    code, http_status = "egress_unavailable", 409


class FileTooLarge(SandboxError):
    """The upload is larger than the service's limit."""

    code, http_status = "file_too_large", 413


class SnapshotTooLarge(SandboxError):
    """The snapshot would be larger than the service's limit."""

    code, http_status = "snapshot_too_large", 413


class SnapshotCorrupt(SandboxError):
    """The snapshot file is damaged or truncated."""

    code, http_status = "snapshot_corrupt", 422


class SnapshotFailed(SandboxError):
    """A kernel's state could not be saved or loaded."""

    code, http_status = "snapshot_failed", 500


class InspectionFailed(SandboxError):
    """The kernel's report on its variables was late or malformed."""

    code, http_status = "inspection_failed", 500


class QuotaExceeded(SandboxError):
    """The sandbox's disk quota is full."""

    code, http_status = "quota_exceeded", 507


class CapacityExceeded(SandboxError):
    """The service runs as many sandboxes as it is allowed to."""

    code, http_status = "capacity_exceeded", 503
    retryable = True


class ServiceUnavailable(SandboxError):
    """The sandbox service cannot be reached or failed."""

    code, http_status = "service_unavailable", 503
    retryable = True


class RequestTimeout(SandboxError):
    """The sandbox service did not answer in time."""

    code, http_status = "request_timeout", 504
    retryable = True


def _all_subclasses(cls: type[SandboxError]) -> list[type[SandboxError]]:
    found = [cls]
    for sub in cls.__subclasses__():
        found += _all_subclasses(sub)
    return found


BY_CODE: dict[str, type[SandboxError]] = {cls.code: cls for cls in _all_subclasses(SandboxError)}


def from_body(status: int, body: object) -> SandboxError:
    """The exception for an error response ``{"error": {"code", "message"}}``."""
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        code = str(body["error"].get("code", ""))
        message = str(body["error"].get("message", ""))
        cls = BY_CODE.get(code)
        if cls is not None:
            return cls(message)
        return SandboxError(f"{code}: {message}")
    if status == 401:
        return AuthenticationError()
    return ServiceUnavailable(f"sandbox service answered HTTP {status}")
