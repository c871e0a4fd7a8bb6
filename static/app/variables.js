// The variables panel (owner only): the kernel's user variables with their type, shape or
// length and memory, listed again after each turn; a DataFrame or Series opens its first rows
// below the list. While a turn runs the kernel is not asked (the list stays as it was), but
// the kernel's memory is, every few seconds, for the kernel state in the header.
import { el } from "./dom.js";
import { humanSize } from "./format.js";
import { renderResult } from "./render.js";

const POLL_MS = 3000;
const MESSAGES = {
  none:
    "The kernel starts on first use, when a cell runs (it stops when the session has been idle a" +
    " while, and comes back with its variables). Its variables show here then.",
  empty: "No variables yet. Run a cell, or ask a question, and they show here.",
  loading: "Reading the kernel's variables…",
};

export class VariablesPanel {
  /** onState({status, memory}): what the last answer said of the kernel. */
  constructor({ api, apiBase, artifactBase, turns, onState }) {
    Object.assign(this, { api, apiBase, artifactBase, turns, onState });
    this.loading = null;
    this.again = false;
    this.poll = null;
    this.open = null; // the name of the table whose preview shows
    this.list = el("table", { class: "variable-list", testid: "variable-list" });
    this.message = el("p", {
      class: "variables-message",
      testid: "variables-message",
      attrs: { role: "status" },
    });
    this.preview = el("section", { class: "variable-preview", testid: "variable-preview" });
    this.preview.hidden = true;
    this.element = el(
      "aside",
      { class: "variables-panel", testid: "variables-panel", attrs: { "aria-label": "Variables" } },
      el("h2", { text: "Variables" }),
      this.message,
      this.list,
      this.preview,
    );
    turns.addEventListener("change", () => this.follow());
  }

  /** List again (one request at a time; a refresh asked for meanwhile runs after it). */
  async refresh() {
    if (this.loading) {
      this.again = true;
      return this.loading;
    }
    this.loading = this.load();
    try {
      await this.loading;
    } finally {
      this.loading = null;
    }
    if (this.again) {
      this.again = false;
      return this.refresh();
    }
  }

  async load() {
    let answer;
    try {
      answer = await this.api.get(`${this.apiBase}/variables`);
    } catch (error) {
      this.say(error.message);
      return;
    }
    this.onState?.(answer);
    if (answer.status === "busy") return; // the list stays as it was until the turn ends
    if (answer.status === "ready") this.show(answer.variables, answer.total);
    else if (answer.status === "none") this.show([], 0, MESSAGES.none);
    else this.say(answer.message || "The kernel could not describe its variables.");
  }

  /** While a turn runs: its memory every few seconds; once it ends, the variables. */
  follow() {
    if (this.turns.running && !this.poll) {
      this.poll = setInterval(() => this.refresh(), POLL_MS);
    } else if (!this.turns.running && this.poll) {
      clearInterval(this.poll);
      this.poll = null;
    }
  }

  say(text) {
    this.message.textContent = text;
    this.message.hidden = !text;
  }

  show(variables, total, emptyText = MESSAGES.empty) {
    const head = el(
      "tr",
      {},
      el("th", { text: "Name" }),
      el("th", { text: "Type" }),
      el("th", { text: "Shape" }),
      el("th", { text: "Memory" }),
    );
    const body = el("tbody", {}, ...variables.map((v) => this.row(v)));
    this.list.replaceChildren(el("thead", {}, head), body);
    this.list.hidden = variables.length === 0;
    const more =
      total > variables.length ? `${variables.length} of ${total.toLocaleString("en")} variables shown.` : "";
    this.say(variables.length ? more : emptyText);
    if (this.open && !variables.some((v) => v.name === this.open && v.table)) this.closePreview();
    else if (this.open) this.openPreview(this.open); // its rows may have changed
  }

  row(variable) {
    const name = variable.table
      ? el("button", {
          class: "link variable-open",
          text: variable.name,
          attrs: { type: "button", title: `Show the first rows of ${variable.name}` },
        })
      : el("span", { text: variable.name });
    if (variable.table) name.addEventListener("click", () => this.openPreview(variable.name));
    const about = variable.approximate ? "≈ " : ""; // a long table's, measured on a sample
    const size = variable.size == null ? "" : `${about}${humanSize(variable.size)}`;
    const row = el(
      "tr",
      { testid: "variable" },
      el("td", { class: "variable-name" }, name),
      el("td", { class: "variable-type", text: variable.type }),
      el("td", { class: "variable-shape", text: shapeText(variable) }),
      el("td", { class: "variable-size", text: size }),
    );
    row.dataset.name = variable.name;
    return row;
  }

  async openPreview(name) {
    this.open = name;
    const close = el("button", { class: "link", text: "Close", attrs: { type: "button" } });
    close.addEventListener("click", () => this.closePreview());
    const title = el("h3", { text: name });
    const note = el("p", { class: "variable-preview-note", text: "Loading…" });
    this.preview.replaceChildren(el("div", { class: "variable-preview-head" }, title, close), note);
    this.preview.hidden = false;
    let payload;
    try {
      payload = await this.api.get(`${this.apiBase}/variables/${encodeURIComponent(name)}`);
    } catch (error) {
      note.textContent = error.message;
      return;
    }
    if (this.open !== name) return; // another one was opened meanwhile
    const shown = payload.data["application/vnd.dataresource+json"]?.data?.length ?? 0;
    const count = (n) => n.toLocaleString("en");
    note.textContent =
      `First ${count(shown)} of ${count(payload.total_rows)} rows` +
      (payload.total_columns > 50 ? `, 50 of ${count(payload.total_columns)} columns` : "");
    const table = renderResult(payload, this.artifactBase);
    if (table) this.preview.append(table);
  }

  closePreview() {
    this.open = null;
    this.preview.hidden = true;
    this.preview.replaceChildren();
  }
}

/** "3,376 × 7" for tables and arrays, "5" for a container's length, "" otherwise. */
export function shapeText({ shape, length }) {
  if (Array.isArray(shape)) return shape.map((n) => n.toLocaleString("en")).join(" × ");
  return length == null ? "" : length.toLocaleString("en");
}
