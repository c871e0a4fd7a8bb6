// The composer (owner only): ask a question or run a code cell, pick the model, stop the turn.
import { CodeEditor } from "./code_editor.js";
import { el } from "./dom.js";

const MODES = {
  chat: {
    placeholder: "Ask about your data…",
    hint: "Enter to send · Shift+Enter for a new line",
    button: "Send",
  },
  code: {
    placeholder: "Python, run in the session's kernel…",
    hint: "Shift+Enter to run · Tab indents",
    button: "Run",
  },
};

export class Composer {
  /** files: the files panel, whose uploads still being sent a question waits for (or null).
   * cellLanguage: the code cell's Python/SQL switch (static/app/sql_cell.js), or null. */
  constructor({ api, apiBase, models, model, unavailable, turns, files = null, cellLanguage = null, queue = null }) {
    Object.assign(this, { api, apiBase, turns, files, cellLanguage, queue });
    this.sending = false;
    this.unavailable = unavailable; // why the session's model cannot answer here; "" when it can

    this.input = el("textarea", {
      class: "composer-input",
      testid: "composer-input",
      attrs: { rows: "1", "aria-label": "Message or code" },
    });
    this.toggle = el(
      "button",
      {
        class: "mode-toggle",
        testid: "mode-toggle",
        attrs: { type: "button", title: "Switch between asking and running code yourself" },
      },
      el("span", { text: "Ask" }),
      el("span", { text: "Code cell" }),
    );
    this.picker = modelPicker(models, model, unavailable);
    this.hint = el("span", { class: "composer-hint" });
    this.stopButton = el("button", {
      class: "stop",
      testid: "stop",
      text: "Stop",
      attrs: { type: "button" },
    });
    this.sendButton = el("button", { class: "send", testid: "send", attrs: { type: "submit" } });
    this.sendReason = el("span", { class: "send-reason", testid: "send-reason", attrs: { role: "status" } });
    this.errorBox = el("p", { class: "composer-error", attrs: { role: "alert" } });
    this.errorBox.hidden = true;
    this.waiting = el("p", { class: "composer-waiting", testid: "composer-waiting", attrs: { role: "status" } });
    this.waiting.hidden = true;
    // Editing a past cell: its seq, sent as edited_from; the note says so, with a way out.
    // Editing a past question: its turn, which the edited one branches from (a new session).
    this.editing = null;
    this.editingQuestion = null;
    const stopEditing = el("button", { class: "link", text: "Cancel", attrs: { type: "button" } });
    stopEditing.addEventListener("click", () => this.stopEditing(true));
    this.editText = el("span", { class: "composer-editing-text" });
    // A question whose kernel state is no longer kept: branching starts from an empty kernel, if asked to.
    this.emptyKernel = el("button", {
      class: "link",
      testid: "branch-empty-kernel",
      text: "Branch with an empty kernel",
      attrs: { type: "button" },
    });
    this.emptyKernel.hidden = true;
    this.emptyKernel.addEventListener("click", () => this.send({ emptyKernel: true }));
    this.editNote = el(
      "p",
      { class: "composer-editing", testid: "composer-editing" },
      this.editText,
      " ",
      this.emptyKernel,
      " ",
      stopEditing,
    );
    this.editNote.hidden = true;
    this.form = el(
      "form",
      { class: "composer" },
      this.input,
      el(
        "div",
        { class: "composer-bar" },
        this.toggle,
        ...(cellLanguage ? [cellLanguage.element] : []),
        this.picker,
        this.hint,
        el("span", { class: "spacer" }),
        this.stopButton,
        this.sendReason,
        this.sendButton,
      ),
    );
    this.element = el("div", { class: "composer-area" });
    this.element.append(this.editNote, this.form, this.waiting, this.errorBox);

    this.form.addEventListener("submit", (e) => {
      e.preventDefault();
      this.send();
    });
    this.input.addEventListener("keydown", (e) => this.onKey(e));
    this.input.addEventListener("input", () => this.fit());
    // Code is written in CodeMirror once it is loaded; until then, or if it cannot be, here.
    this.code = null;
    CodeEditor.create({ onRun: () => this.send(), placeholder: MODES.code.placeholder }).then(
      (editor) => this.useEditor(editor),
      (error) => console.warn("The code editor could not be loaded; code is written in a plain text box.", error),
    );
    this.toggle.addEventListener("click", () => {
      this.stopEditing(this.editingQuestion != null);
      this.setMode(this.mode === "chat" ? "code" : "chat");
    });
    this.picker.addEventListener("change", () => this.changeModel());
    this.stopButton.addEventListener("click", () => this.stop());
    turns.addEventListener("change", () => this.showRunning());

    this.setMode("chat");
    this.showRunning();
  }

