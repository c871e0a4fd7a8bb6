// The Connections page (templates/analyst/connections.html): the user's own connections and their
// workspaces', each with where it lives and what its last test found, and Test, Edit and Delete
// where the user manages it (their own; a workspace's for its admins and owners); and the form that
// adds one (to a workspace they manage) or edits one. All through the JSON API (/api/connections);
// no secret ever comes back from it.
import { Api } from "./api.js";
import { ConnectionForm } from "./connection_form.js";
import { el } from "./dom.js";
import { humanSize } from "./format.js";
import { SQL_KINDS, kindName, outcomeText, tablesOf } from "./connection_text.js";

class ConnectionsPage {
  constructor(root, api, url) {
    Object.assign(this, { root, api, url });
    this.tested = new Map(); // connection id → the answer of a Test clicked on this page
    this.list = el("div", { class: "connections-list", testid: "connections-list", attrs: { "aria-live": "polite" } });
    this.form = new ConnectionForm({ onSave: (change) => this.save(change) });
    root.replaceChildren(this.list, this.form.element);
  }

  async load() {
    try {
      const [answer, mine] = await Promise.all([this.api.get(this.url), this.api.get("/api/workspaces")]);
      const managed = (mine.workspaces ?? []).filter((w) => w.personal || MANAGERS.has(w.role));
      this.managed = new Set(managed.map((w) => w.id));
      this.personalId = managed.find((w) => w.personal)?.id;
      if (!this.form.editing) this.form.setWorkspaces(managed);
      this.show(answer.connections ?? []);
    } catch (error) {
      this.list.replaceChildren(el("p", { class: "errorlist", testid: "connections-error", text: error.message }));
    }
  }

  show(connections) {
    if (!connections.length) {
      this.list.replaceChildren(
        el("p", { class: "empty", testid: "connections-empty", text: "No connections yet. Add one below." }),
      );
      return;
    }
    const head = el(
      "tr",
      {},
      ...["Name", "Workspace", "Where", "Last test", "Tables", ""].map((text) => el("th", { text })),
    );
    this.list.replaceChildren(
      el(
        "table",
        { class: "sessions connections" },
        el("thead", {}, head),
        el("tbody", {}, ...connections.map((c) => this.row(c))),
      ),
    );
  }

  row(connection) {
    const outcome = el("span", {
      class: "connection-outcome",
      testid: "connection-outcome",
      attrs: { role: "status" },
    });
    const showOutcome = (answer) => {
      outcome.textContent = answer?.testing ? "Testing from a sandbox…" : outcomeText(answer, connection);
      outcome.dataset.ok = String(answer?.ok ?? "");
    };
    showOutcome(this.tested.get(connection.id) ?? connection.checked);
    const test = el("button", { testid: "connection-test", text: "Test", attrs: { type: "button" } });
    test.addEventListener("click", () => this.test(connection, test, showOutcome));
    const edit = el("button", { testid: "connection-edit", text: "Edit", attrs: { type: "button" } });
    edit.addEventListener("click", () => this.form.edit(connection));
    const remove = el("button", {
      class: "danger",
      testid: "connection-delete",
      text: `Delete “${connection.name}”`,
      attrs: { type: "button" },
    });
    remove.addEventListener("click", () => this.remove(connection, remove));
    const used = connection.sessions
      ? `${connection.sessions} session${connection.sessions === 1 ? " uses" : "s use"} it; their kernels lose it.`
      : "No session uses it.";
    const row = el(
      "tr",
      { testid: "connection-row" },
      el(
        "td",
        {},
        el("strong", { testid: "connection-row-name", text: connection.name }),
        el("br"),
        el("small", { class: "hint", testid: "connection-row-kind", text: kindLine(connection) }),
      ),
      el("td", { testid: "connection-row-workspace", text: this.workspaceName(connection) }),
      el("td", { class: "connection-where", testid: "connection-row-where", text: where(connection) }),
      el("td", {}, outcome, ...checkedAt(connection)),
      el("td", {}, tablesList(connection)),
      el("td", { class: "actions" }, ...this.actions(connection, { test, edit, remove, used })),
    );
    row.dataset.name = connection.name;
    return row;
  }

  /** "Mine" for the user's own, else its workspace's name. */
  workspaceName(connection) {
    const { workspace } = connection;
    return workspace?.id === this.personalId ? "Mine" : (workspace?.name ?? "");
  }

