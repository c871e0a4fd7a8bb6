"""One turn: stream the model's answer, run its tool calls in the session's kernel, loop."""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import closing
from typing import Any

from django.conf import settings

from analyst.accounts import limits as user_limits
from analyst.accounts import usage, workspace_storage
from analyst.connections.session_secrets import redactor_for
from analyst.files.artifacts import store_bundle
from analyst.kernels import snapshots as kernel_snapshots
from analyst.kernels.session_kernel import SessionKernel, interrupt_cell
from analyst.models import AnalysisSession, Message, Turn
from analyst.ops import metrics
from analyst.realtime import events
from analyst.trust import approvals, kernel_values, privacy, tracing
from analyst.turns.agent import history, model_client, replay
from analyst.turns.agent.cell_events import CellEventBudget
from analyst.turns.agent.lease import Lease
from analyst.turns.agent.private_view import as_model_reads, values_withheld
from analyst.turns.agent.prompt import system_prompt
from analyst.turns.agent.providers import (
    ChatMessage,
    Finished,
    Provider,
    ProviderError,
    Retrying,
    StreamEvent,
    TextDelta,
    TextPart,
    ToolCall,
    ToolCallPart,
    ToolResultPart,
)
from analyst.turns.agent.secret_view import without_secrets
from analyst.turns.agent.tools import RUN_PYTHON, execution_text, run_python_for, tool_result
from analyst.turns.agent.watched_stream import watched
from analyst.uploads import placements
from sandboxes import Execution, Result, Sandbox

STATE_LOST = (
    "The kernel's state from before this question is no longer kept (a session keeps it for its"
    " {kept} that ran code), so this answer runs in the current kernel, which still"
    " holds what the earlier answer's cells did."
)
# How often a turn waiting for its model checks whether it was asked to stop (seconds).
CANCEL_POLL = 0.5


class TurnCancelled(Exception):
    pass


