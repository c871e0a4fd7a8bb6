// The kernel's controls in the page's header: its state (idle or busy, from the turns' events,
// and its memory against its limit, from the variables listing), Interrupt while a cell runs
// (the cell ends with KeyboardInterrupt and the turn goes on: a model reads the error and
// carries on; Stop, in the composer, ends the turn), and Restart, after a confirmation.
import { el } from "./dom.js";
import { humanSize } from "./format.js";

const BUSY = { cell: "Busy", restarting: "Restarting", saving: "Saving" };

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
    this.element = el(
      "div",
      { class: "kernel-controls" },
      this.state,
      this.interruptButton,
      this.restartButton,
      this.question,
    );

    this.restartButton.addEventListener("click", () => this.ask(true));
    cancel.addEventListener("click", () => this.ask(false));
    confirm.addEventListener("click", () => this.restart());
    this.interruptButton.addEventListener("click", () => this.interrupt());
    turns.addEventListener("change", () => this.update());
    this.update();
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
    this.restartButton.disabled = this.turns.running;
    this.interruptButton.hidden = phase !== "cell";
    const word = busy ?? (this.running ? "Idle" : "Not running"); // idle too while the model thinks
    this.state.dataset.state = busy ? "busy" : this.running ? "idle" : "stopped";
    this.stateWord.textContent = word;
    const { used, limit } = this.memory ?? {};
    const known = this.running && used != null && limit;
    this.memoryText.textContent = known ? `${humanSize(used)} / ${humanSize(limit)}` : "";
    this.memoryText.title = this.memoryText.textContent ? "Memory the kernel uses, of what it may use" : "";
  }

  ask(open) {
    this.question.hidden = !open;
    this.restartButton.hidden = open;
  }

  async interrupt() {
    try {
      await this.api.post(`${this.apiBase}/kernel/interrupt`);
    } catch (error) {
      this.onError(error.message);
    }
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
