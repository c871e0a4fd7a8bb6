"""CSV uploads: refused clearly when bad, stored whole, then placed in the session's sandbox."""

from __future__ import annotations

import json
import logging
import re
import secrets
from collections.abc import Callable

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction
from django.http import Http404

from analyst import events, placement_queue
from analyst.agent.session_kernel import SessionKernel
from analyst.artifacts import save_whole
from analyst.models import AnalysisSession, DataFile
from sandboxes import SandboxError

log = logging.getLogger(__name__)
EXTENSIONS = (".csv", ".tsv", ".txt")
SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._ -]{0,120}$")
SNIFF_BYTES = 64 << 10
SUMMARY_CODE = """
import json, pandas as pd
_df = pd.read_csv({path!r}, sep=None, engine="python") if {path!r}.endswith(".txt") else \\
    pd.read_csv({path!r}, sep="\\t" if {path!r}.endswith(".tsv") else ",")
print(json.dumps({{"rows": len(_df), "columns": [[str(c), str(t)] for c, t in _df.dtypes.items()],
                  "head": _df.head(5).to_csv(index=False)}}))
del _df
"""


class UploadRefused(Exception):
    """The file cannot be accepted; the message says why, for the person who sent it."""


class PlacementNotFailed(Exception):
    """Only a file whose placement failed can be retried."""


def check_upload(upload: UploadedFile) -> str:
    """The name the file will have in data/; UploadRefused when it is not an acceptable text table."""
    name = (upload.name or "").rsplit("/", 1)[-1].rsplit("\\", 1)[-1].strip()
    if not SAFE_NAME.match(name) or ".." in name:
        raise UploadRefused(
            "the file name may hold only letters, digits, spaces, dots, dashes and underscores"
        )
    if not name.lower().endswith(EXTENSIONS):
        raise UploadRefused(f"only {', '.join(EXTENSIONS)} files can be uploaded")
    if upload.size is None or upload.size > settings.ANALYST_MAX_UPLOAD:
        raise UploadRefused(f"the file is larger than the limit of {human_size(settings.ANALYST_MAX_UPLOAD)}")
    if upload.size == 0:
        raise UploadRefused("the file is empty")
    head = upload.read(SNIFF_BYTES)
    upload.seek(0)
    if b"\0" in head:
        raise UploadRefused("the file looks binary, not a CSV")
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        split_by_sniff = len(head) == SNIFF_BYTES and exc.start >= len(head) - 4
        if not split_by_sniff:
            raise UploadRefused("the file is not UTF-8 text; save it as UTF-8 and try again") from None
    return name


def human_size(size: int) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale:
            return f"{size / scale:.1f}".removesuffix(".0") + f" {unit}"
    return f"{size} bytes"


def do_upload(*, session: AnalysisSession, upload: UploadedFile) -> DataFile:
    """Keep our copy and enqueue its trip into the sandbox; a re-upload replaces the old file.
    Raises UploadRefused, or StorageFull (then nothing is kept, and the old file stays). The
    returned file's ``enqueued`` is False when the broker did not take its placement: it is kept
    all the same, and the reconciler sends it once the broker is back."""
    name = check_upload(upload)
    path = f"data/{name}"
    with transaction.atomic():
        for replaced in DataFile.objects.filter(session=session, path=path):
            transaction.on_commit(lambda stored=replaced.stored: stored.delete(save=False))
            replaced.delete()
        data_file = DataFile(session=session, name=name, path=path, size=upload.size)
        stem, dot, extension = name.rpartition(".")
        unique = f"{stem}_{secrets.token_hex(4)}{dot}{extension}"  # see save_whole
        save_whole(data_file.stored, unique, upload, what=name)
        data_file.save()
        data_file.enqueued = None
        transaction.on_commit(lambda: setattr(data_file, "enqueued", placement_queue.enqueue(data_file.id)))
    return data_file


def place(data_file_id: int) -> None:
    """Worker side: write the file into the sandbox and describe it, computed inside the sandbox.
    Raises SandboxError (``retryable`` when sandboxd is away or slow: place_file tries again)."""
    data_file = (
        DataFile.objects.select_related("session")
        .filter(id=data_file_id, placement=DataFile.Placement.PLACING)
        .first()
    )
    if data_file is None or not placement_queue.claim(data_file_id):
        return  # deleted meanwhile, or a duplicate delivery of a placement ended or running
    session = data_file.session
    kernel = SessionKernel(session, emit=lambda type, payload: events.append(session.id, type, payload))
    sandbox = kernel.sandbox()
    with data_file.stored.open("rb") as content:
        sandbox.files.write(data_file.path, content)
    context = sandbox.create_code_context()  # a running turn keeps the default one busy
    try:
        execution = context.run_code(SUMMARY_CODE.format(path=data_file.path), timeout=120)
    finally:
        context.close()
    describe(data_file, execution.stdout, execution.error and str(execution.error))
    DataFile.objects.filter(id=data_file.id).update(placement=DataFile.Placement.READY, placement_error="")
    data_file.placement = DataFile.Placement.READY
    events.append(session.id, "file_added", file_dict(data_file))


