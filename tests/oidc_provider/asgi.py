"""The test provider as an ASGI application, for uvicorn."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.oidc_provider.settings")
application = get_asgi_application()
