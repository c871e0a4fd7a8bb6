// The Connections page's form: add a connection, or edit one. Its fields follow the kind; the
// secret (a password, a key, a token) is write-only: editing shows "unchanged" and sends "" to keep it.
import { el } from "./dom.js";
import { KIND_NAMES, SQL_KINDS } from "./connection_text.js";
import { humanSize } from "./format.js";

// Each kind's fields, by where a value goes in the API's body: "url", "secret", "file", or an
// option (options.<key>).
const FIELDS = {
  postgres: [
    { key: "url", label: "URL", placeholder: "postgresql://analyst@db.example.com:5432/sales", required: true },
    { key: "secret", label: "Password" },
  ],
  mysql: [
    { key: "url", label: "URL", placeholder: "mysql://analyst@db.example.com:3306/sales", required: true },
    { key: "secret", label: "Password" },
  ],
  sqlite: [{ key: "file", label: "Database file", accept: ".sqlite,.sqlite3,.db" }],
  duckdb: [{ key: "file", label: "Database file", accept: ".duckdb,.db" }],
  s3: [
    { key: "url", label: "Endpoint URL", placeholder: "https://s3.eu-west-1.amazonaws.com", required: true },
    { key: "bucket", option: true, label: "Bucket", required: true },
    { key: "prefix", option: true, label: "Prefix", placeholder: "exports/ (optional)" },
    { key: "key_id", option: true, label: "Access key ID" },
    { key: "secret", label: "Secret access key" },
    { key: "region", option: true, label: "Region", placeholder: "us-east-1 (optional)" },
  ],
  http: [
    { key: "url", label: "Base URL", placeholder: "https://api.example.com/v1", required: true },
    { key: "header", option: true, label: "Header name", value: "Authorization" },
    {
      key: "scheme",
      option: true,
      label: "Scheme",
      value: "Bearer",
      hint: "Sent as “Bearer <token>”; empty for the token alone.",
    },
    { key: "secret", label: "Token" },
  ],
};

const NAME_PATTERN = "[a-z][a-z0-9_]{0,62}"; // an identifier: connection("name"), %%sql name

export class ConnectionForm {
  /** ``onSave({body, file, editing})``: the connection to add (editing null) or the changes to
   * ``editing`` (a connection); it resolves when saved and throws an ApiError when refused. */
  constructor({ onSave }) {
    this.onSave = onSave;
    this.editing = null;
    this.heading = el("h2");
    this.name = el("input", {
      testid: "connection-name",
      attrs: {
        name: "name",
        required: "",
        pattern: NAME_PATTERN,
        maxlength: "63",
        autocomplete: "off",
        placeholder: "warehouse",
      },
    });
    // Where a new connection goes: the user's own, or a workspace they manage connections of.
    this.workspace = el("select", { testid: "connection-workspace", attrs: { name: "workspace" } });
    this.workspaceLabel = el("label", {}, "Workspace", this.workspace, hint("Its admins manage it; its sessions may use it."));
    this.kind = el("select", { testid: "connection-kind", attrs: { name: "kind" } });
    for (const [kind, text] of Object.entries(KIND_NAMES)) {
      this.kind.append(el("option", { text, attrs: { value: kind } }));
    }
    this.fields = el("div", { class: "connection-fields" });
    this.readOnly = el("input", { testid: "connection-read-only", attrs: { type: "checkbox", name: "read_only" } });
    this.readOnlyLabel = el(
      "label",
      {},
      this.readOnly,
      " Read-only",
      hint(" (sessions open it read-only; a write is refused)"),
    );
    this.error = el("p", { class: "errorlist", testid: "connection-form-error", attrs: { role: "alert" } });
    this.save = el("button", { testid: "connection-save", attrs: { type: "submit" } });
    this.cancel = el("button", {
      class: "link",
      testid: "connection-cancel",
      text: "Cancel",
      attrs: { type: "button" },
    });
    this.element = el(
      "form",
      { class: "connection-form", testid: "connection-form" },
      this.heading,
      el(
        "div",
        { class: "connection-fields" },
        el("label", {}, "Name", this.name, hint('Lower-case letters, digits and _: what code calls it, connection("warehouse").')),
        el("label", {}, "Kind", this.kind),
        this.workspaceLabel,
      ),
      this.fields,
      this.readOnlyLabel,
      this.error,
      el("div", { class: "row" }, this.save, this.cancel),
    );
    this.kind.addEventListener("change", () => this.showKind());
    this.cancel.addEventListener("click", () => this.reset());
    this.element.addEventListener("submit", (e) => {
      e.preventDefault();
      this.submit();
    });
    this.reset();
  }

  /** Back to an empty Add form. */
  reset() {
    this.editing = null;
    this.element.reset();
    this.heading.textContent = "Add a connection";
    this.save.textContent = "Add";
    this.cancel.hidden = true;
    this.kind.disabled = false;
    this.workspace.disabled = false;
    this.workspaceLabel.hidden = this.workspace.options.length < 2;
    this.readOnly.checked = true; // the default: a session reads
    this.showError("");
    this.showKind();
  }

