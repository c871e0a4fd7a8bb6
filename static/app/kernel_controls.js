// The kernel's controls in the page's header: its state (idle or busy, from the turns' events,
// and its memory against its limit, from the variables listing), Interrupt while a cell runs
// (the cell ends with KeyboardInterrupt and the turn goes on: a model reads the error and
// carries on; Stop, in the composer, ends the turn), and Restart and Restart and run all (the
// session's analysis, again in order), each after a confirmation. Restart may
// be asked while a turn runs: that turn is stopped first, its cell ended within seconds even if
// it ignores the interrupt.
import { el } from "./dom.js";
import { humanSize } from "./format.js";

const BUSY = { cell: "Busy", restarting: "Restarting", saving: "Saving" };
const STOPPED_TITLE =
  "No kernel is running: one starts when a cell runs or a question is asked (and comes back with" +
  " its variables after the session has been idle).";

const ACTIONS = [
  {
    name: "restart",
    label: "Restart kernel",
    confirm: "Restart",
    question: "Restart the kernel? Its variables and imports are lost; files stay; a running turn is stopped. ",
    path: "kernel/restart",
    duringTurn: true, // the running turn is stopped first (the server does it)
  },
  {
    name: "run-all",
    label: "Restart and run all",
    confirm: "Restart and run all",
    // The session's analysis: every cell that succeeded, from its start or its last Run all.
    question: "Restart, then run this session's cells again in order? It stops at the first error. ",
    path: "kernel/run-all",
  },
];

export class KernelControls {
  constructor({ api, apiBase, turns, onError }) {
    this.api = api;
    this.apiBase = apiBase;
    this.turns = turns;
    this.onError = onError;
    this.running = true; // whether the sandbox runs, as the last listing said
    this.memory = null;
    this.stateWord = el("span", { class: "kernel-state-word", testid: "kernel-state-word" });
    this.memoryText = el("span", { class: "kernel-memory", testid: "kernel-memory" });
    this.state = el(
      "span",
      { class: "kernel-state", testid: "kernel-state", attrs: { role: "status", title: "The kernel" } },
      el("span", { class: "kernel-dot", attrs: { "aria-hidden": "true" } }),
      this.stateWord,
      this.memoryText,
    );
    this.interruptButton = el("button", {
      class: "kernel-interrupt",
      testid: "kernel-interrupt",
      text: "Interrupt",
      attrs: {
        type: "button",
        title: "Stop the running cell with KeyboardInterrupt; the turn goes on (Stop ends the turn)",
      },
    });
    this.interruptButton.hidden = true;
    this.buttons = el("span", { class: "kernel-buttons" });
    this.element = el("div", { class: "kernel-controls" }, this.state, this.interruptButton, this.buttons);
    this.questions = [];
    for (const action of ACTIONS) this.addAction(action);

    this.interruptButton.addEventListener("click", () => this.interrupt());
    turns.addEventListener("change", () => this.update());
    this.update();
  }

  addAction({ name, label, confirm, question, path, duringTurn = false }) {
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
    button.dataset.duringTurn = duringTurn ? "yes" : "";
    this.buttons.append(button);
    this.element.append(box);
    this.questions.push(box);
    button.addEventListener("click", () => this.ask(box));
    cancel.addEventListener("click", () => this.ask(null));
    yes.addEventListener("click", () => this.start(path));
  }

  /** What the variables listing said: {status, memory: {used, limit} | null}. */
  setKernel({ status, memory }) {
    this.running = status !== "none";
    if (memory !== undefined) this.memory = memory;
    this.update();
  }

  update() {
    const phase = this.turns.phase;
    const busy = BUSY[phase];
    for (const button of this.buttons.children) {
      const allowed = button.dataset.duringTurn && phase !== "restarting";
      button.disabled = this.turns.running && !allowed;
    }
    this.interruptButton.hidden = phase !== "cell";
    // Idle too while the model thinks. No kernel is no fault: one starts when a cell runs.
    const word = busy ?? (this.running ? "Idle" : "Starts on first use");
    this.state.dataset.state = busy ? "busy" : this.running ? "idle" : "stopped";
    this.stateWord.textContent = word;
    this.state.title = this.running || busy ? "The kernel" : STOPPED_TITLE;
    const { used, limit } = this.memory ?? {};
    const known = this.running && used != null && limit;
    this.memoryText.textContent = known ? `${humanSize(used)} / ${humanSize(limit)}` : "";
    this.memoryText.title = this.memoryText.textContent ? "Memory the kernel uses, of what it may use" : "";
  }

  ask(open) {
    for (const box of this.questions) box.hidden = box !== open;
    this.buttons.hidden = open != null;
  }

  async interrupt() {
    try {
      await this.api.post(`${this.apiBase}/kernel/interrupt`);
    } catch (error) {
      this.onError(error.message);
    }
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