  /** Asking needs a model that can answer here; a code cell always runs. */
  get blocked() {
    return this.mode === "chat" && Boolean(this.unavailable);
  }

  showSendState() {
    // While a turn runs the server would refuse another (one only saving the kernel aside).
    // Nor while another member's turn runs, unless this one may wait in line behind it.
    const busy = this.turns.running && this.turns.phase !== "saving" && !this.queue?.mayWait;
    this.sendButton.disabled = this.sending || this.blocked || busy;
    this.sendButton.title = busy ? "A turn is running: wait for it, or Stop it" : "";
    this.sendReason.hidden = !this.blocked;
    this.sendReason.textContent = this.blocked ? `${this.unavailable} Code cells still run.` : "";
    this.hint.hidden = this.blocked; // the reason takes its place
  }

  setMode(mode) {
    this.mode = mode;
    const { placeholder, hint, button } = MODES[mode];
    this.form.dataset.mode = mode;
    this.toggle.dataset.mode = mode;
    this.toggle.setAttribute("aria-label", `Mode: ${mode === "chat" ? "Ask" : "Code cell"}`);
    this.input.placeholder = placeholder;
    this.input.spellcheck = mode === "chat";
    this.hint.textContent = hint;
    this.sendButton.textContent = button;
    this.showSendState();
    this.showInput();
  }

  /** The loaded code editor takes the textarea's place in code mode (with what was typed there). */
  useEditor(editor) {
    this.code = editor;
    this.input.after(editor.element);
    if (this.mode === "code") {
      editor.value = this.input.value;
      this.input.value = "";
    }
    // Typed into the hidden textarea as the editor took its place: moved over.
    this.input.addEventListener("input", () => {
      if (this.editingCode) this.moveIntoEditor();
    });
    this.showInput(document.activeElement === this.input);
  }

  moveIntoEditor() {
    this.code.value += this.input.value;
    this.input.value = "";
  }

  /** Whether code is written in the editor (code mode, the editor loaded). */
  get editingCode() {
    return this.mode === "code" && this.code != null;
  }

  /** The current input shown (the textarea, or the editor in code mode), and named composer-input. */
  showInput(focus = true) {
    const editor = this.editingCode;
    this.input.hidden = editor;
    this.form.dataset.editor = this.code ? "codemirror" : "textarea";
    if (this.code) {
      this.code.element.hidden = !editor;
      setTestid(this.code.input, editor);
    }
    setTestid(this.input, !editor);
    if (focus) this.current.focus();
  }

  /** The input written in now: the code editor, or the textarea (both have a value). */
  get current() {
    return this.editingCode ? this.code : this.input;
  }

  /** A past cell's code, to edit and run again as a new cell (``seq``: the original's). */
  edit(code, seq) {
    this.stopEditing(false);
    this.setMode("code");
    this.current.value = this.cellLanguage ? this.cellLanguage.load(code) : code;
    this.editing = seq;
    this.showEditing("Editing a cell: it runs as a new cell in the same kernel, and the original stays.");
  }

  /** A past question, to edit and send into a branch: a new session from just before it. */
  editQuestion(text, turn) {
    this.stopEditing(false);
    this.setMode("chat");
    this.input.value = text;
    this.editingQuestion = turn;
    this.showEditing(
      "Editing a question: sending it makes a branch, a new session from just before it, with the" +
        " kernel's variables as they were then. This session stays as it is.",
    );
  }

  showEditing(text) {
    this.editText.textContent = text;
    this.emptyKernel.hidden = true;
    this.editNote.hidden = false;
    this.fit();
    this.showInput();
  }

  /** A question to start from (a sample's), in the composer ready to send or to change. */
  suggest(question) {
    this.setMode("chat");
    this.input.value = question;
    this.fit();
  }

  stopEditing(clear) {
    if (clear && (this.editing != null || this.editingQuestion != null)) this.current.value = "";
    this.editing = null;
    this.editingQuestion = null;
    this.editNote.hidden = true;
    this.fit();
  }

  onKey(e) {
    if (e.key !== "Enter" || e.isComposing) return;
    const modified = e.ctrlKey || e.metaKey;
    // Ask: Enter sends, Shift+Enter is a new line. Code (the editor's fallback): Enter is a new
    // line, Shift+Enter or Ctrl/Cmd+Enter runs.
    if (modified || (this.mode === "chat") !== e.shiftKey) {
      e.preventDefault();
      this.send();
    }
  }

