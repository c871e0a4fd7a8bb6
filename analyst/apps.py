from pathlib import Path

from django.apps import AppConfig
from django.conf import settings


class AnalystConfig(AppConfig):
    name = "analyst"

    def ready(self) -> None:
        Path(settings.FILE_UPLOAD_TEMP_DIR).mkdir(parents=True, exist_ok=True)  # Django does not make it
        from analyst.audit import sign_ins  # noqa: F401 -- connects its receivers
        from analyst.collab import access  # noqa: F401 -- connects its receivers
        from analyst.runs import member_changes  # noqa: F401 -- connects its receivers
