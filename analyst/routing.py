"""WebSocket routes."""

from django.urls import path

from analyst.consumers import SessionEventsConsumer

websocket_urlpatterns = [
    path("ws/sessions/<uuid:session_id>/", SessionEventsConsumer.as_asgi()),
]