def place_or_retry(data_file_id: int, *, tries: int, retry: Callable[[float], BaseException]) -> None:
    """place() as try number ``tries``: while sandboxd is away or slow, call ``retry`` with the
    seconds to wait (it raises: Celery's Task.retry); after the last try, or on a failure no
    retry would mend, mark the file failed with an event saying why."""
    try:
        place(data_file_id)
    except SandboxError as exc:
        log.warning("placing file %s, try %s: %s: %s", data_file_id, tries, exc.code, exc.message)
        if exc.retryable and tries < place_tries():
            delay = retry_delay(tries - 1)
            placement_queue.retry_at(data_file_id, delay)
            raise retry(delay) from exc
        why = f"{exc.message}; tried {tries} times" if exc.retryable else exc.message
        fail_placement(data_file_id, why)
    except SoftTimeLimitExceeded:
        fail_placement(data_file_id, "placing it took longer than its time limit")
    except Exception:
        fail_placement(data_file_id, "an internal error stopped it")
        raise


def place_tries() -> int:
    """How many times a placement is tried before the file is marked failed."""
    return settings.ANALYST_PLACE_TRIES


def retry_delay(retries_done: int) -> float:
    """Seconds before the next try: doubling from ANALYST_PLACE_BACKOFF, at most a minute
    (by default 4, 8, 16, 32 s: with the SDK's 30 s timeouts, about two to three minutes)."""
    first = settings.ANALYST_PLACE_BACKOFF
    return min(first * 2**retries_done, 60.0)


def fail_placement(data_file_id: int, reason: str) -> None:
    """The file could not be placed: mark it failed and say so in an ``error`` event (once)."""
    failed = DataFile.objects.filter(id=data_file_id, placement=DataFile.Placement.PLACING).update(
        placement=DataFile.Placement.FAILED, placement_error=reason[:2000]
    )
    data_file = DataFile.objects.filter(id=data_file_id).first()
    if not failed or data_file is None:
        return
    message = f"{data_file.name} could not be put in the sandbox ({reason}). Retry it from the files panel."
    events.append(
        data_file.session_id,
        "error",
        {"code": "file_not_placed", "message": message, "file": placement_dict(data_file)},
    )


def do_retry_placement(*, session: AnalysisSession, file_id: int) -> DataFile:
    """Place a failed file again. Http404 for a file not in ``session``; PlacementNotFailed for
    a file that is in the sandbox already or on its way. ``enqueued`` as for do_upload."""
    data_file = DataFile.objects.filter(id=file_id, session=session).first()
    if data_file is None:
        raise Http404("no such file")
    with transaction.atomic():
        claimed = DataFile.objects.filter(id=file_id, placement=DataFile.Placement.FAILED).update(
            placement=DataFile.Placement.PLACING, placement_error="", placement_due=None
        )
        if not claimed:
            raise PlacementNotFailed(f"{data_file.name} is {data_file.placement}, not failed")
        data_file.enqueued = None
        transaction.on_commit(lambda: setattr(data_file, "enqueued", placement_queue.enqueue(file_id)))
    data_file.refresh_from_db()
    return data_file


def describe(data_file: DataFile, output: str, error: str | None) -> None:
    """Fill rows, columns and the model's summary from the sandbox's (untrusted) JSON report."""
    try:
        report = json.loads(output.strip().splitlines()[-1]) if output.strip() else {}
        rows, columns, head = int(report["rows"]), list(report["columns"]), str(report["head"])
        described = ", ".join(f"{str(c)[:80]} ({str(t)[:20]})" for c, t in columns[:200])
    except (ValueError, KeyError, TypeError, IndexError):
        data_file.summary = f"{data_file.path}: could not be read as a table ({error or 'no report'})."
    else:
        data_file.rows, data_file.columns = rows, len(columns)
        data_file.summary = (
            f"{data_file.path}: {rows} rows x {len(columns)} columns.\nColumns: {described}.\n"
            f"First rows:\n{head[:4000]}"
        )
    data_file.save(update_fields=["rows", "columns", "summary"])


def file_dict(data_file: DataFile) -> dict[str, object]:
    return {
        "id": data_file.id,
        "name": data_file.name,
        "path": data_file.path,
        "size": data_file.size,
        "rows": data_file.rows,
        "columns": data_file.columns,
        "summary": data_file.summary,
    }


def placement_dict(data_file: DataFile) -> dict[str, object]:
    """file_dict with where the file's placement stands: "placing", "ready" or "failed" and why."""
    return {**file_dict(data_file), "status": data_file.placement, "error": data_file.placement_error}
