"""A replay turn, the worker's side: its cells run one by one in the session's kernel (restarted
first for Restart and run all), each shown as a cell marked as part of the replay, stopping at
the first error; the model hears what ran, and, on another file, is asked to repair the failure.

Every cell's events are stored as it runs, as any cell's are, so a worker that dies mid-replay
loses nothing shown: the turn ends as failed (analyst.turns.turns.fail_orphans) and is not run again.

Each cell counts against the user's cells-per-minute limit as it runs, as a cell they send does:
at the limit the replay pauses before its next cell, says so and for how long, and goes on by
itself once the minute has room (Stop ends it there; what ran stays).
"""

from __future__ import annotations

import json
import time
from typing import Any, Protocol

from django.conf import settings
from django.db import transaction

from analyst.accounts import limits as user_limits
from analyst.accounts import usage
from analyst.kernels.session_kernel import SessionKernel
from analyst.models import AnalysisSession, Turn
from analyst.realtime import events
from analyst.turns import queue as turn_queue
from analyst.turns.agent import history
from analyst.turns.agent.providers import TextPart, availability
from analyst.turns.agent.tools import execution_text
from sandboxes import Execution


class TurnRunner(Protocol):
    """What a replay needs of the turn that runs it (the agent loop's TurnRunner is one)."""

    turn: Turn
    session: AnalysisSession
    kernel: SessionKernel

    def emit(self, type: str, payload: dict[str, Any]) -> None: ...

    def execute(self, code: str, *, tool_call_id: str | None) -> Execution: ...

    def check_cancelled(self) -> None: ...


RESTARTED = "The kernel was restarted: variables and imports are gone, files in the workdir are kept."
PAUSE_POLL = 1.0  # seconds between looks at the limit (and at Stop) while a replay is paused


def run_replay(runner: TurnRunner) -> None:
    plan: dict[str, Any] = json.loads(runner.turn.input)
    cells = plan["cells"]
    if plan.get("restart"):
        runner.kernel.restart()
        runner.emit("notice", {"text": RESTARTED, "code": "kernel_restarted"})
    ran: list[str] = []
    values = plan.get("parameters")  # a run's (analyst.runs.runs)
    if values and not set_parameters(runner, plan, values["before"], ran):
        return
    for index, cell in enumerate(cells, 1):
        mark = {"index": index, "of": len(cells), "by": cell["by"]}
        wait_for_room(runner, index, len(cells))
        runner.emit("cell", {"code": cell["code"], "replay": mark})
        execution = runner.execute(cell["code"], tool_call_id=None)  # raises TurnCancelled on a Stop
        ran.append(said(cell["code"], execution))
        if execution.error is not None:
            stopped(runner, plan, index, execution, ran)
            return
        if values and values["after"] == index and not set_parameters(runner, plan, values["code"], ran):
            return
    runner.emit("notice", {"text": f"All {len(cells)} cells ran.", "code": "replay_done", "of": len(cells)})
    remember(runner, plan, ran, "All of them ran.")


def set_parameters(runner: TurnRunner, plan: dict[str, Any], code: str, ran: list[str]) -> bool:
    """A run's values, set as their own cell (marked, as papermill marks its injected cell);
    False when it failed, which ends the run."""
    runner.emit("cell", {"code": code, "injected": "parameters"})
    execution = runner.execute(code, tool_call_id=None)
    ran.append(said(code, execution))
    if execution.error is None:
        return True
    error = execution.error
    failure = f"{error.name}: {error.value}"
    text = f"Stopped before the analysis's cells: its parameters could not be set ({failure})."
    runner.emit("notice", {"text": text, "code": "replay_stopped", "index": 0, "of": len(plan["cells"])})
    remember(runner, plan, ran, "Setting the parameters failed, so no cell of the analysis ran.")
    return False


