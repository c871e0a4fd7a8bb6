"""A scheduled run, as beat's task starts it (schedules.start_due_run), run by the real worker and
reported by its reconciler: an e-mail to the schedule's recipients through a real SMTP server,
holding what the run printed, its first chart and the report's link; a webhook POSTed with a
signature its receiver can check, tried again while it fails; a failed run tried again first; the
run's sandbox ended once it is reported."""

from __future__ import annotations

import datetime
import hashlib
import hmac
import json
import time

import pytest
from django.utils import timezone

from analyst.models import AnalysisSession, Run
from analyst.runs import runs, schedules
from sandboxes import Sandbox, SandboxNotFound
from tests.integration.test_resume_and_fork import run_cell

CHART = "import matplotlib.pyplot as plt\nplt.bar(['a', 'b'], [3, 5])\nplt.show()"


def wait_until(check, timeout: float = 90, what: str = "it") -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"{what} did not happen within {timeout} s"
        time.sleep(0.2)


def statuses(runs_of) -> list[str]:
    return [runs.status(run) for run in runs_of.select_related("turn").order_by("due_at")]


def schedule_for(api, session, **fields) -> dict:
    made = api.post(f"/api/sessions/{session.id}/schedules", json.dumps(fields), "application/json")
    assert made.status_code == 201, made.content
    return made.json()


def verified(hook, secret: str) -> dict:
    """The webhook's body, once its signature is checked as a receiver would check it."""
    fields = dict(part.split("=", 1) for part in hook.headers["x-analyst-signature"].split(","))
    expected = hmac.new(secret.encode(), f"{fields['t']}.".encode() + hook.body, hashlib.sha256).hexdigest()
    assert hmac.compare_digest(fields["v1"], expected), "the signature does not match the body"
    assert abs(time.time() - int(fields["t"])) < 120
    return json.loads(hook.body)


def test_a_scheduled_run_is_reported_by_email_and_a_signed_webhook(stack, api, session):
    inbox, webhooks = stack
    run_cell(api, session, "top = parameter('top', 3)\nprint('top is', top)")
    run_cell(api, session, CHART)
    made = schedule_for(
        api,
        session,
        cron="0 7 * * MON",
        timezone="Europe/Paris",
        parameters={"top": 8},
        notify_emails=["ann@example.test", "bo@example.test"],
        webhook_url=f"{webhooks.url}/hooks/analyst",
    )

    run = schedules.start_due_run(made["id"])  # what beat's task does at 07:00 on a Monday
    assert run is not None
    wait_until(lambda: inbox.messages and webhooks.received, what="the e-mail and the webhook")

    recipients, message = inbox.messages[0]
    assert sorted(recipients) == ["ann@example.test", "bo@example.test"]
    assert message["Subject"].strip() == f"Scheduled run of “{session.title}” done"
    assert message["From"] == "runs@analyst.test"
    text = message.get_body(preferencelist=("plain",)).get_content()
    assert "top is 8" in text and f"http://analyst.test/sessions/{run.session_id}/" in text
    html = message.get_body(preferencelist=("html",)).get_content()
    assert 'src="cid:chart"' in html and "top is 8" in html
    images = [part for part in message.walk() if part.get_content_type() == "image/png"]
    assert len(images) == 1 and images[0]["Content-ID"] == "<chart>"
    assert images[0].get_content().startswith(b"\x89PNG\r\n\x1a\n")

    hook = webhooks.received[0]
    assert hook.path == "/hooks/analyst" and hook.headers["content-type"] == "application/json"
    body = verified(hook, made["webhook_secret"])
    assert body["event"] == "run.done" and body["run"]["id"] == str(run.id)
    assert body["run"]["parameters"] == {"top": 8} and body["run"]["schedule"] == made["id"]
    assert "top is 8" in body["printed"] and body["session"]["id"] == str(session.id)
    tampered = type(hook)(hook.path, hook.headers, hook.body.replace(b"top is 8", b"top is 9"))
    try:
        verified(tampered, made["webhook_secret"])
    except AssertionError:
        pass
    else:
        raise AssertionError("a changed body passed the signature check")

    time.sleep(2)  # reconciler passes go on: the run is reported once
    assert len(inbox.messages) == 1 and len(webhooks.received) == 1
    # The run's kernel has done its work: ended, not left paused on sandboxd's disk.
    used = AnalysisSession.objects.get(id=run.session_id).sandbox_id
    assert used
    with pytest.raises(SandboxNotFound):
        Sandbox.connect(used).close()
    listed = api.get(f"/api/sessions/{session.id}/runs").json()["runs"]
    assert [(r["id"], r["schedule"], r["status"]) for r in listed] == [(str(run.id), made["id"], "done")]


