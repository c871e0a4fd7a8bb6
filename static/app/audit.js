// The audit log page (templates/analyst/audit.html): a workspace's entries, newest first, filtered
// by user and action, a page at a time ("Older"), and "Export JSON lines" with the same filters.
import { Api } from "./api.js";
import { el } from "./dom.js";

class AuditPage {
  constructor(root, form, api, url) {
    Object.assign(this, { root, form, api, url });
    this.rows = el("tbody", { testid: "audit-rows" });
    this.status = el("p", { class: "hint", testid: "audit-status", attrs: { "aria-live": "polite" } });
    this.older = el("button", { testid: "audit-older", text: "Older", attrs: { type: "button", hidden: "" } });
    this.older.addEventListener("click", () => this.load(this.next));
    const head = el("tr", {}, ...["When", "User", "Action", "Target", "Detail", "Address"].map((text) => el("th", { text })));
    root.replaceChildren(el("table", { class: "sessions audit" }, el("thead", {}, head), this.rows), this.status, this.older);
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.rows.replaceChildren();
      this.load(null);
    });
    form.addEventListener("input", () => this.exportLink());
    this.exportLink();
  }

  filters() {
    const query = new URLSearchParams();
    for (const name of ["user", "action"]) {
      const value = this.form.elements[name].value.trim();
      if (value) query.set(name, value);
    }
    return query;
  }

  exportLink() {
    const query = this.filters().toString();
    this.form.querySelector("[data-testid=audit-export]").href = `${this.url}.jsonl${query ? `?${query}` : ""}`;
  }

  async load(before) {
    const query = this.filters();
    if (before) query.set("before", before);
    try {
      const answer = await this.api.get(`${this.url}?${query}`);
      this.rows.append(...answer.entries.map((entry) => row(entry)));
      this.next = answer.next;
      this.older.hidden = answer.next == null;
      this.status.textContent = this.rows.children.length ? "" : "Nothing recorded matches.";
    } catch (error) {
      this.status.textContent = error.message;
    }
  }
}

function row(entry) {
  const when = el("time", { text: new Date(entry.at).toLocaleString(), attrs: { datetime: entry.at } });
  const detail = Object.keys(entry.detail ?? {}).length ? JSON.stringify(entry.detail) : "";
  return el(
    "tr",
    { testid: "audit-entry" },
    el("td", {}, when),
    el("td", { text: entry.user || "—" }),
    el("td", { text: entry.action }),
    el("td", { text: entry.target }),
    el("td", {}, el("code", { text: detail })),
    el("td", { text: entry.address ?? "" }),
  );
}

const root = document.getElementById("audit");
if (root) {
  const form = document.querySelector("[data-testid=audit-filters]");
  new AuditPage(root, form, new Api(root.dataset.csrfToken), root.dataset.apiUrl).load(null);
}
