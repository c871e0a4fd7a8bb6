"""With no EMAIL_HOST, a scheduled run's e-mail is a line in the log saying what would have gone
out: not sent, and not dumped whole (the console backend wrote its chart as base64 into
`make run`'s terminal every minute of an every-minute schedule)."""

from __future__ import annotations

import logging

from django.core import mail
from django.core.mail import EmailMultiAlternatives
from django.test import override_settings

PNG = b"\x89PNG\r\n\x1a\n" + b"\0" * 2000


@override_settings(EMAIL_BACKEND="analyst.lib.mail_log.EmailBackend")
def test_an_email_is_one_line_of_the_log(caplog):
    message = EmailMultiAlternatives("Scheduled run of “Sales” done", "top is 8", to=["ann@example.test"])
    message.attach("chart.png", PNG, "image/png")
    with caplog.at_level(logging.WARNING, logger="analyst.mail"):
        assert message.send() == 0
    (record,) = caplog.records
    assert record.getMessage() == (
        "e-mail not sent (set EMAIL_HOST to send it): to ann@example.test: Scheduled run of “Sales” done"
    )
    assert not hasattr(mail, "outbox") or mail.outbox == []


def test_it_is_the_default_without_a_mail_server():
    from config import settings as defaults

    assert defaults.EMAIL_HOST == "" or defaults.EMAIL_BACKEND.endswith("smtp.EmailBackend")
    if not defaults.EMAIL_HOST:
        assert defaults.EMAIL_BACKEND == "analyst.lib.mail_log.EmailBackend"
