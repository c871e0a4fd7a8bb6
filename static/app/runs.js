// The runs drawer (owner only): the analysis's parameters with their types and defaults, which
// cell is its parameters cell, "Run with…" other values, the runs made (scheduled ones marked,
// each linking to its own session), and the schedules that make them (paused, resumed, deleted,
// added). Everything is read from and sent to the JSON API; every text goes in as text.
import { el } from "./dom.js";

const POLL_MS = 2000; // while a run is queued or running

export class RunsPanel {
  /** onParametersCell(code): which cell is the parameters cell now (its code, or null);
   * onError(message): a cell's toggle could not mark it (said where the user is, not in here). */
  constructor({ api, apiBase, turns, onParametersCell, onError }) {
    Object.assign(this, { api, apiBase, onParametersCell, onError });
    this.poll = null;
    this.message = el("p", { class: "runs-message", testid: "runs-message", attrs: { role: "status" } });
    this.parameters = el("table", { class: "parameter-list", testid: "parameter-list" });
    this.cellChoice = el("select", { testid: "parameters-cell", attrs: { "aria-label": "Parameters cell" } });
    this.runForm = el("form", { class: "run-form stack", testid: "run-form" });
    this.runs = el("ul", { class: "run-list", testid: "run-list" });
    this.schedules = el("ul", { class: "schedule-list", testid: "schedule-list" });
    this.scheduleForm = this.buildScheduleForm();
    this.element = el(
      "aside",
      { class: "runs-panel", testid: "runs-panel", attrs: { "aria-label": "Runs" } },
      el("h2", { text: "Parameters" }),
      this.parameters,
      el("label", { class: "parameters-cell" }, "Parameters cell ", this.cellChoice),
      el("h2", { text: "Run with…" }),
      this.runForm,
      this.message,
      el("h2", { text: "Runs" }),
      this.runs,
      el("h2", { text: "Schedules" }),
      this.schedules,
      this.scheduleForm,
    );
    this.cellChoice.addEventListener("change", () => this.mark(this.cellChoice.value));
    this.runForm.addEventListener("submit", (event) => {
      event.preventDefault();
      this.start();
    });
    turns.addEventListener("change", () => !turns.running && this.refresh());
  }

  say(text) {
    this.message.textContent = text;
  }

  async refresh() {
    try {
      const [found, made, timed] = await Promise.all([
        this.api.get(`${this.apiBase}/parameters`),
        this.api.get(`${this.apiBase}/runs`),
        this.api.get(`${this.apiBase}/schedules`),
      ]);
      this.showParameters(found);
      this.showRuns(made.runs);
      this.showSchedules(timed.schedules);
    } catch (error) {
      this.say(error.message);
    }
  }

  showParameters({ parameters, parameters_cell: marked, candidates }) {
    this.declared = parameters;
    const rows = parameters.map((p) =>
      el(
        "tr",
        { testid: "parameter" },
        el("th", { text: p.name, attrs: { scope: "row" } }),
        el("td", { class: "parameter-type", text: p.type }),
        el("td", { class: "parameter-default", text: JSON.stringify(p.default) }),
      ),
    );
    this.parameters.replaceChildren(...rows);
    if (!parameters.length) {
      const none = "None yet: mark a cell of assignments below, or call parameter(name, default) in a cell.";
      this.parameters.append(el("tr", {}, el("td", { text: none })));
    }
    const none = el("option", { text: "— none —", attrs: { value: "" } });
    const options = candidates.map((code) => el("option", { text: firstLine(code), attrs: { value: code } }));
    this.cellChoice.replaceChildren(none, ...options);
    this.cellChoice.value = marked ?? "";
    this.onParametersCell(marked ?? null);
    this.cellChoice.disabled = !candidates.length && !marked;
    this.runForm.replaceChildren(
      ...parameters.map((p) =>
        el("label", {}, `${p.name} `, el("input", { attrs: { name: p.name, value: shown(p.default) } })),
      ),
      el("button", { class: "primary", testid: "run-start", text: "Run", attrs: { type: "submit" } }),
    );
  }

  async mark(code) {
    try {
      this.showParameters(await this.api.request("PUT", `${this.apiBase}/parameters`, { code }));
      this.say(code ? "Marked as the parameters cell." : "No parameters cell.");
    } catch (error) {
      this.say(error.message);
      this.onError(error.message);
    }
  }

  /** The form's values, typed as their defaults are; a date may be relative ("today - 7 days"). */
  values() {
    const given = {};
    for (const p of this.declared ?? []) {
      const text = this.runForm.elements.namedItem(p.name).value;
      if (text === shown(p.default)) continue;
      given[p.name] = typed(p, text);
    }
    return given;
  }