  /** The form filled in with ``connection`` to change it (its secret left unchanged unless typed). */
  edit(connection) {
    this.reset();
    this.editing = connection;
    this.heading.textContent = `Edit “${connection.name}”`;
    this.save.textContent = "Save";
    this.cancel.hidden = false;
    this.name.value = connection.name;
    this.kind.value = connection.kind;
    this.kind.disabled = true; // another kind is another connection
    this.workspace.value = String(connection.workspace?.id ?? "");
    this.workspace.disabled = true; // it stays where it was added
    this.readOnly.checked = Boolean(connection.read_only);
    this.showKind(connection);
    this.element.scrollIntoView({ block: "start" });
    this.name.focus();
  }

  /** The workspaces a new connection may go to, ``[{id, name, personal}]``, the personal one first. */
  setWorkspaces(workspaces) {
    this.workspace.replaceChildren(
      ...workspaces.map((w) =>
        el("option", { text: w.personal ? "Mine (personal)" : w.name, attrs: { value: String(w.id) } }),
      ),
    );
    this.personalId = String(workspaces.find((w) => w.personal)?.id ?? "");
    this.workspaceLabel.hidden = workspaces.length < 2;
  }

  /** The kind's own fields, filled from ``connection`` when one is edited. */
  showKind(connection = null) {
    const kind = this.kind.value;
    this.inputs = new Map();
    const fields = FIELDS[kind].map((field) => {
      if (field.key === "file" && connection) {
        const { file } = connection;
        const kept = file ? `${file.name}${file.size == null ? "" : ` (${humanSize(file.size)})`}` : "as it is";
        return el("p", {
          class: "hint",
          testid: "connection-file-kept",
          text: `The file stays ${kept}; to use another, add a new connection.`,
        });
      }
      const input = inputFor(field, connection);
      this.inputs.set(field.key, input);
      return el("label", {}, field.label, input, ...(field.hint ? [hint(field.hint)] : []));
    });
    this.fields.replaceChildren(...fields);
    this.readOnlyLabel.hidden = !SQL_KINDS.has(kind);
  }

  async submit() {
    const kind = this.kind.value;
    const body = { name: this.name.value.trim(), kind, read_only: this.readOnly.checked, options: {} };
    let file = null;
    for (const field of FIELDS[kind]) {
      const input = this.inputs.get(field.key);
      if (!input) continue;
      if (field.key === "file") file = input.files[0] ?? null;
      else if (field.option) body.options[field.key] = input.value.trim();
      else body[field.key] = field.key === "secret" ? input.value : input.value.trim();
    }
    if (!this.editing && this.workspace.value && this.workspace.value !== this.personalId) {
      body.workspace = Number(this.workspace.value);
    }
    const change = this.editing ? changes(this.editing, body) : body;
    this.save.disabled = true;
    this.showError("");
    try {
      await this.onSave({ body: change, file, editing: this.editing });
      this.reset();
    } catch (error) {
      this.showError(error.message);
    } finally {
      this.save.disabled = false;
    }
  }

  showError(message) {
    this.error.textContent = message;
    this.error.hidden = !message;
  }
}

/** What of ``body`` differs from ``connection``: a PATCH changes only that, so that what the last
 * Test found stays when nothing it depends on changed. The secret goes when one was typed; an s3
 * connection's URL and options go together (its endpoint_url follows the URL). */
function changes(connection, body) {
  const change = {};
  for (const key of ["name", "read_only", "url"]) {
    if (key in body && body[key] !== connection[key]) change[key] = body[key];
  }
  if (body.secret) change.secret = body.secret;
  const saved = connection.options ?? {};
  const options = Object.entries(body.options);
  if (options.some(([key, value]) => value !== (saved[key] ?? "")) || (connection.kind === "s3" && "url" in change)) {
    change.options = body.options;
    if (connection.kind === "s3") change.url = body.url;
  }
  return change;
}

function hint(text) {
  return el("small", { class: "hint", text });
}

function inputFor(field, connection) {
  const attrs = { name: field.key, autocomplete: "off" };
  if (field.placeholder) attrs.placeholder = field.placeholder;
  if (field.key === "file") {
    Object.assign(attrs, { type: "file", accept: field.accept, required: "" });
  } else if (field.key === "secret") {
    // Write-only: never filled in; left empty while editing, the saved one stays.
    Object.assign(attrs, { type: "password", autocomplete: "new-password" });
    if (connection?.has_secret) attrs.placeholder = "unchanged";
  } else if (field.required) {
    attrs.required = "";
  }
  const testid = field.option ? `connection-option-${field.key}` : `connection-${field.key}`;
  const input = el("input", { testid, attrs });
  if (field.key !== "secret" && field.key !== "file") {
    const saved = field.option ? connection?.options?.[field.key] : connection?.[field.key];
    input.value = saved ?? field.value ?? "";
  }
  return input;
}
