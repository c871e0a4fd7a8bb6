// Whether a turn is running and what it is doing, read from the event log; a turn we just
// asked for counts as running from its 202 on, even before its first event arrives.

// phase: "queued" (asked, not started), "thinking" (waiting for the model), "writing" (the
// model's text streams in), "cell" (code runs), "saving" (a user's cell ran; the kernel is
// being snapshotted); null when no turn runs.
export class Turns extends EventTarget {
  open = new Set(); // ids of turns asked for or started, not yet ended
  ended = new Set();
  phase = null;
  since = 0; // when the phase began, ms since the epoch
  kind = null; // the running turn's: "chat" or "cell"

  get running() {
    return this.open.size > 0;
  }

  apply({ type, turn, payload, created_at }) {
    const at = Math.min(Date.parse(created_at) || Date.now(), Date.now());
    switch (type) {
      case "user_message":
        this.open.add(turn);
        return this.enter("queued", at);
      case "cell":
      case "tool_call":
        if (turn != null) this.open.add(turn);
        return this.enter("cell", at);
      case "turn_started":
        this.open.add(turn);
        this.kind = payload?.kind ?? null;
        return this.kind === "chat" ? this.enter("thinking", at) : this.changed();
      case "cell_done":
        return this.enter(this.kind === "chat" ? "thinking" : "saving", at);
      case "assistant_delta":
        return this.phase === "writing" ? undefined : this.enter("writing", at);
      case "assistant_message":
        return this.enter("thinking", at); // tool calls or the end follow
      case "turn_done":
      case "turn_cancelled":
      case "turn_failed":
        this.open.delete(turn);
        this.ended.add(turn);
        return this.open.size ? this.changed() : this.enter(null, at);
    }
  }

  /** The 202 of our own request: running now, unless its events already ended it. */
  expect(turn) {
    if (this.ended.has(turn) || this.open.has(turn)) return;
    this.open.add(turn);
    if (!this.phase) this.enter("queued", Date.now());
    else this.changed();
  }

  enter(phase, at) {
    this.phase = phase;
    this.since = at;
    this.changed();
  }

  changed() {
    this.dispatchEvent(new Event("change"));
  }
}
