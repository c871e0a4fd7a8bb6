"""The ASGI entry point: Django for HTTP, the MCP server at /mcp, Channels for WebSockets
(origin-checked, logged in)."""

import os

from django.core.asgi import get_asgi_application

from analyst.web.security_headers import StaticFilesWithSecurityHeaders

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
# Static files (our modules and the vendored libraries) come from this process: no CDN, no
# separate file server needed to run.
django_application = StaticFilesWithSecurityHeaders(get_asgi_application())

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402

from analyst.mcp.http import with_mcp  # noqa: E402
from analyst.uploads.upload_limit import BodyLimit  # noqa: E402
from analyst.web.origin import SameOriginValidator  # noqa: E402
from analyst.web.routing import websocket_urlpatterns  # noqa: E402

application = ProtocolTypeRouter(
    {
        "http": with_mcp(BodyLimit(django_application)),
        "websocket": SameOriginValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns))),
    }
)
