// The session's connections, in its sidebar (its tools; owner only): those attached, each with
// Detach; a picker of the user's others to attach; a link to the Connections page. Tells
// ``onChange(attached)`` what is attached (the SQL cell's connection picker lists them).
import { el } from "./dom.js";
import { kindName, tablesText } from "./connection_text.js";

export class SessionConnections {
  constructor({ api, apiBase, onChange = () => {} }) {
    Object.assign(this, { api, onChange });
    this.url = `${apiBase}/connections`;
    this.attached = el("ul", { class: "session-connections", testid: "session-connections" });
    this.picker = el("select", { testid: "connection-picker", attrs: { "aria-label": "A connection to attach" } });
    this.attach = el("button", { testid: "connection-attach", text: "Attach", attrs: { type: "button" } });
    this.attach.addEventListener("click", () => this.attachChosen());
    this.pick = el("div", { class: "connection-pick" }, this.picker, this.attach);
    this.none = el("small", { class: "hint", testid: "connection-none" });
    this.error = el("p", { class: "errorlist", testid: "session-connections-error", attrs: { role: "alert" } });
    this.error.hidden = true;
    this.element = el(
      "section",
      { class: "connections-panel stack", testid: "connections-panel" },
      el("h2", { text: "Connections" }),
      this.attached,
      this.pick,
      this.none,
      this.error,
      el("a", { testid: "connections-page-link", text: "Manage connections", attrs: { href: "/connections/" } }),
    );
  }

  async refresh() {
    try {
      const [attached, mine] = await Promise.all([this.api.get(this.url), this.api.get("/api/connections")]);
      this.show(attached.connections ?? [], mine.connections ?? []);
      this.showError("");
    } catch (error) {
      this.showError(error.message);
    }
  }

  show(attached, mine) {
    this.attached.replaceChildren(...attached.map((c) => this.item(c)));
    const ids = new Set(attached.map((c) => c.id));
    const others = mine.filter((c) => !ids.has(c.id));
    this.picker.replaceChildren(
      ...others.map((c) => el("option", { text: `${c.name} (${kindName(c.kind)})`, attrs: { value: c.name } })),
    );
    this.pick.hidden = !others.length;
    this.none.hidden = Boolean(others.length);
    this.none.textContent = mine.length
      ? "Every connection of yours is attached."
      : "None yet: add a database, a bucket or an API on the Connections page.";
    this.onChange(attached);
  }

  item(connection) {
    const detach = el("button", {
      class: "link danger",
      testid: "connection-detach",
      text: "Detach",
      attrs: { type: "button" },
    });
    detach.addEventListener("click", () => this.act(() => this.api.delete(`${this.url}/${connection.id}`), detach));
    // What its last look found: its tables, or that it could not be reached (its words in the title).
    const failed = connection.checked?.ok === false;
    const found = failed ? "could not connect" : tablesText(connection);
    const note = el("small", {
      class: "hint",
      testid: "session-connection-note",
      text: [kindName(connection.kind), found].filter(Boolean).join(" · "),
    });
    if (failed) note.title = connection.checked.message ?? "";
    const item = el(
      "li",
      { testid: "session-connection" },
      el("strong", { class: "session-connection-name", text: connection.name }),
      note,
      detach,
    );
    item.dataset.name = connection.name;
    return item;
  }

  /** Attach the picked one: the server also reads its tables again, which takes a moment. */
  async attachChosen() {
    const name = this.picker.value;
    if (!name) return;
    this.attach.textContent = "Attaching…";
    await this.act(() => this.api.post(this.url, { name }), this.attach);
    this.attach.textContent = "Attach";
  }

  async act(request, button) {
    button.disabled = true;
    try {
      await request();
      await this.refresh();
    } catch (error) {
      this.showError(error.message);
    } finally {
      button.disabled = false;
    }
  }

  showError(message) {
    this.error.textContent = message;
    this.error.hidden = !message;
  }
}
