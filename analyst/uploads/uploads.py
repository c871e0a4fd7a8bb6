"""Uploads, the web side: a file refused clearly when it cannot be taken, else stored whole and
sent to be placed in the session's sandbox; corrections to how it is read; deleting one.

Nothing here opens a file's content: untrusted files are parsed only inside the sandbox
(analyst.uploads.placements and analyst/files/inside_sandbox/)."""

from __future__ import annotations

import codecs
import re
import secrets
import unicodedata
from typing import Any

from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction
from django.http import Http404

from analyst.accounts import limits as user_limits
from analyst.accounts import workspace_storage
from analyst.audit import records as audit_records
from analyst.files.artifacts import save_whole
from analyst.files.reading import is_packed
from analyst.kernels.session_files import live_sandbox
from analyst.lib.sizes import human_size
from analyst.models import AnalysisSession, DataFile
from analyst.realtime import events
from analyst.uploads import placement_queue, shared_files
from sandboxes import SandboxError

TABLES = (".csv", ".tsv", ".txt", ".xlsx", ".xlsm", ".xls", ".parquet", ".json", ".jsonl", ".ndjson")
TABLES += (".feather", ".arrow")
EXTENSIONS = (*TABLES, *(f"{extension}.gz" for extension in TABLES), ".zip")
NAME = re.compile(r"^\w[\w .,()+&'=@#~\[\]-]{0,119}$")
DELIMITERS = {",", ";", "\t", "|", " ", ":"}
DECIMALS = {",", "."}
MAX_HEADER_ROW = 50


class UploadRefused(Exception):
    """The file cannot be accepted; the message says why, for the person who sent it."""


class PlacementNotFailed(Exception):
    """Only a file whose placement failed can be retried."""


class StillReading(Exception):
    """The file is being read into the sandbox; its reading can be changed once that is over."""


class BadOptions(Exception):
    """Read options that are not one of the choices; the message says which and why."""


