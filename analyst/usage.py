"""Token usage: one row per model call, its cost from the price table, totals, the daily budget."""

from __future__ import annotations

from analyst.models import ModelCall, Turn


def record_call(*, turn: Turn, model: str, input_tokens: int | None, output_tokens: int | None) -> ModelCall:
    """Store one model answer's token counts (None where the provider did not say)."""
    return ModelCall.objects.create(
        turn=turn,
        session_id=turn.session_id,
        user_id=turn.requested_by_id,
        model=model,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
    )
