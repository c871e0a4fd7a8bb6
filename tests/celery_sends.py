"""What this test process sends to the broker, caught at Celery's own ``send_task``: the tasks the
services start by name (analyst/dispatch.py), recorded instead of sent, or sent with options."""

from typing import Any

import pytest

from config.celery import app


def record_sends(monkeypatch: pytest.MonkeyPatch, task: str) -> list[Any]:
    """The first argument of each ``task`` sent from now on, which is not published (other tasks are)."""
    sent: list[Any] = []
    publish = app.send_task

    def send_task(name: str, args: tuple[Any, ...] = (), **options: Any) -> Any:
        if name != task:
            return publish(name, args=args, **options)
        sent.append(args[0])
        return None

    monkeypatch.setattr(app, "send_task", send_task)
    return sent


def send_with(monkeypatch: pytest.MonkeyPatch, task: str, **extra: Any) -> None:
    """Send each ``task`` from now on with ``extra`` options (a queue of the test's, shorter limits)."""
    publish = app.send_task

    def send_task(name: str, args: tuple[Any, ...] = (), **options: Any) -> Any:
        return publish(name, args=args, **options, **(extra if name == task else {}))

    monkeypatch.setattr(app, "send_task", send_task)
