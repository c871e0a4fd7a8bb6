"""API routes."""

from django.urls import path

from analyst.api import events, exports, files, sessions, shared, variables

urlpatterns = [
    path("sessions", sessions.sessions_collection),
    path("sessions/<uuid:session_id>", sessions.session_detail),
    path("sessions/<uuid:session_id>/messages", sessions.messages),
    path("sessions/<uuid:session_id>/cells", sessions.cells),
    path("sessions/<uuid:session_id>/cancel", sessions.cancel),
    path("sessions/<uuid:session_id>/kernel/restart", sessions.restart_kernel),
    path("sessions/<uuid:session_id>/kernel/interrupt", sessions.interrupt_kernel),
    path("sessions/<uuid:session_id>/variables", variables.variables_listing),
    path("sessions/<uuid:session_id>/variables/<str:name>", variables.variable_preview),
    path("sessions/<uuid:session_id>/variables/<str:name>/rows", variables.variable_rows),
    path("sessions/<uuid:session_id>/variables/<str:name>/rows.csv", variables.variable_csv),
    path("sessions/<uuid:session_id>/kernel/run-all", sessions.run_all),
    path("sessions/<uuid:session_id>/rerun", sessions.rerun),
    path("sessions/<uuid:session_id>/fork", sessions.fork),
    path("sessions/<uuid:session_id>/turns/<int:turn_id>/regenerate", sessions.regenerate),
    path("sessions/<uuid:session_id>/turns/<int:turn_id>/branch", sessions.branch),
    path("sessions/<uuid:session_id>/export", exports.export),
    path("sessions/<uuid:session_id>/files", files.files),
    path("sessions/<uuid:session_id>/files/download", files.download),
    path("sessions/<uuid:session_id>/files/<int:file_id>", files.file),
    path("sessions/<uuid:session_id>/files/<int:file_id>/retry", files.retry),
    path("sessions/<uuid:session_id>/files/<int:file_id>/options", files.read_options),
    path("sessions/<uuid:session_id>/events", events.session_events),
    path("artifacts/<uuid:artifact_id>", events.artifact),
    path("shared/<str:token>/events", shared.shared_events),
    path("shared/<str:token>/artifacts/<uuid:artifact_id>", shared.shared_artifact),
    path("shared/<str:token>/files", shared.shared_files),
    path("shared/<str:token>/files/download", shared.shared_download),
]
