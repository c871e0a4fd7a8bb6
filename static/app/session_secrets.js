// The session's secrets, under its connections in the sidebar (owner only): environment variables
// its kernel gets (an API key for a library). Write-only: the list shows names, never values,
// and every output shows a value as «secret:NAME».
import { el } from "./dom.js";

const NAME_PATTERN = "[A-Za-z_][A-Za-z0-9_]{0,127}"; // an environment variable's name

export class SessionSecrets {
  constructor({ api, apiBase }) {
    this.api = api;
    this.url = `${apiBase}/secrets`;
    this.list = el("ul", { class: "session-secrets", testid: "session-secrets" });
    this.name = el("input", {
      testid: "secret-name",
      attrs: {
        required: "",
        pattern: NAME_PATTERN,
        maxlength: "128",
        placeholder: "OPENAI_API_KEY",
        autocomplete: "off",
        "aria-label": "Variable name",
      },
    });
    this.value = el("input", {
      testid: "secret-value",
      attrs: {
        type: "password",
        required: "",
        autocomplete: "new-password",
        placeholder: "value",
        "aria-label": "Value",
      },
    });
    this.add = el("button", { testid: "secret-add", text: "Add", attrs: { type: "submit" } });
    this.error = el("p", { class: "errorlist", testid: "secrets-error", attrs: { role: "alert" } });
    this.error.hidden = true;
    const form = el("form", { class: "secret-form", testid: "secret-form" }, this.name, this.value, this.add);
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      this.save(form);
    });
    this.element = el(
      "section",
      { class: "secrets-panel stack", testid: "secrets-panel" },
      el("h3", { text: "Secrets" }),
      el("small", {
        class: "hint",
        text:
          "Environment variables for this session's kernel, e.g. an API key." +
          " Values are never shown again, nor sent to the model.",
      }),
      this.list,
      form,
      this.error,
    );
  }

  async refresh() {
    try {
      this.show((await this.api.get(this.url)).secrets ?? []);
    } catch (error) {
      this.showError(error.message);
    }
  }

  show(secrets) {
    this.list.replaceChildren(...secrets.map((secret) => this.item(secret.name)));
  }

  item(name) {
    const remove = el("button", {
      class: "link danger",
      testid: "secret-delete",
      text: "Delete",
      attrs: { type: "button" },
    });
    const url = `${this.url}/${encodeURIComponent(name)}`;
    remove.addEventListener("click", () => this.act(() => this.api.delete(url), remove));
    const item = el("li", { testid: "session-secret" }, el("code", { testid: "secret-listed-name", text: name }), remove);
    item.dataset.name = name;
    return item;
  }

  async save(form) {
    const body = { name: this.name.value.trim(), value: this.value.value };
    const saved = await this.act(() => this.api.post(this.url, body), this.add);
    if (saved) form.reset();
  }

  /** ``request()`` then the list again; true when it succeeded. */
  async act(request, button) {
    button.disabled = true;
    this.showError("");
    try {
      await request();
      await this.refresh();
      return true;
    } catch (error) {
      this.showError(error.message);
      return false;
    } finally {
      button.disabled = false;
    }
  }

  showError(message) {
    this.error.textContent = message;
    this.error.hidden = !message;
  }
}
