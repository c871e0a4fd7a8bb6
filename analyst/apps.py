from django.apps import AppConfig


class AnalystConfig(AppConfig):
    name = "analyst"
