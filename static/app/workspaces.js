// The Workspaces pages (templates/analyst/workspaces.html and workspace.html): the list of the
// user's workspaces with a form that makes one; a workspace's members (add, change a role,
// remove, leave) and its invitations (a link or an e-mail; revoke). All through /api/workspaces;
// every name shown goes in as text.
import { Api } from "./api.js";
import { el } from "./dom.js";

const button = (text, testid) => el("button", { text, testid, attrs: { type: "button" } });

class WorkspacesList {
  constructor(root, api) {
    Object.assign(this, { root, api });
    this.list = el("div", { testid: "workspaces-list", attrs: { "aria-live": "polite" } });
    this.status = el("p", { class: "errorlist", testid: "workspaces-error", attrs: { role: "status" } });
    const name = el("input", { testid: "workspace-new-name", attrs: { placeholder: "Name of a new workspace", maxlength: "100", required: "", "aria-label": "Workspace name" } });
    const form = el("form", { class: "row", testid: "workspace-create-form" }, name, el("button", { text: "Create workspace", testid: "workspace-create", attrs: { type: "submit" } }));
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.create(name);
    });
    root.replaceChildren(this.list, form, this.status);
  }

  async load() {
    try {
      this.show((await this.api.get("/api/workspaces")).workspaces);
    } catch (error) {
      this.status.textContent = error.message;
    }
  }

  show(workspaces) {
    const row = (w) =>
      el(
        "tr",
        { testid: "workspace-row" },
        el("td", {}, el("a", { text: w.name, testid: "workspace-link", attrs: { href: `/workspaces/${w.id}/` } })),
        el("td", { text: w.personal ? `${w.role} (personal)` : w.role }),
        el("td", {}, el("a", { text: "Sessions", attrs: { href: `/sessions/?workspace=${w.id}` } })),
      );
    const head = el("tr", {}, ...["Name", "Your role", ""].map((text) => el("th", { text })));
    this.list.replaceChildren(el("table", { class: "sessions" }, el("thead", {}, head), el("tbody", {}, ...workspaces.map(row))));
  }

  async create(input) {
    try {
      const made = await this.api.post("/api/workspaces", { name: input.value });
      window.location.assign(`/workspaces/${made.id}/`);
    } catch (error) {
      this.status.textContent = error.message;
    }
  }
}

class WorkspacePage {
  constructor(root, api) {
    Object.assign(this, { root, api });
    this.base = `/api/workspaces/${root.dataset.workspaceId}`;
    this.manages = root.dataset.manages === "true";
    this.grantable = root.dataset.grantable.split(",");
    this.members = el("div", { testid: "workspace-members", attrs: { "aria-live": "polite" } });
    this.invitations = el("div", { testid: "workspace-invitations" });
    this.created = el("div", { testid: "invitation-created" });
    this.status = el("p", { class: "errorlist", testid: "workspace-error", attrs: { role: "status" } });
    const parts = [el("h2", { text: "Members" }), this.members];
    if (this.manages) parts.push(this.addForm(), el("h2", { text: "Invitations" }), this.inviteForm(), this.created, this.invitations);
    root.replaceChildren(...parts, this.status);
  }

  roleSelect(testid, chosen) {
    const select = el("select", { testid, attrs: { "aria-label": "Role" } });
    for (const role of this.grantable) select.append(el("option", { text: role, attrs: { value: role } }));
    if (chosen && this.grantable.includes(chosen)) select.value = chosen;
    else select.value = "editor";
    return select;
  }

