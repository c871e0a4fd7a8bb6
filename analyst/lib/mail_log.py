"""The e-mail backend of a server with no mail server set (EMAIL_HOST empty): each message is one
line in the log saying what would have gone out, not sent, and not dumped whole (Django's console
backend writes a scheduled run's chart as base64 into `make run`'s terminal every time)."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from django.core.mail import EmailMessage
from django.core.mail.backends.base import BaseEmailBackend

log = logging.getLogger("analyst.mail")


class EmailBackend(BaseEmailBackend):
    def send_messages(self, email_messages: Sequence[EmailMessage]) -> int:
        for message in email_messages:
            log.warning(
                "e-mail not sent (set EMAIL_HOST to send it): to %s: %s",
                ", ".join(message.to),
                message.subject,
            )
        return 0
