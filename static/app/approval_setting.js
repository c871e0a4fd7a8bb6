// The session's "Approve cells" setting, in the session's sidebar (its tools): which of the
// model's cells wait for the owner's Run, Edit or Reject before they run (PATCH
// /api/sessions/<id> {"approve_cells": "off" | "writes" | "all"}; static/app/approvals.js draws them).
import { el } from "./dom.js";

const MODES = [
  ["off", "None: they run at once"],
  ["writes", "Those that write files"],
  ["all", "Every cell"],
];

export class ApprovalSetting {
  /** ``value``: the session's mode now; ``onError(message)`` when a change is refused. */
  constructor({ api, apiBase, value, onError }) {
    this.select = el("select", {
      class: "approval-setting",
      testid: "approve-cells",
      attrs: { "aria-label": "Which of the assistant's cells wait for your approval" },
    });
    for (const [mode, text] of MODES) this.select.append(el("option", { text, attrs: { value: mode } }));
    let saved = MODES.some(([mode]) => mode === value) ? value : "off";
    this.select.value = saved;
    this.select.addEventListener("change", async () => {
      try {
        const session = await api.patch(apiBase, { approve_cells: this.select.value });
        saved = session.approve_cells;
      } catch (error) {
        onError(error.message);
      }
      this.select.value = saved;
    });
    this.element = el(
      "section",
      { class: "approvals stack", testid: "approval-panel" },
      el("h2", { text: "Approve cells" }),
      el("label", {}, "Cells of the assistant that wait for you", this.select),
      el("small", {
        text:
          "A cell that waits is shown in full with Run, Edit and Reject; nothing runs until you decide." +
          " Which cells write files is read from their code: choose Every cell to see them all.",
      }),
    );
  }
}
