"""Page routes."""

from django.contrib.auth import views as auth_views
from django.urls import path

from analyst.web import accounts, audit, connections, instructions, oidc, published, tokens, views, workspaces

urlpatterns = [
    path("", views.home, name="home"),
    path("accounts/signup/", accounts.signup, name="signup"),
    path("accounts/login/", accounts.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("oidc/authenticate/", oidc.Start.as_view(), name="oidc_authentication_init"),
    path("oidc/callback/", oidc.Callback.as_view(), name="oidc_authentication_callback"),
    path("sessions/", views.session_list, name="sessions"),
    path("sessions/new", views.session_new, name="session_new"),
    path("sessions/sample", views.session_sample, name="session_sample"),
    path("sessions/<uuid:session_id>/", views.session_page, name="session"),
    path("sessions/<uuid:session_id>/rename", views.session_rename, name="session_rename"),
    path("sessions/<uuid:session_id>/delete", views.session_delete, name="session_delete"),
    path("sessions/<uuid:session_id>/fork", views.session_fork, name="session_fork"),
    path("sessions/<uuid:session_id>/share", views.share_create, name="share_create"),
    path("sessions/<uuid:session_id>/share/<int:link_id>/revoke", views.share_revoke, name="share_revoke"),
    path("settings/instructions/", instructions.instructions_page, name="instructions"),
    path("connections/", connections.connections_page, name="connections"),
    path("workspaces/", workspaces.workspaces_page, name="workspaces"),
    path("workspaces/<int:workspace_id>/", workspaces.workspace_page, name="workspace"),
    path("invitations/<str:token>/", workspaces.invitation_page, name="invitation"),
    path("workspaces/<int:workspace_id>/audit/", audit.audit_page, name="workspace_audit"),
    path("settings/tokens/", tokens.token_list, name="api_tokens"),
    path("settings/tokens/<int:token_id>/revoke", tokens.token_revoke, name="api_token_revoke"),
    path("s/<str:token>/", views.shared_page, name="shared"),
    path("s/<str:token>/fork", views.shared_fork, name="shared_fork"),
    path("s/<str:token>/static", views.shared_static, name="shared_static"),
    path("r/<str:token>.json", published.published_json, name="published_json"),
    path("r/<str:token>", published.published_report, name="published"),
]
