"""URL routes."""

from django.contrib import admin
from django.urls import include, path

from analyst import views

urlpatterns = [
    path("", include("analyst.web.urls")),
    path("livez", views.livez, name="livez"),
    path("healthz", views.healthz, name="healthz"),
    path("metrics", views.metrics_view, name="metrics"),
    path("api/", include("analyst.api.urls")),
    path("admin/", admin.site.urls),
]
