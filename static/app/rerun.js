// "Run again on another file…": pick which of the session's uploads to replace and the file that
// stands in for it (an upload of the session, or a new one, read into the sandbox first); the
// server compares their columns and answers with a new session that runs the same cells, or
// says which columns are missing before anything runs.
import { el } from "./dom.js";

const POLL_MS = 500;

export class RerunDialog {
  constructor({ api, apiBase, filesUrl, turns }) {
    this.api = api;
    this.apiBase = apiBase;
    this.filesUrl = filesUrl;
    this.opener = el("button", {
      class: "kernel-restart",
      testid: "rerun-open",
      text: "Run again on another file…",
      attrs: { type: "button" },
    });
    this.replace = el("select", { testid: "rerun-replace" });
    this.using = el("select", { testid: "rerun-with" });
    this.input = el("input", { testid: "rerun-upload", attrs: { type: "file" } });
    this.message = el("p", { class: "rerun-message", testid: "rerun-message", attrs: { role: "alert" } });
    this.run = el("button", { class: "primary", testid: "rerun-run", text: "Run again", attrs: { type: "submit" } });
    const cancel = el("button", { class: "link", text: "Cancel", attrs: { type: "button" } });
    this.form = el(
      "form",
      { class: "rerun-dialog", testid: "rerun-dialog", attrs: { "aria-label": "Run again on another file" } },
      el("p", {
        class: "rerun-help",
        text:
          "The cells that made this session's state run again, in order, in a new session, with the new" +
          " file in the place of the one it replaces. It needs the same columns (more are fine).",
      }),
      el("label", {}, "Replace ", this.replace),
      el("label", {}, "with ", this.using),
      el("label", { class: "rerun-upload" }, "or upload a new file ", this.input),
      this.message,
      el("div", { class: "rerun-actions" }, this.run, cancel),
    );
    this.form.hidden = true; // this.opener goes in the header, this.form floats below it

    this.opener.addEventListener("click", () => this.open());
    cancel.addEventListener("click", () => this.close());
    this.input.addEventListener("change", () => (this.using.disabled = this.input.files.length > 0));
    this.form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.submit();
    });
    turns.addEventListener("change", () => (this.opener.disabled = turns.running));
  }

  async open() {
    this.say("");
    this.form.hidden = false;
    this.opener.hidden = true;
    const { files = [] } = await this.api.get(this.filesUrl);
    const uploads = files.filter((file) => file.kind === "upload");
    this.replace.replaceChildren(...uploads.map((file) => option(file)));
    this.using.replaceChildren(
      el("option", { text: "— choose —", attrs: { value: "" } }),
      ...uploads.filter((file) => file.status === "ready").map((file) => option(file)),
    );
    if (!uploads.length) this.say("This session has no uploaded file to replace.");
  }

  close() {
    this.form.hidden = true;
    this.opener.hidden = false;
    this.input.value = "";
    this.using.disabled = false;
  }

  say(text) {
    this.message.textContent = text;
    this.message.hidden = !text;
  }

  async submit() {
    this.run.disabled = true;
    try {
      const replace = Number(this.replace.value);
      let using = Number(this.using.value);
      if (this.input.files.length) using = await this.uploaded(this.input.files[0]);
      if (!replace || !using) return this.say("Choose the file to replace and the one to use instead.");
      this.say("Comparing the columns…");
      const answer = await this.api.post(`${this.apiBase}/rerun`, { replace, with: using });
      window.location.assign(answer.url);
    } catch (error) {
      this.say(error.message); // a 422 names the missing columns
    } finally {
      this.run.disabled = false;
    }
  }

  /** Upload the new file into this session and wait until the sandbox has described it. */
  async uploaded(file) {
    this.say(`Uploading ${file.name}…`);
    const answer = await this.api.upload(`${this.apiBase}/files`, file, () => {});
    const id = answer.file.id;
    this.say(`Reading ${file.name} in the sandbox…`);
    for (;;) {
      const { files = [] } = await this.api.get(this.filesUrl);
      const found = files.find((entry) => entry.kind === "upload" && entry.id === id);
      if (!found) throw new Error(`${file.name} is gone from the session`);
      if (found.status !== "placing") return id;
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  }
}

function option(file) {
  const shape = file.columns != null ? ` (${file.columns} columns)` : "";
  return el("option", { text: `${file.name}${shape}`, attrs: { value: String(file.id) } });
}
