// The model's cells that wait for the owner's approval (a session that approves cells): each is
// shown in full with Run, Edit and Reject on the owner's page; a decision, from any open page,
// replaces them with its outcome. Drawn from the log's cell_pending and cell_decided events
// alone, so a reload shows the same; a cell whose turn ended undecided says so.
import { el } from "./dom.js";
import { highlighted } from "./sanitize.js";

const TURN_ENDS = new Set(["turn_done", "turn_cancelled", "turn_failed"]);

export class PendingCells {
  /** ``decide(toolCallId, action, body)`` posts the owner's decision ("approve" or "reject");
   * null where the page only reads (a shared link). */
  constructor({ decide = null } = {}) {
    this.decide = decide;
    this.waiting = new Map(); // cell_pending seq → {box, turn}, until decided or its turn ends
    this.decided = new Set(); // seqs decided: a turn's end says nothing more of them
  }

  /** Every event, before it is drawn: a turn's end closes the cells of it still waiting. */
  follow(type, turn) {
    if (!TURN_ENDS.has(type)) return;
    for (const [seq, waiting] of this.waiting) {
      if (String(waiting.turn) !== String(turn)) continue;
      close(waiting.box, "ended", "Not run: the turn ended before anyone decided.");
      this.waiting.delete(seq);
    }
  }

  /** A cell_pending event's box. */
  pending({ tool_call_id: id, code = "", why = [], expires_at: expires }, seq, turn) {
    const box = el("section", { class: "cell pending-cell", testid: "pending-cell" });
    box.dataset.state = "waiting";
    if (seq != null) box.id = `pending-${seq}`;
    const header = el(
      "header",
      { class: "cell-header" },
      el("span", { class: "cell-language", text: "Python" }),
      el("span", { class: "cell-author", text: "the assistant asks to run this cell" }),
    );
    const codeBox = el("code", { class: "hljs language-python" });
    codeBox.replaceChildren(highlighted(code));
    const parts = [header];
    if (why.length) {
      const reasons = el("ul", { class: "pending-why", testid: "pending-why" });
      for (const line of why) reasons.append(el("li", { text: line }));
      parts.push(el("div", { class: "pending-why-box" }, "It writes files:", reasons));
    }
    const source = el("pre", { class: "cell-code", testid: "pending-code" }, codeBox);
    const outcome = el("p", { class: "pending-outcome", testid: "pending-outcome", attrs: { role: "status" } });
    parts.push(source, this.actions(id, code, source, outcome, expires), outcome);
    box.append(...parts);
    if (seq != null && !this.decided.has(seq)) this.waiting.set(seq, { box, turn });
    return box;
  }

  /** A cell_decided event: its box shows what was decided, without its buttons. */
  decidedOn({ pending, decision, reason = "", edited = false }) {
    this.decided.add(pending);
    const waiting = this.waiting.get(pending);
    if (!waiting) return;
    this.waiting.delete(pending);
    if (decision === "run") {
      close(waiting.box, "run", edited ? "Run with your edit: the edited cell ran below." : "Approved: it ran below.");
    } else if (decision === "rejected") {
      close(waiting.box, "rejected", reason ? `Rejected: ${reason}` : "Rejected.");
    } else {
      close(waiting.box, "expired", "Not run: nobody decided in time, so the turn ended.");
    }
  }

  /** Run, Edit, Reject (the owner's page), or a line saying whose decision it waits for. */
  actions(id, code, source, outcome, expires) {
    const until = expires ? ` (until ${new Date(expires).toLocaleTimeString([], { timeStyle: "short" })})` : "";
    if (!this.decide) {
      return el("div", { class: "pending-actions" }, el("span", { text: `Waiting for the owner's approval${until}.` }));
    }
    const button = (text, testid, extra = "") =>
      el("button", { class: `pending-button ${extra}`.trim(), testid, text, attrs: { type: "button" } });
    const run = button("Run", "pending-run", "primary");
    const edit = button("Edit", "pending-edit");
    const reject = button("Reject", "pending-reject", "danger");
    const buttons = el("div", { class: "pending-buttons" }, run, edit, reject);
    const note = el("span", { class: "pending-until", text: `Waiting for you${until}.` });

    const editor = el("textarea", {
      class: "pending-editor",
      testid: "pending-editor",
      attrs: { spellcheck: "false", "aria-label": "The cell's code, to edit before it runs" },
    });
    editor.value = code;
    editor.rows = Math.min(Math.max(code.split("\n").length + 1, 3), 30);
    const runEdited = button("Run edited", "pending-run-edited", "primary");
    const cancelEdit = button("Cancel", "pending-edit-cancel");
    const editing = el("div", { class: "pending-form" }, editor, el("div", { class: "pending-buttons" }, runEdited, cancelEdit));
    editing.hidden = true;

    const reason = el("input", {
      class: "pending-reason",
      testid: "pending-reason",
      attrs: { type: "text", maxlength: "2000", placeholder: "Why? (optional; the assistant reads it)" },
    });
    const confirmReject = button("Reject cell", "pending-reject-confirm", "danger");
    const cancelReject = button("Cancel", "pending-reject-cancel");
    const rejecting = el("div", { class: "pending-form" }, reason, el("div", { class: "pending-buttons" }, confirmReject, cancelReject));
    rejecting.hidden = true;

    const show = (form) => {
      for (const shown of [editing, rejecting]) shown.hidden = shown !== form;
      buttons.hidden = form != null;
      source.hidden = form === editing;
    };
    const send = async (action, body) => {
      for (const b of panel.querySelectorAll("button")) b.disabled = true;
      outcome.textContent = "Sending…";
      try {
        await this.decide(id, action, body);
        // Unless its event came first and said what was decided (it took the buttons away).
        if (panel.isConnected) outcome.textContent = action === "approve" ? "Approved." : "Rejected.";
      } catch (error) {
        outcome.textContent = error.message;
        outcome.classList.add("failed");
        for (const b of panel.querySelectorAll("button")) b.disabled = false;
      }
    };
    run.addEventListener("click", () => send("approve", {}));
    edit.addEventListener("click", () => {
      show(editing);
      editor.focus();
    });
    cancelEdit.addEventListener("click", () => show(null));
    runEdited.addEventListener("click", () => send("approve", { code: editor.value }));
    reject.addEventListener("click", () => {
      show(rejecting);
      reason.focus();
    });
    cancelReject.addEventListener("click", () => show(null));
    confirmReject.addEventListener("click", () => send("reject", { reason: reason.value }));
    reason.addEventListener("keydown", (e) => {
      if (e.key === "Enter") send("reject", { reason: reason.value });
    });
    const panel = el("div", { class: "pending-actions", testid: "pending-actions" }, buttons, note, editing, rejecting);
    return panel;
  }
}

/** The cell decided (or never to be): its buttons and forms go, the outcome stays. */
function close(box, state, text) {
  box.dataset.state = state;
  box.querySelector(".pending-actions")?.remove();
  box.querySelector(".cell-code").hidden = false;
  const outcome = box.querySelector(".pending-outcome");
  outcome.classList.remove("failed");
  outcome.textContent = text;
}
