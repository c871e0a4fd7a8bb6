"""Operations endpoints: /livez, /healthz and /metrics (the pages are in analyst/web)."""

import secrets

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.http import require_safe
from prometheus_client import CONTENT_TYPE_LATEST

from analyst.ops import health, metrics


@require_safe
def livez(request: HttpRequest) -> JsonResponse:
    """200 while this process serves requests; checks nothing else (for waiting on a start)."""
    return JsonResponse({"status": "ok"})


@require_safe
def healthz(request: HttpRequest) -> JsonResponse:
    """200 when every part answers, else 503 naming the parts that did not. Open to anyone."""
    checks = health.run_checks()
    ok = all(check.ok for check in checks.values())
    body = {"status": "ok" if ok else "failing", "checks": {name: c.as_dict() for name, c in checks.items()}}
    if not ok:
        body["failing"] = [name for name, check in checks.items() if not check.ok]
    return JsonResponse(body, status=200 if ok else 503)


@require_safe
def metrics_view(request: HttpRequest) -> HttpResponse:
    """Prometheus exposition; needs METRICS_TOKEN as a Bearer token when that is set."""
    if settings.METRICS_TOKEN:
        given = request.headers.get("Authorization", "").encode()
        if not secrets.compare_digest(given, f"Bearer {settings.METRICS_TOKEN}".encode()):
            refusal = "send Authorization: Bearer <METRICS_TOKEN>\n"
            return HttpResponse(refusal, status=401, content_type="text/plain")
    return HttpResponse(metrics.exposition(), content_type=CONTENT_TYPE_LATEST)
