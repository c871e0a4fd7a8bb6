// Whose turn it is: members' questions and cells run one at a time, in the order asked, and this
// line says whose runs and who waits ("alice's question is running; yours is next"). Read from the
// event log: a question's or a cell's event names who asked ("by"), turn_started which one runs,
// a turn's end takes it out of the line. Shown only when someone else's turn runs or waits.
import { el } from "./dom.js";

const ENDS = new Set(["turn_done", "turn_cancelled", "turn_failed"]);

export class TurnQueue {
  constructor({ me }) {
    this.me = me;
    this.line = new Map(); // turn → {by, what}, in the order asked
    this.running = null;
    this.element = el("p", { class: "turn-queue", testid: "turn-queue", attrs: { role: "status" } });
    this.element.hidden = true;
  }

  apply({ type, turn, payload = {} }) {
    if (turn == null) return;
    if (type === "user_message" || type === "cell") this.join(turn, payload.by ?? null, type === "cell" ? "cell" : "question");
    else if (type === "notice" && ["restarting", "replay_queued"].includes(payload.code)) this.join(turn, null, "request");
    else if (type === "turn_started") {
      if (!this.line.has(turn)) this.join(turn, null, payload.kind === "chat" ? "question" : "request");
      this.running = turn;
    } else if (ENDS.has(type)) {
      this.line.delete(turn);
      if (this.running === turn) this.running = null;
    } else return;
    this.show();
  }

  join(turn, by, what) {
    if (!this.line.has(turn)) this.line.set(turn, { by, what });
  }

  /** Whether the viewer may send now and wait in line: others' turns are open, none of theirs. */
  get mayWait() {
    return this.line.size > 0 && [...this.line.values()].every(({ by }) => by != null && by !== this.me);
  }

  show() {
    const order = [...this.line.keys()];
    const first = this.running ?? order[0];
    const waiting = order.filter((turn) => turn !== first).map((turn) => this.line.get(turn));
    const current = this.line.get(first);
    const shown = current != null && ((current.by != null && !this.mine(current)) || waiting.length > 0);
    this.element.hidden = !shown;
    if (!shown) return (this.element.textContent = "");
    const verb = this.running === first ? "is running" : "is starting";
    const names = waiting.map((turn) => (this.mine(turn) ? "yours" : this.whose(turn)));
    const next = names.length ? `; ${names.join(", then ")} ${names.length > 1 ? "wait" : "is next"}` : "";
    this.element.textContent = `${this.owner(current)} ${current.what} ${verb}${next}.`;
  }

  mine({ by }) {
    return by != null && by === this.me;
  }

  /** "Your" / "alice's" / "A member's": whose a turn is, at the start of the line. */
  owner(turn) {
    if (this.mine(turn)) return "Your";
    return turn.by ? `${turn.by}'s` : "A member's";
  }

  whose(turn) {
    return turn.by ? `${turn.by}'s` : "another";
  }
}
