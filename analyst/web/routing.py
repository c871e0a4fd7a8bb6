"""WebSocket routes."""

from django.urls import path

from analyst.web.consumers import SessionEventsConsumer, SharedEventsConsumer

websocket_urlpatterns = [
    path("ws/sessions/<uuid:session_id>/", SessionEventsConsumer.as_asgi()),
    path("ws/shared/<str:token>/", SharedEventsConsumer.as_asgi()),
]