  /** Test, Edit and Delete where the user manages the connection; who does, where they do not. */
  actions(connection, { test, edit, remove, used }) {
    if (!this.managed.has(connection.workspace?.id)) {
      const name = connection.workspace?.name ?? "its workspace";
      return [el("small", { class: "hint", testid: "connection-managed-by", text: `Managed by the admins of ${name}` })];
    }
    return [
      el("div", { class: "connection-actions" }, test, edit),
      el(
        "details",
        { class: "confirm" },
        el("summary", { testid: "connection-delete-open", text: "Delete…" }),
        el("p", { text: used }),
        remove,
      ),
    ];
  }

  /** Test: the server connects from a sandbox and says what it found; the row shows it. */
  async test(connection, button, showOutcome) {
    button.disabled = true;
    button.textContent = "Testing…";
    showOutcome({ testing: true });
    try {
      const answer = await this.api.post(`${this.url}/${connection.id}/test`);
      this.tested.set(connection.id, answer);
      await this.load(); // the test stored what it found: the tables, the outcome
    } catch (error) {
      showOutcome({ ok: false, message: error.message });
      button.disabled = false;
      button.textContent = "Test";
    }
  }

  async remove(connection, button) {
    button.disabled = true;
    try {
      await this.api.delete(`${this.url}/${connection.id}`);
      this.tested.delete(connection.id);
      if (this.form.editing?.id === connection.id) this.form.reset();
      await this.load();
    } catch (error) {
      button.disabled = false;
      button.after(el("p", { class: "errorlist", text: error.message }));
    }
  }

  /** The form's connection added (a file kind's as a multipart upload) or its changes saved. */
  async save({ body, file, editing }) {
    if (editing) {
      await this.api.patch(`${this.url}/${editing.id}`, body);
      this.tested.delete(editing.id); // what it found was for the connection as it was
    } else if (file) {
      const { options, read_only: readOnly, ...fields } = body;
      await this.api.upload(this.url, file, () => {}, {
        ...fields,
        read_only: String(readOnly),
        options: JSON.stringify(options),
      });
    } else {
      await this.api.post(this.url, body);
    }
    await this.load();
  }
}

const MANAGERS = new Set(["owner", "admin"]); // the roles that manage a workspace's connections

function kindLine(connection) {
  const kind = kindName(connection.kind);
  if (!SQL_KINDS.has(connection.kind)) return kind;
  return `${kind} · ${connection.read_only ? "read-only" : "read and write"}`;
}

/** Where the connection reaches: its URL, its file, its bucket. */
function where(connection) {
  const { file, options = {} } = connection;
  if (file) return file.size == null ? file.name : `${file.name} (${humanSize(file.size)})`;
  if (connection.kind === "s3") {
    const bucket = [options.bucket, options.prefix].filter(Boolean).join("/");
    return [connection.url, bucket && `s3://${bucket}`].filter(Boolean).join(" · ");
  }
  if (connection.kind === "http" && options.header) {
    return `${connection.url} · ${options.header}: ${options.scheme ? `${options.scheme} ` : ""}…`;
  }
  return connection.url ?? "";
}

function checkedAt(connection) {
  const at = connection.checked?.at;
  if (!at) return [];
  const time = el("time", { text: new Date(at).toLocaleString(), attrs: { datetime: at } });
  return [el("br"), el("small", { class: "hint" }, "tested ", time)];
}

/** "12 tables", opening to their names (and columns' count). */
function tablesList(connection) {
  const tables = tablesOf(connection);
  if (!tables.length) return el("span", { class: "hint", text: "—" });
  const items = tables.map((table) => {
    const columns = Array.isArray(table.columns) ? table.columns : [];
    return el("li", { text: table.name, attrs: { title: columns.map((c) => `${c.name} ${c.type}`).join(", ") } });
  });
  return el(
    "details",
    { class: "connection-tables", testid: "connection-tables" },
    el("summary", { text: `${tables.length} table${tables.length === 1 ? "" : "s"}` }),
    el("ul", {}, ...items),
  );
}

const root = document.getElementById("connections");
if (root) {
  new ConnectionsPage(root, new Api(root.dataset.csrfToken), root.dataset.apiUrl).load();
}