  /** Grow with the text, up to half the window (then it scrolls). */
  fit() {
    this.input.style.height = "auto";
    this.input.style.height = `${Math.min(this.input.scrollHeight + 2, innerHeight / 2)}px`;
  }

  async send({ emptyKernel = false } = {}) {
    const input = this.current;
    const text = input.value;
    if (!text.trim() || this.sending || this.blocked) return;
    const code = this.mode === "code";
    this.sending = true;
    this.showSendState();
    this.showError("");
    try {
      await this.waitForUploads();
      if (!code && this.editingQuestion != null) return await this.branch(text, emptyKernel);
      const source = code && this.cellLanguage ? this.cellLanguage.wrap(text) : text;
      const body = code ? { code: source, ...(this.editing != null && { edited_from: this.editing }) } : { content: text };
      const answer = await this.api.post(`${this.apiBase}/${code ? "cells" : "messages"}`, body);
      if (input.value === text) input.value = ""; // keep what was typed meanwhile
      if (code) this.stopEditing(false);
      this.fit();
      if (answer?.turn != null) this.turns.expect(answer.turn);
    } catch (error) {
      this.showError(error.message); // a 409 says a turn is running
    } finally {
      this.sending = false;
      this.showSendState();
    }
  }

  /** The edited question into a branch; the page then goes there. A question whose kernel state
   * is no longer kept is branched only once the user chooses an empty kernel. */
  async branch(text, emptyKernel) {
    const url = `${this.apiBase}/turns/${this.editingQuestion}/branch`;
    try {
      const made = await this.api.post(url, { content: text, ...(emptyKernel && { empty_kernel: true }) });
      location.assign(`/sessions/${made.id}/`);
    } catch (error) {
      if (error.code !== "kernel_state_lost") throw error;
      this.editText.textContent = error.message.replace(/ Branch anyway with .*$/, "");
      this.emptyKernel.hidden = false;
    }
  }

  async stop() {
    this.stopButton.disabled = true;
    this.stopButton.textContent = "Stopping…";
    try {
      await this.api.post(`${this.apiBase}/cancel`);
    } catch (error) {
      this.showError(error.message);
      this.stopButton.disabled = false;
      this.stopButton.textContent = "Stop";
    }
  }

  async changeModel() {
    const chosen = this.picker.value;
    this.picker.disabled = true;
    try {
      const session = await this.api.patch(this.apiBase, { model: chosen });
      this.picker.dataset.saved = session.model ?? chosen;
      this.unavailable = session.model_unavailable ?? "";
      this.showSendState();
      this.showError("");
    } catch (error) {
      this.showError(error.message);
    } finally {
      this.picker.value = this.picker.dataset.saved;
      this.picker.disabled = false;
    }
  }

  showRunning() {
    const running = this.turns.running;
    this.stopButton.hidden = !running;
    this.showSendState();
    if (!running) {
      this.stopButton.disabled = false;
      this.stopButton.textContent = "Stop";
    }
  }

  /** A question sent while a file is still uploading would reach a model that has not heard of
   * it: it goes once the file is at the server (whose turn then waits for it to be read). */
  async waitForUploads() {
    const unsent = this.files?.unsent ?? [];
    if (!unsent.length) return;
    this.waiting.textContent = `Sends once ${unsent.join(", ")} ${unsent.length > 1 ? "are" : "is"} uploaded…`;
    this.waiting.hidden = false;
    try {
      await this.files.sent();
    } finally {
      this.waiting.hidden = true;
    }
  }

  showError(message) {
    this.errorBox.textContent = message;
    this.errorBox.hidden = !message;
  }
}

/** ``node`` named composer-input for the tests, or not (only the input shown is). */
function setTestid(node, named) {
  if (named) node.dataset.testid = "composer-input";
  else delete node.dataset.testid;
}

/** The models that can answer here, and the session's own even when it cannot (marked so). */
function modelPicker(models, current, unavailable) {
  const picker = el("select", {
    class: "model-picker",
    testid: "model-picker",
    attrs: { "aria-label": "Model" },
  });
  for (const name of models.includes(current) ? models : [current, ...models]) {
    const text = name === current && unavailable ? `${name} (unavailable)` : name;
    picker.append(el("option", { text, attrs: { value: name } }));
  }
  picker.value = current;
  picker.dataset.saved = current;
  return picker;
}