def wait_for_room(runner: TurnRunner, index: int, count: int) -> None:
    """Pause before cell ``index`` while the user is at their cells-per-minute limit."""
    user = runner.turn.requested_by
    wait = user_limits.cell_wait(user)
    if not wait:
        return
    limit = user_limits.limits_for(user).cells_per_minute
    text = (
        f"Paused before cell {index} of {count}: you have run {limit} cells in the last minute, your"
        f" limit. The replay goes on by itself in about {wait} s; Stop ends it here."
    )
    runner.emit("notice", {"text": text, "code": "replay_paused", "index": index, "of": count, "wait": wait})
    while wait:
        time.sleep(min(wait, PAUSE_POLL))
        runner.check_cancelled()
        wait = user_limits.cell_wait(user)
    text = f"Going on with cell {index} of {count}."
    runner.emit("notice", {"text": text, "code": "replay_resumed", "index": index, "of": count})


def said(code: str, execution: Execution) -> str:
    output = execution_text(execution, settings.ANALYST_MODEL_OUTPUT_LIMIT)
    return f"```python\n{code}\n```\nIts output:\n{output}"


def stopped(
    runner: TurnRunner, plan: dict[str, Any], index: int, execution: Execution, ran: list[str]
) -> None:
    cells = plan["cells"]
    error = execution.error
    assert error is not None
    failure = f"{error.name}: {error.value}"
    rest = len(cells) - index
    after = f"; the {rest} after it did not run" if rest else ""
    text = f"Stopped at cell {index} of {len(cells)}, which failed ({failure}){after}."
    runner.emit("notice", {"text": text, "code": "replay_stopped", "index": index, "of": len(cells)})
    not_run = [f"```python\n{cell['code']}\n```" for cell in cells[index:]]
    outcome = f"Cell {index} failed, so the replay stopped there."
    if not_run:
        outcome += " These cells, after it, did not run:\n" + "\n".join(not_run)
    remember(runner, plan, ran, outcome)
    if plan.get("repair"):
        ask_for_repair(runner, plan, index, failure)


def remember(runner: TurnRunner, plan: dict[str, Any], ran: list[str], outcome: str) -> None:
    """What the model reads of the replay on its next turn."""
    if plan.get("restart"):
        head = "I restarted the kernel and ran again, in order, the session's cells that had succeeded."
    elif plan.get("parameters"):
        given = json.dumps(plan["parameters"]["values"])
        head = f"I ran the cells of an earlier analysis again, in order, in a fresh kernel, with {given}."
    else:
        head = f"I ran the cells of an earlier analysis again, in order, in a fresh kernel, on {plan['file']}"
        head += " (in place of the file they read first, at its path)."
    body = "\n\n".join(ran)
    history.save(runner.session, runner.turn, "user", [TextPart(f"{head}\n\n{body}\n\n{outcome}")])


def ask_for_repair(runner: TurnRunner, plan: dict[str, Any], index: int, failure: str) -> None:
    """A question for the model, queued behind this turn: repair the failing cell, then go on.
    Said instead, when the session's model cannot answer here or the budget is spent."""
    session, user = runner.session, runner.turn.requested_by
    why = availability.check(session.model).reason
    if not why:
        try:
            usage.check_budget(user)
        except usage.TokenBudgetExhausted as exc:
            why = str(exc)
    if why:
        text = f"The model was not asked to repair cell {index}: {why}"
        runner.emit("notice", {"text": text, "code": "repair_unavailable"})
        return
    on = f"on {plan['file']}" if plan.get("file") else "with this run's parameters"
    question = (
        f"Cell {index} of {len(plan['cells'])} failed when run {on}: {failure}. Repair it for"
        " this data and run it, then run the cells after it, so that the analysis completes."
    )
    with transaction.atomic():
        repair = Turn.objects.create(session=session, requested_by=user, kind=Turn.Kind.CHAT, input=question)
        events.append(session.id, "user_message", {"text": question, "repair_of": index}, turn=repair)
        # Claimed only once this replay has ended: its end enqueues it again (turns.dispatch_next).
        transaction.on_commit(lambda: turn_queue.enqueue(repair.id))