  async start() {
    let parameters;
    try {
      parameters = this.values();
    } catch (error) {
      this.say(error.message);
      return;
    }
    try {
      const run = await this.api.post(`${this.apiBase}/runs`, { parameters });
      this.say(`Run started: ${run.status}.`);
      await this.refresh();
    } catch (error) {
      this.say(error.message);
    }
  }

  showRuns(runs) {
    this.runs.replaceChildren(
      ...runs.map((run) =>
        el(
          "li",
          { class: `run run-${run.status}`, testid: "run" },
          el("a", { text: new Date(run.created_at).toLocaleString(), attrs: { href: run.url } }),
          " ",
          el("span", { class: "run-status", testid: "run-status", text: run.status }),
          run.schedule != null ? el("span", { class: "run-scheduled", text: " scheduled" }) : "",
          Object.keys(run.parameters).length
            ? el("code", { class: "run-parameters", text: ` ${JSON.stringify(run.parameters)}` })
            : "",
        ),
      ),
    );
    if (!runs.length) this.runs.append(el("li", { class: "empty", text: "No runs yet." }));
    clearTimeout(this.poll);
    if (runs.some((run) => run.status === "queued" || run.status === "running")) {
      this.poll = setTimeout(() => this.refresh(), POLL_MS);
    }
  }

  showSchedules(schedules) {
    this.schedules.replaceChildren(
      ...schedules.map((schedule) => {
        const pause = el("button", {
          class: "link",
          testid: "schedule-pause",
          text: schedule.paused ? "Resume" : "Pause",
          attrs: { type: "button" },
        });
        pause.addEventListener("click", () => this.change(schedule, { paused: !schedule.paused }));
        const remove = el("button", { class: "link danger", text: "Delete", attrs: { type: "button" } });
        remove.addEventListener("click", () => this.remove(schedule));
        const next = schedule.paused ? "paused" : `next ${new Date(schedule.next_run_at).toLocaleString()}`;
        return el(
          "li",
          { class: "schedule", testid: "schedule" },
          el("code", { text: `${schedule.cron} (${schedule.timezone})` }),
          el("span", { class: "schedule-next", testid: "schedule-next", text: ` ${next} ` }),
          pause,
          " ",
          remove,
        );
      }),
    );
  }

  buildScheduleForm() {
    const field = (label, attrs) => el("label", {}, `${label} `, el("input", { attrs }));
    const form = el(
      "form",
      { class: "schedule-form stack", testid: "schedule-form" },
      field("Cron", { name: "cron", placeholder: "0 7 * * MON", required: "" }),
      field("Timezone", { name: "timezone", value: localZone() }),
      field("E-mail to", { name: "emails", placeholder: "a@example.com, b@example.com" }),
      field("Webhook", { name: "webhook", type: "url", placeholder: "https://…" }),
      el("button", { testid: "schedule-add", text: "Add a schedule", attrs: { type: "submit" } }),
    );
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const fields = form.elements;
      const body = {
        cron: fields.namedItem("cron").value,
        timezone: fields.namedItem("timezone").value || "UTC",
        parameters: this.safeValues(),
        notify_emails: fields
          .namedItem("emails")
          .value.split(",")
          .map((address) => address.trim())
          .filter(Boolean),
        webhook_url: fields.namedItem("webhook").value,
      };
      try {
        const made = await this.api.post(`${this.apiBase}/schedules`, body);
        this.say(`Schedule added. Its webhook's signing secret (shown once): ${made.webhook_secret}`);
        form.reset();
        await this.refresh();
      } catch (error) {
        this.say(error.message);
      }
    });
    return form;
  }

  safeValues() {
    try {
      return this.values();
    } catch {
      return {};
    }
  }

  async change(schedule, fields) {
    try {
      await this.api.patch(`/api/schedules/${schedule.id}`, fields);
      await this.refresh();
    } catch (error) {
      this.say(error.message);
    }
  }

  async remove(schedule) {
    try {
      await this.api.delete(`/api/schedules/${schedule.id}`);
      await this.refresh();
    } catch (error) {
      this.say(error.message);
    }
  }
}

function firstLine(code) {
  const line = code.split("\n")[0];
  return line.length > 60 ? `${line.slice(0, 59)}…` : line;
}

function shown(value) {
  return typeof value === "string" ? value : JSON.stringify(value);
}

/** The text typed for ``p`` as a value of its default's type; an Error saying what is wrong. */
function typed(p, text) {
  if (p.type === "str" || p.type === "date") return text;
  let value;
  try {
    value = JSON.parse(text);
  } catch {
    throw new Error(`${p.name} must be of type ${p.type}, such as ${shown(p.default)}`);
  }
  return value;
}

function localZone() {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
}