class TurnRunner:
    """Runs one claimed turn to its end, storing every event as it goes."""

    def __init__(
        self, turn: Turn, *, providers: Callable[[str], tuple[Provider, str]] = model_client.provider
    ) -> None:
        self.turn = turn
        self.session = turn.session
        self.providers = providers
        self.kernel = SessionKernel(self.session, emit=self.emit)
        self.in_cell = False  # a cell of this turn runs (what Stop heard by the lease interrupts)
        self.redactor = redactor_for(self.session)  # every secret shown as «secret:NAME», once a turn

    def emit(self, type: str, payload: dict[str, Any]) -> None:
        events.append(self.session.id, type, self.redactor.value(payload), turn=self.turn)

    def check_cancelled(self) -> None:
        """Raise TurnCancelled once the user asked to stop."""
        self.turn.refresh_from_db(fields=["cancel_requested"])
        if self.turn.cancel_requested:
            raise TurnCancelled

    def run(self) -> None:
        with Lease(self.turn.id, settings.ANALYST_TURN_LEASE, on_cancel=self.stop_cell):
            placements.wait_for_files(self.session, emit=self.emit, check=self.check_cancelled)
            if self.turn.kind == Turn.Kind.CELL:
                self.run_cell()
            elif self.turn.kind == Turn.Kind.RESTART:
                self.run_restart()
            elif self.turn.kind == Turn.Kind.REPLAY:
                replay.run_replay(self)
            else:
                self.run_chat()
            self.kernel.save(self.turn)

    def stop_cell(self) -> None:
        """Stop heard while this turn runs (from the lease's thread): interrupt its cell, if one
        runs (not, say, the kernel's snapshot after the turn)."""
        if self.in_cell:
            interrupt_cell(AnalysisSession.objects.get(id=self.session.id))  # its sandbox as of now

    def run_cell(self) -> None:
        """Notebook mode: the user's own code, same kernel and events; the model sees it next turn."""
        execution = self.execute(self.turn.input, tool_call_id=None)
        policy = self.cell_policy(execution)
        execution = privacy.reduced(execution, policy)
        summary = execution_text(execution, settings.ANALYST_MODEL_OUTPUT_LIMIT)
        note = f"I ran this cell myself:\n```python\n{self.turn.input}\n```\nIts output:\n{summary}"
        history.save(self.session, self.turn, "user", [values_withheld(TextPart(note), policy)])

    def run_restart(self) -> None:
        """A fresh kernel in the same sandbox (files kept), saved as the session's state, so a
        later resume does not bring back what the user chose to drop; the model hears of it."""
        self.kernel.restart()
        text = replay.RESTARTED
        self.emit("notice", {"text": text, "code": "kernel_restarted"})
        history.save(self.session, self.turn, "user", [TextPart(f"I restarted the kernel. {text}")])

    def run_chat(self) -> None:
        provider, model = self.providers(self.session.model)
        if self.turn.regenerates is not None:
            self.undo_earlier_answer(self.turn.regenerates)
        history.save(self.session, self.turn, "user", [TextPart(self.turn.input)])
        messages = history.load(self.session, self.turn)  # once: this turn's messages are added as made
        with provider:
            try:
                self.converse(provider, model, messages)
            except approvals.ApprovalExpired as exc:  # nobody decided on a waiting cell
                self.emit("error", {"code": "approval_expired", "message": str(exc)})

    def undo_earlier_answer(self, old: Turn) -> None:
        """Regenerate (analyst.sessions.regenerations): the earlier answer out of the model's history, and
        the kernel back as it was before the question when that answer ran code, from the
        snapshot taken after the turn before (or an empty kernel when no code had run before).
        When that snapshot is no longer kept, the new answer runs in the current kernel."""
        Message.objects.filter(turn=old).delete()
        if not old.events.filter(type__in=["tool_call", "cell"]).exists():
            return  # nothing ran: the kernel is as it was
        state = kernel_snapshots.before(self.session, old)
        if state.lost:
            text = STATE_LOST.format(kept=kernel_snapshots.kept_turns())
            self.emit("notice", {"text": text, "code": "state_lost"})
            return
        self.kernel.rewind(state.snapshot, key=f"{self.session.id}:{self.turn.id}")
        for snapshot in self.session.snapshots.filter(turn=old):  # undone: never restored again
            kernel_snapshots.forget(snapshot)

    def converse(self, provider: Provider, model: str, messages: list[ChatMessage]) -> None:
        for round in range(settings.ANALYST_MAX_TOOL_ROUNDS):
            if round:  # before the first, a cancel ends the turn while it is still queued
                self.check_cancelled()
            text, calls, finished = self.answer(provider, model, messages)
            parts: list[Any] = [TextPart(text)] if text.strip() else []
            parts += [ToolCallPart(c.id, c.name, c.arguments or {}) for c in calls]
            if text.strip():
                self.emit("assistant_message", {"text": text, "citations": tracing.cite(self.session, text)})
            if finished.stop_reason == "refusal" or not parts:
                self.say_no_answer(messages, parts, finished)
                return
            self.remember(messages, "assistant", parts)
            if not calls:
                if finished.stop_reason == "max_tokens":
                    self.notice_cut_off()
                return
            results = [self.call_tool(call, provider.supports_images) for call in calls]
            self.remember(messages, "user", results)
        rounds = settings.ANALYST_MAX_TOOL_ROUNDS
        message = f"Stopped after {rounds} rounds of tool calls in one turn; ask again to continue."
        self.emit("error", {"code": "too_many_rounds", "message": message})

    def say_no_answer(self, messages: list[ChatMessage], parts: list[Any], finished: Finished) -> None:
        """A refusal or an empty answer: shown as such, and kept in the history as a note, never
        as an empty message (every provider refuses a conversation holding one)."""
        if finished.stop_reason == "refusal":
            why = finished.refusal or ""
            message = f"The model declined: {why}" if why else "The model declined to answer."
            code, note = "model_declined", why or history.DECLINED
        else:
            message = "The model returned nothing."
            code, note = "empty_answer", history.NO_ANSWER
        self.emit("error", {"code": code, "message": message})
        if not any(isinstance(part, TextPart) for part in parts):
            parts = [TextPart(note), *parts]
        # Tool calls in a refused answer are not run; the history answers them as interrupted.
        self.remember(messages, "assistant", parts)

    def notice_cut_off(self) -> None:
        limit = settings.ANALYST_MAX_TOKENS
        text = f"The answer was cut off at its length limit ({limit:,} tokens, ANALYST_MAX_TOKENS)."
        self.emit("notice", {"text": text + " Ask the model to continue."})

    def remember(self, messages: list[ChatMessage], role: str, parts: list[Any]) -> None:
        history.save(self.session, self.turn, role, parts)
        history.add(messages, role, parts)

    def answer(
        self, provider: Provider, model: str, messages: list[ChatMessage]
    ) -> tuple[str, list[ToolCall], Finished]:
        """Stream one model answer: text deltas coalesced into events, tool calls collected,
        its token counts recorded."""
        text, pending, calls = [], [], []
        deltas = self.redactor.stream()  # a secret the model writes across two deltas
        finished = Finished("")
        last_flush = time.monotonic()
        policy = privacy.policy_for(self.session)  # as of this request, whatever earlier ones saw
        system = policy.redact(system_prompt(self.session, self.turn.requested_by_id))[0]
        tool = run_python_for(self.session)

        def produce(put: Callable[[StreamEvent | Retrying], None]) -> None:
            stream = provider.stream(
                model=model,
                system=system,
                messages=without_secrets(as_model_reads(messages, policy), self.redactor),
                tools=[tool],
                max_tokens=settings.ANALYST_MAX_TOKENS,
                on_retry=put,
            )
            with closing(stream):  # type: ignore[type-var]  # an abandoned read closes the HTTP stream
                for item in stream:
                    put(item)

        # Read beside this thread: a Stop is seen within CANCEL_POLL even while the model hangs.
        with closing(watched(produce, check=self.check_cancelled, poll=CANCEL_POLL)) as stream:
            for item in stream:
                if isinstance(item, Retrying):
                    self.emit_retry(item)
                elif isinstance(item, TextDelta):
                    text.append(item.text)
                    pending.append(item.text)
                    if time.monotonic() - last_flush >= settings.ANALYST_DELTA_INTERVAL:
                        self.emit("assistant_delta", {"text": deltas.feed("".join(pending))})
                        pending, last_flush = [], time.monotonic()
                        self.check_cancelled()
                elif isinstance(item, ToolCall):
                    calls.append(item)
                elif isinstance(item, Finished):
                    finished = item
                    usage.record_call(
                        turn=self.turn,
                        model=self.session.model,
                        input_tokens=item.input_tokens,
                        output_tokens=item.output_tokens,
                    )
        if rest := deltas.feed("".join(pending)) + (deltas.end() or ""):
            self.emit("assistant_delta", {"text": rest})
        return "".join(text), calls, finished

    def emit_retry(self, retrying: Retrying) -> None:
        payload = {
            "retry": retrying.retry,
            "retries": retrying.retries,
            "delay": round(retrying.delay, 2),
            "reason": retrying.reason,
        }
        self.emit("model_retry", payload)
        metrics.count("provider_retries")

    def call_tool(self, call: ToolCall, images: bool) -> ToolResultPart:
        problem = self.tool_problem(call)
        if problem:
            self.emit("error", {"code": "bad_tool_call", "message": problem, "tool_call_id": call.id})
            return ToolResultPart(call.id, [TextPart(problem)], is_error=True)
        code = str((call.arguments or {})["code"])
        # A session that approves cells: this one may wait for its owner's Run, edit or Reject.
        decision = approvals.await_decision(
            turn=self.turn,
            tool_call_id=call.id,
            code=code,
            shown_code=self.redactor.text(code),
            check=self.check_cancelled,
        )
        if not decision.run:
            return ToolResultPart(call.id, [TextPart(decision.note)], is_error=True)
        number = tracing.next_cell_number(self.session)  # what the model cites it by, [[cell N]]
        self.emit("tool_call", {"id": call.id, "name": call.name, "code": decision.code, "cell": number})
        execution = self.execute(decision.code, tool_call_id=call.id)
        policy = self.cell_policy(execution)
        execution = privacy.reduced(execution, policy)
        limit, label = settings.ANALYST_MODEL_OUTPUT_LIMIT, tracing.cell_label(number)
        result = tool_result(call.id, execution, limit=limit, images=images, label=label)
        if decision.note:  # the owner edited it: the model reads what ran
            result.content.insert(0, TextPart(decision.note))
        return values_withheld(result, policy)

    def cell_policy(self, execution: Execution) -> privacy.Policy:
        """What the model may read of a cell's output (analyst.trust.kernel_values)."""
        return kernel_values.policy_after_cell(self.session, execution.results, self.live_sandbox)

    def live_sandbox(self) -> Sandbox | None:
        """The sandbox the last cell ran in; None when its kernel died in it (brought back)."""
        return self.kernel.sandbox() if self.kernel.death is None else None

    @staticmethod
    def tool_problem(call: ToolCall) -> str:
        if call.name != RUN_PYTHON.name:
            return f"The model called a tool that does not exist: {call.name!r} (only run_python exists)."
        if call.truncated:
            limit = settings.ANALYST_MAX_TOKENS
            return (
                f"The run_python call was cut off by the answer's length limit ({limit:,} tokens)"
                " before its code was complete, so nothing ran. Write shorter code, or split the"
                " work into several cells."
            )
        if call.error or call.arguments is None:
            return f"The model's run_python call had invalid arguments: {call.error or 'not a JSON object'}."
        if not isinstance(call.arguments.get("code"), str):
            return "The model's run_python call had no 'code' string."
        return ""

    def execute(self, code: str, *, tool_call_id: str | None) -> Execution:
        """Run a cell in the session's kernel, streaming its output into events."""
        self.check_cancelled()  # Stop may have come before the kernel it would interrupt existed
        tag = {"tool_call_id": tool_call_id} if tool_call_id else {}
        budget = CellEventBudget(settings.ANALYST_CELL_EVENT_BYTES, tag=tag)

        def emit_output(type: str, payload: dict[str, Any]) -> None:
            for kind, admitted in budget.admit(type, payload):
                self.emit(kind, admitted)

        def on_result(result: Result) -> None:
            if budget.spent:  # not stored: store no artifact for it either
                return
            payload = store_bundle(self.session, self.redactor.value(result.bundle), no_room=self.no_room)
            emit_output("result", {**payload, "is_main_result": result.is_main_result, **tag})

        started = time.monotonic()
        self.in_cell = True
        streams = {"stdout": self.redactor.stream(), "stderr": self.redactor.stream()}  # a secret cut in two

        def emit_stream(type: str, text: str) -> None:
            if text := streams[type].feed(text):
                emit_output(type, {"text": text, **tag})

        try:
            execution = self.kernel.run(
                code,
                on_stdout=lambda text: emit_stream("stdout", text),
                on_stderr=lambda text: emit_stream("stderr", text),
                on_result=on_result,
            )
        finally:
            self.in_cell = False
        for type, stream in streams.items():  # the tail each held back: a secret's start, or not
            if rest := stream.end():
                emit_output(type, {"text": rest, **tag})
        execution = self.redactor.value(execution)
        metrics.observe("cell_seconds", time.monotonic() - started)
        if execution.error is not None:
            error = execution.error
            value = self.kernel.death.cause if self.kernel.death else error.value  # the rest follows
            emit_output("error", {"name": error.name, "value": value, "traceback": error.traceback, **tag})
        self.emit("cell_done", {"failed": execution.error is not None, **tag})
        self.kernel.announce()  # a kernel that died in this cell: what came back, below the cell
        self.check_cancelled()
        return execution

    def no_room(self, what: str, size: int) -> str | None:
        """Why a result's part is not stored: it would take the owner past their storage limit, or
        the session's team workspace past its own."""
        try:
            user_limits.check_storage(self.session.owner, adding=size, what=what[:1].upper() + what[1:])
            workspace_storage.check_storage(self.session, adding=size, what=what[:1].upper() + what[1:])
        except user_limits.LimitReached as exc:
            return str(exc)
        return None


__all__ = ["ProviderError", "TurnCancelled", "TurnRunner"]
