"""The variables panel's endpoints: the kernel's user variables and memory, and a table's first
rows; and the grid's: a table's pages over the whole frame, and its CSV."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from django.conf import settings
from django.http import HttpRequest, JsonResponse, StreamingHttpResponse
from django.views.decorators.http import require_GET

from analyst.api.auth import ApiError, api_view
from analyst.audit import records as audit_records
from analyst.kernels import table_rows, variables
from analyst.sessions import sessions
from sandboxes import InspectionFailed


@api_view
@require_GET
def variables_listing(request: HttpRequest, session_id: str) -> JsonResponse:
    """Always 200 for the owner: ``status`` says whether the kernel answered (see variables.listing)."""
    return JsonResponse(variables.listing(sessions.get_for(request.user, session_id)))


@api_view
@require_GET
def variable_preview(request: HttpRequest, session_id: str, name: str) -> JsonResponse:
    session = sessions.get_for(request.user, session_id)
    try:
        return JsonResponse(variables.preview(session, name))
    except variables.NotATable as exc:
        raise ApiError(404, "not_a_table", str(exc)) from None
    except variables.NoKernel as exc:
        raise ApiError(409, "no_kernel", str(exc)) from None
    except variables.KernelBusy as exc:
        raise ApiError(409, "kernel_busy", str(exc)) from None
    except InspectionFailed as exc:
        raise ApiError(502, "inspection_failed", str(exc)) from None


@api_view
@require_GET
def variable_rows(request: HttpRequest, session_id: str, name: str) -> JsonResponse:
    """?offset=&limit=&sort=<column>&desc=1&filter=<text>&token=: see table_rows.page."""
    session = sessions.get_for(request.user, session_id)
    with _grid_errors():
        offset, limit = _whole(request, "offset", 0), _whole(request, "limit", 50)
        return JsonResponse(table_rows.page(session, _query(request, name), offset=offset, limit=limit))


@api_view
@require_GET
def variable_csv(request: HttpRequest, session_id: str, name: str) -> StreamingHttpResponse:
    """The whole table, filtered and sorted as the grid shows it, as a streamed CSV download."""
    session = sessions.get_for(request.user, session_id)
    with _grid_errors():
        limit = settings.ANALYST_GRID_CSV_MAX_BYTES
        chunks = table_rows.csv_chunks(session, _query(request, name), max_bytes=limit)
    audit_records.record_for_session("download", session, detail={"variable": name, "format": "csv"})
    response = StreamingHttpResponse(chunks, content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{name}.csv"'  # an identifier: checked
    response["X-Content-Type-Options"] = "nosniff"
    response["Content-Security-Policy"] = "sandbox; default-src 'none'"
    return response


def _query(request: HttpRequest, name: str) -> table_rows.Query:
    return table_rows.Query(
        name=name,
        token=request.GET.get("token") or None,
        sort=request.GET.get("sort") or None,
        desc=request.GET.get("desc", "") in ("1", "true"),
        filter=request.GET.get("filter", ""),
    )


def _whole(request: HttpRequest, key: str, default: int) -> int:
    raw = request.GET.get(key)
    if raw is None:
        return default
    if not (raw.isascii() and raw.isdigit()) or len(raw) > 18:
        raise table_rows.BadQuery(f"{key} must be a whole number")
    return int(raw)


@contextlib.contextmanager
def _grid_errors() -> Iterator[None]:
    try:
        yield
    except variables.NotATable as exc:
        raise ApiError(404, "not_a_table", str(exc)) from None
    except table_rows.BadQuery as exc:
        raise ApiError(400, "invalid_request", str(exc)) from None
    except table_rows.CsvTooLarge as exc:
        raise ApiError(
            413, "csv_too_large", f"{exc}: filter the table, or raise ANALYST_GRID_CSV_MAX_BYTES"
        ) from None
    except variables.NoKernel as exc:
        raise ApiError(409, "no_kernel", str(exc)) from None
    except variables.KernelBusy as exc:
        raise ApiError(409, "kernel_busy", str(exc)) from None
    except InspectionFailed as exc:
        raise ApiError(502, "inspection_failed", str(exc)) from None