  addForm() {
    const who = el("input", { testid: "member-add-who", attrs: { placeholder: "Username or e-mail", required: "", "aria-label": "Username or e-mail" } });
    const role = this.roleSelect("member-add-role");
    const form = el("form", { class: "row", testid: "member-add-form" }, who, role, el("button", { text: "Add member", testid: "member-add", attrs: { type: "submit" } }));
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const key = who.value.includes("@") ? "email" : "username";
      this.act(() => this.api.post(`${this.base}/members`, { [key]: who.value.trim(), role: role.value }), () => (who.value = ""));
    });
    return form;
  }

  inviteForm() {
    const email = el("input", { testid: "invitation-email", attrs: { type: "email", placeholder: "E-mail (optional: else a link)", "aria-label": "E-mail to invite" } });
    const role = this.roleSelect("invitation-role");
    const form = el("form", { class: "row", testid: "invitation-form" }, email, role, el("button", { text: "Invite", testid: "invitation-create", attrs: { type: "submit" } }));
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const body = { role: role.value, ...(email.value.trim() ? { email: email.value.trim() } : {}) };
      this.act(
        () => this.api.post(`${this.base}/invitations`, body),
        (made) => {
          const sent = body.email ? `Sent to ${body.email}. ` : "";
          this.created.replaceChildren(
            el("p", { text: `${sent}The link, shown only now (it works once, until ${new Date(made.expires_at).toLocaleString()}):` }),
            el("code", { class: "token-secret", text: made.url, testid: "invitation-url" }),
          );
          email.value = "";
        },
      );
    });
    return form;
  }

  async act(request, then = () => {}) {
    this.status.textContent = "";
    try {
      then(await request());
      await this.load();
    } catch (error) {
      this.status.textContent = error.message;
    }
  }

  async load() {
    try {
      this.showMembers((await this.api.get(`${this.base}/members`)).members);
      if (this.manages) this.showInvitations((await this.api.get(`${this.base}/invitations`)).invitations);
    } catch (error) {
      this.status.textContent = error.message;
    }
  }

  showMembers(members) {
    const me = document.querySelector(".who")?.textContent;
    const row = (m) => {
      const cells = [el("td", { text: m.username, testid: "member-name" })];
      const remove = m.username === me ? button("Leave", "member-leave") : button("Remove", "member-remove");
      remove.addEventListener("click", () => this.act(() => this.api.delete(`${this.base}/members/${m.id}`), () => m.username === me && window.location.assign("/workspaces/")));
      if (this.manages && this.grantable.includes(m.role)) {
        const role = this.roleSelect("member-role", m.role);
        role.addEventListener("change", () => this.act(() => this.api.patch(`${this.base}/members/${m.id}`, { role: role.value })));
        cells.push(el("td", {}, role), el("td", {}, remove));
      } else {
        cells.push(el("td", { text: m.role, testid: "member-role-text" }), el("td", {}, m.username === me || this.manages ? remove : ""));
      }
      return el("tr", { testid: "member-row" }, ...cells);
    };
    const head = el("tr", {}, ...["Member", "Role", ""].map((text) => el("th", { text })));
    this.members.replaceChildren(el("table", { class: "sessions" }, el("thead", {}, head), el("tbody", {}, ...members.map(row))));
  }

  showInvitations(invitations) {
    if (!invitations.length) {
      this.invitations.replaceChildren(el("p", { class: "empty", text: "No invitation waiting." }));
      return;
    }
    const row = (i) => {
      const revoke = button("Revoke", "invitation-revoke");
      revoke.addEventListener("click", () => this.act(() => this.api.delete(`${this.base}/invitations/${i.id}`)));
      const state = i.expired ? "expired" : `until ${new Date(i.expires_at).toLocaleString()}`;
      return el("tr", { testid: "invitation-row" }, el("td", { text: i.email || "link" }), el("td", { text: i.role }), el("td", { text: state }), el("td", {}, revoke));
    };
    const head = el("tr", {}, ...["To", "Role", "Usable", ""].map((text) => el("th", { text })));
    this.invitations.replaceChildren(el("table", { class: "sessions" }, el("thead", {}, head), el("tbody", {}, ...invitations.map(row))));
  }
}

const root = document.getElementById("workspaces");
if (root) {
  const api = new Api(root.dataset.csrfToken);
  (root.dataset.page === "workspace" ? new WorkspacePage(root, api) : new WorkspacesList(root, api)).load();
}
