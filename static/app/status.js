// The status bar: the live connection's state, and what the running turn is doing (with a
// ticking clock while a cell runs).
import { el } from "./dom.js";
import { seconds } from "./format.js";

const CONNECTION = {
  connecting: "Connecting…",
  live: "Live",
  reconnecting: "Connection lost — reconnecting…",
  unavailable: "This session is no longer available.",
};

const PHASES = {
  queued: "Starting…",
  thinking: "Thinking…",
  writing: "Writing…",
  cell: "Running cell…",
  saving: "Saving the kernel…",
  restarting: "Restarting the kernel…",
  approval: "A cell waits for approval…",
};

function readingFiles(paths) {
  return `Reading ${paths.map((path) => path.split("/").pop()).join(", ")}…`;
}

function waitingForTheModel({ retry, retries }) {
  return `Waiting for the model (retry ${retry} of ${retries})…`;
}

export class StatusBar {
  constructor(turns) {
    this.turns = turns;
    this.connection = el("span", {
      class: "connection-status",
      testid: "connection-status",
      attrs: { role: "status" },
    });
    this.activity = el("span", {
      class: "running-status",
      testid: "running-status",
      attrs: { "aria-live": "polite" },
    });
    this.element = el("div", { class: "status-bar" }, this.connection, this.activity);
    this.timer = null; // ticks the clock while a cell runs
    this.setConnection("connecting");
    turns.addEventListener("change", () => this.showActivity());
    this.showActivity();
  }

  setConnection(state) {
    this.connection.dataset.state = state;
    this.connection.textContent = CONNECTION[state];
  }

  showActivity() {
    clearInterval(this.timer);
    const { phase, since, running } = this.turns;
    const shown = running && phase != null;
    this.activity.hidden = !shown;
    this.activity.dataset.phase = shown ? phase : "";
    if (!shown) this.activity.textContent = "";
    else if (this.turns.waiting) this.activity.textContent = `${PHASES.saving} Yours starts next.`;
    else if (phase === "retrying") this.activity.textContent = waitingForTheModel(this.turns.retry);
    else if (phase === "reading") this.activity.textContent = readingFiles(this.turns.reading);
    else if (phase !== "cell") this.activity.textContent = PHASES[phase];
    else {
      const replay = this.turns.replay; // {index, of} of the replayed cell that runs
      const what = replay ? `Running cell ${replay.index} of ${replay.of}…` : PHASES.cell;
      const tick = () => (this.activity.textContent = `${what} ${seconds(Date.now() - since)}`);
      tick();
      this.timer = setInterval(tick, 100);
    }
  }
}
