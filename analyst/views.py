"""Views: the landing page and a health check."""

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render


def home(request: HttpRequest) -> HttpResponse:
    return render(request, "home.html")


def healthz(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"status": "ok"})
