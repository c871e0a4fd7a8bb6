from django.apps import AppConfig


class SandboxesConfig(AppConfig):
    """Registered only for its management command; the service itself never imports Django."""

    name = "sandboxes"
