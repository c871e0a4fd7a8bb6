"""Sample data sets a new user can try the analyst on without a file of their own."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from django.contrib.auth.models import AbstractBaseUser
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import transaction

from analyst.models import AnalysisSession
from analyst.sessions import sessions
from analyst.uploads import uploads

FOLDER = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Sample:
    key: str
    file_name: str
    title: str
    summary: str
    question: str  # put in the composer, ready to send

    def read(self) -> bytes:
        return (FOLDER / self.file_name).read_bytes()


# statsmodels' macrodata (public domain; see README.md beside this file).
US_MACRO = Sample(
    key="us-macro",
    file_name="us_macro_quarterly.csv",
    title="US economy, 1959–2009 (sample)",
    summary="203 quarters of US GDP, consumption, investment, inflation, unemployment and interest rates",
    question=(
        "How did real GDP growth and unemployment move together? Plot both over time and say what stands out."
    ),
)
SAMPLES = {sample.key: sample for sample in (US_MACRO,)}


def get(key: object) -> Sample | None:
    return SAMPLES.get(key) if isinstance(key, str) else None


def do_start_sample(*, owner: AbstractBaseUser, sample: Sample, model: str | None) -> AnalysisSession:
    """A new session of ``owner`` holding the sample's file, uploaded as the user's own files are
    (so it is placed in the sandbox and described to the model the same way). Raises
    StorageFull or user_limits.LimitReached, and then no session is left behind either."""
    with transaction.atomic():
        return _start(owner=owner, sample=sample, model=model)


def _start(*, owner: AbstractBaseUser, sample: Sample, model: str | None) -> AnalysisSession:
    session = sessions.do_create(owner=owner, model=model, title=sample.title)
    upload = SimpleUploadedFile(sample.file_name, sample.read(), content_type="text/csv")
    uploads.do_upload(session=session, upload=upload)
    return session
