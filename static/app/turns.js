// Whether a turn is running and what it is doing, read from the event log; a turn we just
// asked for counts as running from its 202 on, even before its first event arrives.

// phase: "queued" (asked, not started), "thinking" (waiting for the model), "retrying" (the
// model failed before answering and is asked again: `retry` says which of how many), "writing"
// (the model's text streams in), "reading" (the turn waits for uploads still being read into the
// sandbox: `reading` names them), "cell" (code runs; a replay's cells one after another),
// "restarting" (a fresh kernel is made), "approval" (a model's cell waits for the owner's decision),
// "saving" (the turn's work is done and the
// kernel is being snapshotted; a turn asked for meanwhile waits for it, in `waiting`); null when
// no turn runs.
export class Turns extends EventTarget {
  open = new Set(); // ids of turns asked for or started, not yet ended
  ended = new Set();
  phase = null;
  since = 0; // when the phase began, ms since the epoch
  kind = null; // the running turn's: "chat", "cell", "restart" or "replay"
  current = null; // the running turn's id
  retry = null; // while retrying: the model_retry payload ({retry, retries, delay, reason})
  reading = []; // while reading: the paths of the uploads the turn waits for
  replay = null; // while a replay's cell runs: its {index, of}
  telling = false; // a change event is on its way

  /** A turn asked for while the running one saves the kernel: it starts when that ends. */
  get waiting() {
    return this.phase === "saving" && this.open.size > 1;
  }

  get running() {
    return this.open.size > 0;
  }

  apply({ type, turn, payload, created_at }) {
    const at = Math.min(Date.parse(created_at) || Date.now(), Date.now());
    switch (type) {
      case "user_message":
        this.open.add(turn);
        return this.behindSave(turn) || this.inLine(turn) ? this.changed() : this.enter("queued", at);
      case "cell":
      case "tool_call":
        if (turn != null) this.open.add(turn);
        if (this.inLine(turn)) return this.changed();
        this.replay = payload?.replay ?? null;
        return this.behindSave(turn) ? this.changed() : this.enter("cell", at);
      case "turn_started":
        this.open.add(turn);
        this.current = turn;
        this.kind = payload?.kind ?? null;
        if (this.kind === "chat") return this.enter("thinking", at);
        if (this.kind === "restart") return this.enter("restarting", at);
        if (this.kind === "replay") return this.enter("cell", at);
        return this.phase === "cell" ? this.changed() : this.enter("cell", at); // it waited: runs now
      case "cell_pending": // a model's cell waits for the owner's Run or Reject
        return this.enter("approval", at);
      case "cell_decided":
        return this.enter(payload?.decision === "run" ? "cell" : "thinking", at);
      case "cell_done":
        if (this.kind === "replay") return this.changed(); // its next cell, or its end, follows
        return this.enter(this.kind === "chat" ? "thinking" : "saving", at);
      case "saving":
        return this.phase === "saving" ? undefined : this.enter("saving", at);
      case "model_retry":
        this.retry = payload;
        return this.enter("retrying", at);
      case "files_waiting":
        this.reading = (payload?.files ?? []).map((file) => file.path);
        return this.enter("reading", at);
      case "file_added":
      case "file_removed":
        if (this.phase !== "reading") return undefined;
        this.reading = this.reading.filter((path) => path !== payload?.path);
        if (this.reading.length) return this.changed();
        return this.enter(this.kind === "chat" ? "thinking" : "cell", at);
      case "assistant_delta":
        return this.phase === "writing" ? undefined : this.enter("writing", at);
      case "assistant_message":
        return this.enter("thinking", at); // tool calls or the end follow
      case "turn_done":
      case "turn_cancelled":
      case "turn_failed":
        this.open.delete(turn);
        this.ended.add(turn);
        if (turn !== this.current && this.open.has(this.current)) return this.changed(); // a waiting one
        if (turn === this.current) this.current = null;
        return this.open.size ? this.enter("queued", at) : this.enter(null, at); // the rest wait to start
    }
  }

  /** A member's turn asked while another's runs: it waits in line, the phase stays the running one's. */
  inLine(turn) {
    return this.current != null && this.open.has(this.current) && turn != null && turn !== this.current;
  }

  behindSave(turn) {
    return this.phase === "saving" && turn != null && turn !== this.current;
  }

  /** The 202 of our own request: running now, unless its events already ended it. */
  expect(turn) {
    if (this.ended.has(turn) || this.open.has(turn)) return;
    this.open.add(turn);
    if (!this.phase) this.enter("queued", Date.now());
    else this.changed();
  }

  enter(phase, at) {
    if (phase !== "retrying") this.retry = null;
    if (phase !== "cell") this.replay = null;
    if (phase !== "reading") this.reading = [];
    this.phase = phase;
    this.since = at;
    this.changed();
  }

  /** Listeners hear of changes once a task, however many events it applied (a reload reads
   * thousands at once): by then the state is the last event's. */
  changed() {
    if (this.telling) return;
    this.telling = true;
    queueMicrotask(() => {
      this.telling = false;
      this.dispatchEvent(new Event("change"));
    });
  }
}
