"""The sandbox SDK: isolated, persistent Jupyter-style kernels on sandboxd.

    from sandboxes import Sandbox
    sb = Sandbox.create(template="code-interpreter", ttl_seconds=3600)
    ex = sb.run_code("1 + 1")   # ex.text == "2"

Importing this package never imports jupyter_client or Django: it is safe in any process.
"""

from sandboxes.client.aio import AsyncCodeContext, AsyncFiles, AsyncSandbox
from sandboxes.client.payloads import (
    ContextState,
    EntryInfo,
    RestoredContext,
    RestoreReport,
    Resumed,
    SandboxInfo,
    SnapshotInfo,
    TablePreview,
    TableRows,
    VariableInfo,
    VariableList,
    WriteInfo,
)
from sandboxes.client.sync import CodeContext, Files, Sandbox
from sandboxes.errors import (
    AuthenticationError,
    CapacityExceeded,
    ContextBusy,
    ContextNotFound,
    FileNotFound,
    FileTooLarge,
    InspectionFailed,
    InvalidPath,
    InvalidRequest,
    NotFound,
    QuotaExceeded,
    RequestTimeout,
    SandboxError,
    SandboxExpired,
    SandboxNotFound,
    ServiceUnavailable,
    SnapshotCorrupt,
    SnapshotFailed,
    SnapshotNotFound,
    SnapshotTooLarge,
    TemplateNotFound,
    VariableNotFound,
)
from sandboxes.execution import Execution, ExecutionError, Result

__all__ = [
    "AsyncCodeContext",
    "AsyncFiles",
    "AsyncSandbox",
    "AuthenticationError",
    "CapacityExceeded",
    "CodeContext",
    "ContextBusy",
    "ContextNotFound",
    "ContextState",
    "EntryInfo",
    "Execution",
    "ExecutionError",
    "FileNotFound",
    "FileTooLarge",
    "Files",
    "InspectionFailed",
    "InvalidPath",
    "InvalidRequest",
    "NotFound",
    "QuotaExceeded",
    "RequestTimeout",
    "RestoreReport",
    "Resumed",
    "RestoredContext",
    "Result",
    "Sandbox",
    "SandboxError",
    "SandboxExpired",
    "SandboxInfo",
    "SandboxNotFound",
    "ServiceUnavailable",
    "SnapshotCorrupt",
    "SnapshotFailed",
    "SnapshotInfo",
    "SnapshotNotFound",
    "SnapshotTooLarge",
    "TablePreview",
    "TableRows",
    "TemplateNotFound",
    "VariableInfo",
    "VariableList",
    "VariableNotFound",
    "WriteInfo",
]
