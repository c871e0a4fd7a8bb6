// The kernel's controls in the page's header: Restart, and Restart and run all (the cells that
// made the kernel's state, again in order), each after a confirmation (the variables go).
import { el } from "./dom.js";

const ACTIONS = [
  {
    name: "restart",
    label: "Restart kernel",
    confirm: "Restart",
    question: "Restart the kernel? Its variables and imports are lost; files stay. ",
    path: "kernel/restart",
  },
  {
    name: "run-all",
    label: "Restart and run all",
    confirm: "Restart and run all",
    // The cells that made the state: those since the kernel last started, except the ones that failed.
    question: "Restart, then run this state's cells again in order? It stops at the first error. ",
    path: "kernel/run-all",
  },
];

export class KernelControls {
  constructor({ api, apiBase, turns, onError }) {
    this.api = api;
    this.apiBase = apiBase;
    this.turns = turns;
    this.onError = onError;
    this.buttons = el("span", { class: "kernel-buttons" });
    this.element = el("div", { class: "kernel-controls" }, this.buttons);
    this.questions = [];
    for (const action of ACTIONS) this.addAction(action);
    turns.addEventListener("change", () => {
      for (const button of this.buttons.children) button.disabled = turns.running;
    });
  }

  addAction({ name, label, confirm, question, path }) {
    const button = el("button", {
      class: "kernel-restart",
      testid: `kernel-${name}`,
      text: label,
      attrs: { type: "button" },
    });
    const yes = el("button", { class: "danger", testid: `kernel-${name}-confirm`, text: confirm, attrs: { type: "button" } });
    const cancel = el("button", { class: "link", text: "Cancel", attrs: { type: "button" } });
    const box = el(
      "span",
      { class: "kernel-confirm", testid: `kernel-${name}-question`, attrs: { role: "alertdialog" } },
      question,
      yes,
      cancel,
    );
    box.hidden = true;
    this.buttons.append(button);
    this.element.append(box);
    this.questions.push(box);
    button.addEventListener("click", () => this.ask(box));
    cancel.addEventListener("click", () => this.ask(null));
    yes.addEventListener("click", () => this.start(path));
  }

  ask(open) {
    for (const box of this.questions) box.hidden = box !== open;
    this.buttons.hidden = open != null;
  }

  async start(path) {
    this.ask(null);
    try {
      const answer = await this.api.post(`${this.apiBase}/${path}`);
      if (answer?.turn != null) this.turns.expect(answer.turn);
    } catch (error) {
      this.onError(error.message); // a 409 (a turn is running), a 400 (no cell to run)
    }
  }
}