def check_upload(upload: UploadedFile) -> str:
    """The name the file will have in data/; UploadRefused when it cannot be taken."""
    name = (upload.name or "").replace("\\", "/").rsplit("/", 1)[-1].strip()
    if any(unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp") for c in name):
        raise UploadRefused("the file name holds control characters; rename the file and try again")
    if not NAME.match(name) or ".." in name:
        raise UploadRefused(
            "the file name may hold only letters, digits, spaces and . , ( ) [ ] + & ' = @ # ~ - _,"
            " must not start with a dot or a sign, and is at most 120 characters"
        )
    if not name.lower().endswith(EXTENSIONS):
        raise UploadRefused(f"this kind of file cannot be read as a table; accepted: {accepted_kinds()}")
    if upload.size is None or upload.size > settings.ANALYST_MAX_UPLOAD:
        raise UploadRefused(f"the file is larger than the limit of {human_size(settings.ANALYST_MAX_UPLOAD)}")
    if upload.size == 0:
        raise UploadRefused("the file is empty")
    return name


def accepted_kinds() -> str:
    return ", ".join(TABLES) + " (each also as .gz), .zip"


def do_upload(*, session: AnalysisSession, upload: UploadedFile) -> DataFile:
    """Keep our copy and enqueue its trip into the sandbox; a re-upload replaces the old file.
    Raises UploadRefused, user_limits.LimitReached (past the owner's storage limit, or its team
    workspace's), or
    StorageFull (then nothing is kept, and the old file stays). The
    returned file's ``enqueued`` is False when the broker did not take its placement: it is kept
    all the same, and the reconciler sends it once the broker is back."""
    name = check_upload(upload)
    path = f"data/{name}"
    with transaction.atomic():
        shared_files.hold_files_of(session.id)  # no fork copies the replaced file meanwhile
        for replaced in DataFile.objects.filter(session=session, path=path):
            replaced.delete()
            shared_files.release([replaced.stored])  # unless a fork's copy still names it
        user_limits.check_storage(session.owner, adding=upload.size, what=name)  # the replaced one freed
        workspace_storage.check_storage(session, adding=upload.size, what=name)
        data_file = DataFile(session=session, name=name, path=path, size=upload.size)
        stem, dot, extension = name.rpartition(".")
        unique = f"{stem}_{secrets.token_hex(4)}{dot}{extension}"  # see save_whole
        save_whole(data_file.stored, unique, upload, what=name)
        data_file.save()
        enqueue_on_commit(data_file)
        detail = {"file": data_file.id, "name": name, "size": upload.size}
        audit_records.record_for_session("upload", session, detail=detail)
    return data_file


def enqueue_on_commit(data_file: DataFile) -> None:
    data_file.enqueued = None
    transaction.on_commit(lambda: setattr(data_file, "enqueued", placement_queue.enqueue(data_file.id)))


def owned_file(session: AnalysisSession, file_id: int) -> DataFile:
    data_file = DataFile.objects.filter(id=file_id, session=session).first()
    if data_file is None:
        raise Http404("no such file")
    return data_file


def do_retry_placement(*, session: AnalysisSession, file_id: int) -> DataFile:
    """Place a failed file again. Http404 for a file not in ``session``; PlacementNotFailed for
    a file that is in the sandbox already or on its way. ``enqueued`` as for do_upload."""
    data_file = owned_file(session, file_id)
    with transaction.atomic():
        if not _back_to_placing(file_id, DataFile.Placement.FAILED):
            raise PlacementNotFailed(f"{data_file.name} is {data_file.placement}, not failed")
        enqueue_on_commit(data_file)
    data_file.refresh_from_db()
    return data_file


def do_set_read_options(*, session: AnalysisSession, file_id: int, options: Any) -> DataFile:
    """Read the file again the way the user says (delimiter, encoding, decimal, header row,
    sheet; None for "detect"). BadOptions, StillReading, Http404; ``enqueued`` as for do_upload."""
    data_file = owned_file(session, file_id)
    chosen = read_options(options)
    with transaction.atomic():
        DataFile.objects.filter(id=file_id).update(read_options=chosen)
        if not _back_to_placing(file_id, DataFile.Placement.READY, DataFile.Placement.FAILED):
            raise StillReading(f"{data_file.name} is still being read into the sandbox; try again then")
        enqueue_on_commit(data_file)
    data_file.refresh_from_db()
    return data_file


def _back_to_placing(file_id: int, *states: str) -> bool:
    return bool(
        DataFile.objects.filter(id=file_id, placement__in=states).update(
            placement=DataFile.Placement.PLACING, placement_error="", placement_due=None
        )
    )


def read_options(options: Any) -> dict[str, Any]:
    """The corrections in ``options`` that are set, each checked; BadOptions says what is wrong."""
    if not isinstance(options, dict):
        raise BadOptions("send the options as a JSON object")
    unknown = set(options) - {"delimiter", "encoding", "decimal", "header_row", "sheet"}
    if unknown:
        raise BadOptions(f"unknown options: {', '.join(sorted(unknown))}")
    chosen = {key: value for key, value in options.items() if value not in (None, "", "auto")}
    if "delimiter" in chosen and chosen["delimiter"] not in DELIMITERS:
        raise BadOptions("the delimiter must be one of , ; | : a tab or a space")
    if "decimal" in chosen and chosen["decimal"] not in DECIMALS:
        raise BadOptions("the decimal mark must be ',' or '.'")
    if "encoding" in chosen:
        chosen["encoding"] = _encoding(chosen["encoding"])
    header = chosen.get("header_row")
    if header is not None and header != "none":
        if isinstance(header, bool) or not isinstance(header, int) or not 0 <= header <= MAX_HEADER_ROW:
            raise BadOptions(f"the header row must be 'none' or a row number from 0 to {MAX_HEADER_ROW}")
    if "sheet" in chosen and (not isinstance(chosen["sheet"], str) or len(chosen["sheet"]) > 100):
        raise BadOptions("the sheet must be a sheet's name")
    return chosen


def _encoding(name: Any) -> str:
    try:
        return codecs.lookup(str(name)[:40]).name
    except LookupError:
        raise BadOptions(f"{str(name)[:40]!r} is not an encoding Python knows") from None


def do_delete(*, session: AnalysisSession, file_id: int) -> None:
    """The upload gone from the sandbox (when it runs), our storage and the session; the model
    hears of it on its next turn (analyst.turns.agent.prompt), a later restore removes it again."""
    data_file = owned_file(session, file_id)
    paths = sandbox_paths(data_file)
    with live_sandbox(session) as sandbox:
        for path in paths if sandbox is not None else ():
            try:
                sandbox.files.remove(path)
            except SandboxError:
                pass  # the sandbox went meanwhile: its next one is made or restored without it
    with transaction.atomic():
        shared_files.hold_files_of(session.id)  # no fork copies it meanwhile
        data_file.delete()
        shared_files.release([data_file.stored])
        removed = {"id": file_id, "name": data_file.name, "path": data_file.path, "paths": paths}
        events.append(session.id, "file_removed", removed)


def sandbox_paths(data_file: DataFile) -> list[str]:
    """Where the upload lives in the sandbox: its path, and for a zip the folder it unpacked to."""
    if is_packed(data_file):
        return [data_file.path, data_file.path[: -len(".zip")]]
    return [data_file.path]