def test_a_failed_run_is_tried_again_then_reported_as_failed(stack, api, session):
    inbox, webhooks = stack
    run_cell(api, session, "divisor = parameter('divisor', 2)\nprint(10 // divisor)")
    made = schedule_for(
        api,
        session,
        cron="* * * * *",
        parameters={"divisor": 0},
        retries=1,
        notify_emails=["ann@example.test"],
        webhook_url=f"{webhooks.url}/hooks",
    )
    first = schedules.start_due_run(made["id"])
    assert first is not None
    wait_until(lambda: inbox.messages and webhooks.received, what="the report of the second try")
    tries = list(Run.objects.filter(schedule_id=made["id"]).order_by("attempt"))
    assert [(r.attempt, r.due_at) for r in tries] == [(1, first.due_at), (2, first.due_at)]
    assert inbox.messages[0][1]["Subject"].strip() == f"Scheduled run of “{session.title}” failed"
    assert "ZeroDivisionError" in inbox.messages[0][1].get_body(preferencelist=("plain",)).get_content()
    body = verified(webhooks.received[0], made["webhook_secret"])
    assert body["event"] == "run.failed" and body["run"]["attempt"] == 2
    time.sleep(2)
    assert len(inbox.messages) == 1 and Run.objects.filter(schedule_id=made["id"]).count() == 2


def test_a_webhook_that_fails_is_tried_again_with_the_same_body(stack, api, session):
    _, webhooks = stack
    webhooks.statuses[:] = [500, 503]  # then 200
    run_cell(api, session, "print('hello')")
    made = schedule_for(api, session, cron="* * * * *", webhook_url=f"{webhooks.url}/flaky")
    assert schedules.start_due_run(made["id"]) is not None
    wait_until(lambda: len(webhooks.received) == 3, timeout=120, what="the third delivery")
    bodies = {hook.body for hook in webhooks.received}
    assert len(bodies) == 1
    assert verified(webhooks.received[-1], made["webhook_secret"])["event"] == "run.done"


@pytest.mark.slow
def test_beat_starts_a_run_each_minute_and_its_restarts_neither_lose_nor_double_one(
    stack, api, session, beat
):
    """Real beat on a schedule of every minute: a run per minute; beat killed, and started again
    after a due time passed while it was down, sends that due time's run (not lost); started again
    within the same minute, it starts nothing more (not doubled)."""
    run_cell(api, session, "import time\nprint('tick', int(time.time()) // 60)")
    made = schedule_for(api, session, cron="* * * * *")
    published = api.post(f"/api/sessions/{session.id}/publish", "{}", "application/json")
    assert published.status_code == 201, published.content
    runs_of = Run.objects.filter(schedule_id=made["id"])

    first_beat = beat()
    wait_until(lambda: runs_of.count() == 1, timeout=75, what="the first scheduled run")
    first_beat.kill()
    first_due = runs_of.get().due_at
    # Down across the next due time, then back in the minute after it.
    while timezone.now() < first_due + datetime.timedelta(minutes=1, seconds=5):
        time.sleep(0.5)
    second_beat = beat()
    wait_until(lambda: runs_of.count() == 2, timeout=60, what="the run due while beat was down")
    second_beat.kill()
    beat()  # started again within the same minute: that due time has its run
    missed = runs_of.order_by("-due_at").first()
    assert missed.due_at == first_due + datetime.timedelta(minutes=1)
    while timezone.now() < missed.due_at + datetime.timedelta(seconds=55):
        time.sleep(0.5)
    assert runs_of.count() == 2 and runs_of.filter(due_at=missed.due_at).count() == 1
    wait_until(lambda: runs_of.count() == 3, timeout=30, what="the next minute's run")
    assert sorted(set(runs_of.values_list("due_at", flat=True))) == [
        first_due + datetime.timedelta(minutes=n) for n in range(3)
    ]
    # Each run done is a version of the published report, which shows the latest.
    deadline = time.monotonic() + 60
    while set(statuses(runs_of)) != {"done"}:
        assert time.monotonic() < deadline, f"the runs did not all end done: {statuses(runs_of)}"
        time.sleep(0.5)
    assert api.get(f"/api/sessions/{session.id}/publish").json()["versions"] == 3
    latest = runs_of.order_by("-due_at").first()
    page = api.get(published.json()["url"])
    assert page.status_code == 200
    assert f"tick {int(latest.due_at.timestamp()) // 60}" in page.content.decode()
