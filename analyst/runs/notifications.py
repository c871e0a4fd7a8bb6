"""What a scheduled run's end sends: an e-mail to the schedule's recipients (Django's e-mail
backends) and a signed JSON POST to its webhook.

The webhook's body is signed as Stripe and GitHub sign theirs: ``X-Analyst-Signature: t=<unix
time>,v1=<hex HMAC-SHA256 of "<t>.<body>" under the schedule's secret>``, so a receiver checks
both the sender and the age. A webhook goes only to a public address unless
ANALYST_WEBHOOK_PRIVATE_ADDRESSES allows private ones: the URL is the user's, the request is
ours, and it must not reach the services beside us (Redis, sandboxd, a cloud's metadata).
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import json
import socket
import time
from dataclasses import dataclass
from email.mime.image import MIMEImage
from typing import Any
from urllib.parse import urlsplit

import httpx
from django.conf import settings
from django.core.mail import EmailMultiAlternatives
from django.utils.html import escape

from analyst.models import Artifact, Event, Run, Schedule
from analyst.runs import runs

SIGNATURE_HEADER = "X-Analyst-Signature"
OUTPUT_CHARS = 4_000  # of printed text, in an e-mail and a webhook's body
WEBHOOK_TIMEOUT = 10.0


class WebhookRefused(Exception):
    """The webhook's URL names an address it may not reach; not tried again."""


@dataclass(frozen=True)
class Summary:
    """A run's end, as the notifications tell it."""

    run: Run
    status: str
    printed: str
    first_chart: bytes | None
    link: str

    @property
    def subject(self) -> str:
        outcome = "done" if self.status == "done" else "failed"
        return f"Scheduled run of “{self.run.source.title}” {outcome}"


def summary(run: Run) -> Summary:
    printed, chart = [], None
    for event in Event.objects.filter(session=run.session, type__in=["stdout", "result", "error"]):
        if event.type == "stdout":
            printed.append(str(event.payload.get("text", "")))
        elif event.type == "error" and "traceback" in event.payload:
            printed.append(f"{event.payload.get('name', '')}: {event.payload.get('value', '')}\n")
        elif event.type == "result" and chart is None:
            chart = _chart(run, event.payload)
    text = "".join(printed)
    if len(text) > OUTPUT_CHARS:
        text = text[:OUTPUT_CHARS] + f"\n[… {len(text) - OUTPUT_CHARS:,} more characters in the report]"
    return Summary(run, runs.status(run), text, chart, _link(run))


def _chart(run: Run, payload: dict[str, Any]) -> bytes | None:
    stored = (payload.get("artifacts") or {}).get("image/png")
    if not isinstance(stored, dict):
        return None
    artifact = Artifact.objects.filter(id=str(stored.get("id")), session=run.session).first()
    if artifact is None:
        return None
    with artifact.file.open("rb") as file:
        return file.read()  # checked to be a PNG when it was stored (analyst.files.artifacts)


def _link(run: Run) -> str:
    base = settings.ANALYST_PUBLIC_URL.rstrip("/")
    publication = getattr(run.source, "publication", None)
    path = f"/r/{publication.token}" if publication is not None else f"/sessions/{run.session_id}/"
    return f"{base}{path}"


def send_email(schedule: Schedule, told: Summary) -> int:
    """The e-mail to the schedule's recipients: the outcome, what the run printed, its first
    chart inline, and the link to its report. How many were sent (0 or 1)."""
    if not schedule.notify_emails:
        return 0
    parameters = json.dumps(told.run.parameters, ensure_ascii=False)
    text = f"{told.subject}.\n\nParameters: {parameters}\n\n{told.printed}\n\nThe report: {told.link}\n"
    html = (
        f"<p>{escape(told.subject)}.</p><p>Parameters: <code>{escape(parameters)}</code></p>"
        f"<pre>{escape(told.printed)}</pre>"
        + ('<p><img src="cid:chart" alt="The run\'s first chart"></p>' if told.first_chart else "")
        + f'<p><a href="{escape(told.link)}">The report</a></p>'
    )
    message = EmailMultiAlternatives(told.subject, text, to=schedule.notify_emails)
    message.attach_alternative(html, "text/html")
    if told.first_chart:
        image = MIMEImage(told.first_chart, "png")
        image.add_header("Content-ID", "<chart>")
        image.add_header("Content-Disposition", "inline", filename="chart.png")
        message.attach(image)
    message.mixed_subtype = "related"
    return message.send()


def webhook_body(told: Summary) -> bytes:
    run = told.run
    body = {
        "event": f"run.{told.status}",
        "run": {
            "id": str(run.id),
            "status": told.status,
            "parameters": run.parameters,
            "schedule": run.schedule_id,
            "due_at": run.due_at.isoformat() if run.due_at else None,
            "attempt": run.attempt,
        },
        "session": {"id": str(run.source_id), "title": run.source.title},
        "printed": told.printed,
        "report": told.link,
    }
    return json.dumps(body, ensure_ascii=False).encode()


def signature(secret: str, timestamp: int, body: bytes) -> str:
    digest = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()
    return f"t={timestamp},v1={digest}"


def post_webhook(url: str, secret: str, body: bytes) -> None:
    """POST the signed body; WebhookRefused for an address it may not reach, httpx.HTTPError
    (to be tried again) for a failure or an answer that is not 2xx."""
    check_address(url)
    timestamp = int(time.time())
    headers = {
        "Content-Type": "application/json",
        SIGNATURE_HEADER: signature(secret, timestamp, body),
        "User-Agent": "ai-data-analyst-webhook/1",
    }
    with httpx.Client(timeout=WEBHOOK_TIMEOUT, follow_redirects=False, trust_env=False) as client:
        client.post(url, content=body, headers=headers).raise_for_status()


def check_address(url: str) -> None:
    """Every address the URL's host resolves to must be public (unless the setting allows
    private ones). The address may change between this check and the request (DNS
    rebinding): left for an egress proxy to close."""
    host = urlsplit(url).hostname or ""
    if settings.ANALYST_WEBHOOK_PRIVATE_ADDRESSES:
        return
    try:
        found = {info[4][0] for info in socket.getaddrinfo(host, None)}
    except (socket.gaierror, UnicodeError):
        raise WebhookRefused(f"the webhook's host {host!r} does not resolve") from None
    for address in found:
        if not ipaddress.ip_address(address.split("%")[0]).is_global:
            raise WebhookRefused(f"the webhook's host {host!r} is a private address ({address})")
