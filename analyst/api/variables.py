"""The variables panel's endpoints: the kernel's user variables and memory, and a table's first rows."""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse
from django.views.decorators.http import require_GET

from analyst.api.auth import ApiError, api_view
from analyst.kernels import variables
from analyst.sessions import sessions
from sandboxes import InspectionFailed


@api_view
@require_GET
def variables_listing(request: HttpRequest, session_id: str) -> JsonResponse:
    """Always 200 for the owner: ``status`` says whether the kernel answered (see variables.listing)."""
    return JsonResponse(variables.listing(sessions.get_owned(request.user, session_id)))


@api_view
@require_GET
def variable_preview(request: HttpRequest, session_id: str, name: str) -> JsonResponse:
    session = sessions.get_owned(request.user, session_id)
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
