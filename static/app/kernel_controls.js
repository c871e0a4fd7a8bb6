// The kernel's controls in the page's header: Restart, after a confirmation (the variables go).
import { el } from "./dom.js";

export class KernelControls {
  constructor({ api, apiBase, turns, onError }) {
    this.api = api;
    this.apiBase = apiBase;
    this.turns = turns;
    this.onError = onError;
    this.restartButton = el("button", {
      class: "kernel-restart",
      testid: "kernel-restart",
      text: "Restart kernel",
      attrs: { type: "button" },
    });
    const confirm = el("button", {
      class: "danger",
      testid: "kernel-restart-confirm",
      text: "Restart",
      attrs: { type: "button" },
    });
    const cancel = el("button", { class: "link", text: "Cancel", attrs: { type: "button" } });
    this.question = el(
      "span",
      { class: "kernel-confirm", testid: "kernel-restart-question", attrs: { role: "alertdialog" } },
      "Restart the kernel? Its variables and imports are lost; files stay. ",
      confirm,
      cancel,
    );
    this.question.hidden = true;
    this.element = el("div", { class: "kernel-controls" }, this.restartButton, this.question);

    this.restartButton.addEventListener("click", () => this.ask(true));
    cancel.addEventListener("click", () => this.ask(false));
    confirm.addEventListener("click", () => this.restart());
    turns.addEventListener("change", () => (this.restartButton.disabled = turns.running));
  }

  ask(open) {
    this.question.hidden = !open;
    this.restartButton.hidden = open;
  }

  async restart() {
    this.ask(false);
    try {
      const answer = await this.api.post(`${this.apiBase}/kernel/restart`);
      if (answer?.turn != null) this.turns.expect(answer.turn);
    } catch (error) {
      this.onError(error.message); // a 409: a turn is running
    }
  }
}
