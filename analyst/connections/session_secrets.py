"""A session's secret environment variables (an API key for a library): added, listed by name,
deleted; stored sealed. And every secret of a session at once, for the sandbox and for redaction."""

from __future__ import annotations

import re

from django.db import transaction

from analyst.audit import records as audit_records
from analyst.connections import sealing
from analyst.connections.attachments import secrets_of, session_env
from analyst.connections.redaction import MIN_LENGTH, Redactor
from analyst.models import AnalysisSession, SessionSecret

NAME = re.compile(r"[A-Z_][A-Z0-9_]*")
MAX_NAME = 128  # SessionSecret.name's column
MAX_VALUE = 16 << 10
MAX_PER_SESSION = 32
# Variables the kernel's own process depends on: a session may not replace them.
RESERVED = frozenset({"HOME", "PATH", "PWD", "SHELL", "USER", "LANG", "TMPDIR"})
RESERVED_PREFIXES = ("LD_", "PYTHON", "JUPYTER", "JPY_", "IPY", "MPL", "PIP_", "SANDBOX")


class BadSecret(ValueError):
    """A name or value refused, with a sentence saying why."""


def check_secret(*, session: AnalysisSession, name: object, value: object) -> tuple[str, str]:
    """The (name, value) to store, checked. Raises BadSecret."""
    if not isinstance(name, str) or not NAME.fullmatch(name) or len(name) > MAX_NAME:
        raise BadSecret(
            "'name' must be an environment variable's name: capital letters, digits and _, not starting"
            f" with a digit, at most {MAX_NAME} characters (e.g. OPENAI_API_KEY)"
        )
    if name in RESERVED or name.startswith(RESERVED_PREFIXES):
        raise BadSecret(f"{name} is a variable the kernel itself relies on; choose another name")
    if not isinstance(value, str) or not value:
        raise BadSecret("'value' must be a non-empty string")
    if len(value) < MIN_LENGTH:
        raise BadSecret(
            f"'value' must be at least {MIN_LENGTH} characters: a shorter one could not be kept out of"
            " outputs"
        )
    if len(value) > MAX_VALUE or "\0" in value:
        raise BadSecret(f"'value' must be at most {MAX_VALUE} characters, with no NUL character")
    if not session.secrets.filter(name=name).exists() and session.secrets.count() >= MAX_PER_SESSION:
        raise BadSecret(f"a session has at most {MAX_PER_SESSION} secrets; delete one first")
    return name, value


def do_set_secret(*, session: AnalysisSession, name: str, value: str) -> None:
    """Store the secret (checked by check_secret), replacing the value of one of the same name.
    The kernel gets it at the next turn's start (egress.apply)."""
    with transaction.atomic():
        SessionSecret.objects.update_or_create(
            session=session, name=name, defaults={"value_sealed": sealing.seal(value)}
        )
        audit_records.record_for_session("secret_set", session, detail={"name": name})


def do_delete_secret(*, session: AnalysisSession, name: str) -> bool:
    """False when the session had no secret of that name."""
    deleted, _ = session.secrets.filter(name=name).delete()
    if deleted:
        audit_records.record_for_session("secret_delete", session, detail={"name": name})
    return bool(deleted)


def secret_names(session: AnalysisSession) -> list[str]:
    return list(session.secrets.order_by("name").values_list("name", flat=True))


def all_secrets(session: AnalysisSession) -> dict[str, str]:
    """{name: value in the clear}: the attached connections' secrets (by connection name) and
    the session's secret variables (by variable name; the two never clash, lower and upper case)."""
    return {**secrets_of(session), **session_env(session)}


def redactor_for(session: AnalysisSession) -> Redactor:
    """The Redactor for everything the session shows, as of now: make it once per turn or
    request (it unseals every secret of the session)."""
    return Redactor(all_secrets(session))
