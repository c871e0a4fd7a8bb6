"""API routes."""

from django.urls import path

from analyst.api import events, files, sessions

urlpatterns = [
    path("sessions", sessions.sessions_collection),
    path("sessions/<uuid:session_id>/messages", sessions.messages),
    path("sessions/<uuid:session_id>/cells", sessions.cells),
    path("sessions/<uuid:session_id>/cancel", sessions.cancel),
    path("sessions/<uuid:session_id>/fork", sessions.fork),
    path("sessions/<uuid:session_id>/files", files.upload),
    path("sessions/<uuid:session_id>/events", events.session_events),
    path("artifacts/<uuid:artifact_id>", events.artifact),
]
