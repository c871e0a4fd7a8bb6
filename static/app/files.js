// The files panel: the session's uploads and the files its code wrote, with download links.
// For the owner: uploading files of any accepted kind (button or drag and drop, several at
// once, sent one after the other, each with its progress bar), then each upload's "Reading it
// in the sandbox…" stage, what the sandbox found in it, its preview with a way to read it
// differently, Delete, and Retry for one that could not be put in the sandbox.
import { columnMarks } from "./column_marks.js";
import { el } from "./dom.js";
import { DictionaryForm } from "./file_dictionary.js";
import { FilePreview, correctable, formatLabel, tableLines } from "./file_preview.js";
import { humanSize } from "./format.js";

// The server's list (the listing's "accept") replaces this one once it has answered.
// prettier-ignore
const ACCEPT = [
  ".csv", ".tsv", ".txt", ".xlsx", ".xlsm", ".xls", ".parquet", ".json", ".jsonl", ".ndjson",
  ".feather", ".arrow",
];

export class FilesPanel {
  /** upload: {api, url, maxUpload} for the owner; null on a shared page. */
  constructor({ api, filesUrl, upload }) {
    Object.assign(this, { api, filesUrl, upload });
    this.loading = null; // the refresh in flight
    this.again = false; // another refresh was asked for meanwhile
    this.changes = 0; // what our own answers changed in the list, counted
    this.rows = new Map(); // key (see keyOf) → FileRow, kept across refreshes
    this.entries = []; // the last listing, with what events told us since
    this.queue = []; // files picked or dropped, not yet sent
    this.sending = null; // the upload whose bytes are on their way, if any
    this.whenIdle = []; // resolvers of sent(): called once nothing is left to send
    this.fresh = null; // the key of our upload sent last: its preview opens once it is described
    this.recheck = null; // the timer that lists again while an upload is still being read
    this.rechecks = 0;

    this.list = el("ul", { class: "file-list" });
    this.message = el("p", { class: "files-message", attrs: { role: "status" } });
    this.element = el(
      "aside",
      { class: "files-panel", testid: "files-panel", attrs: { "aria-label": "Files" } },
      el("h2", { text: "Files" }),
    );
    if (upload) this.element.append(this.uploader());
    this.element.append(this.list, this.message);
  }

  get owner() {
    return Boolean(this.upload);
  }

  uploader() {
    this.input = el("input", {
      class: "upload-input",
      testid: "upload-input",
      attrs: { type: "file", multiple: "" },
    });
    this.setAccept(ACCEPT);
    this.input.addEventListener("change", () => {
      this.send([...this.input.files]);
      this.input.value = ""; // choosing the same files again still fires change
    });
    this.limit = el("span", { class: "upload-limit" });
    this.showLimit();
    this.sends = el("ul", { class: "upload-items", testid: "upload-items" });
    return el(
      "div",
      { class: "uploader" },
      el("label", { class: "upload-button" }, this.input, "Upload files"),
      this.limit,
      this.sends,
    );
  }

  /** Extensions the picker offers; a compressed "x.csv.gz" is offered through ".gz". */
  setAccept(extensions) {
    const offered = new Set(extensions);
    if (extensions.some((ext) => ext.endsWith(".gz"))) offered.add(".gz");
    if (!offered.has(".zip")) offered.add(".zip");
    if (!offered.has(".gz")) offered.add(".gz");
    this.input.setAttribute("accept", [...offered].join(","));
  }

  showLimit() {
    this.limit.textContent =
      `CSV, Excel, Parquet, JSON, Feather, zipped or gzipped; up to ${humanSize(this.upload.maxUpload)}` +
      " each · or drop them on the page";
  }

  /** Uploads the files dropped anywhere on the page (owner only). */
  acceptDrops(target) {
    let depth = 0; // dragenter/dragleave fire for every child crossed
    const carriesFiles = (e) => e.dataTransfer?.types.includes("Files");
    target.addEventListener("dragenter", (e) => {
      if (!carriesFiles(e)) return;
      depth += 1;
      document.body.classList.add("dropping");
    });
    target.addEventListener("dragleave", () => {
      depth = Math.max(0, depth - 1);
      if (!depth) document.body.classList.remove("dropping");
    });
    target.addEventListener("dragover", (e) => carriesFiles(e) && e.preventDefault());
    target.addEventListener("drop", (e) => {
      if (!carriesFiles(e)) return;
      e.preventDefault();
      depth = 0;
      document.body.classList.remove("dropping");
      this.send([...e.dataTransfer.files]);
    });
  }

  /** Queue files for upload, each with its own line; they go one after the other. */
  send(files) {
    const { maxUpload } = this.upload;
    for (const file of files) {
      const item = new UploadItem(file, () => item.element.remove());
      this.sends.append(item.element);
      if (file.size > maxUpload) {
        item.fail(`${file.name} is ${humanSize(file.size)}; the limit is ${humanSize(maxUpload)}.`);
      } else {
        this.queue.push(item);
      }
    }
    this.sendNext();
  }

  /** The names of the files not yet wholly sent: the server knows nothing of them yet. */
  get unsent() {
    return [this.sending, ...this.queue].filter(Boolean).map((item) => item.file.name);
  }

  /** Resolves once every file picked so far has been sent (or refused). */
  sent() {
    return this.unsent.length ? new Promise((resolve) => this.whenIdle.push(resolve)) : Promise.resolve();
  }

  async sendNext() {
    if (this.sending) return;
    try {
      while (this.queue.length) {
        const item = this.queue.shift();
        this.sending = item;
        item.start();
        try {
          const answer = await this.api.upload(this.upload.url, item.file, (fraction) => item.progress(fraction));
          if (answer?.file) {
            this.fresh = keyOf(answer.file);
            this.merge({ status: "placing", ...answer.file });
          }
          item.element.remove(); // its row in the list says how the reading goes
        } catch (error) {
          item.fail(error.message);
        }
        this.refresh();
      }
    } finally {
      this.sending = null;
      for (const resolve of this.whenIdle.splice(0)) resolve();
    }
  }

  /** Lists the files again; calls during a refresh fold into one more after it. A listing
   * asked for before one of our own answers changed the list is older than it: it is dropped,
   * and the files listed again (else a mark just undone would come back until the next one). */
  async refresh() {
    if (this.loading) {
      this.again = true;
      return;
    }
    const changes = this.changes;
    this.loading = this.api.get(this.filesUrl);
    try {
      const { files, max_upload: maxUpload, accept } = await this.loading;
      if (changes !== this.changes) {
        this.again = true;
        return;
      }
      this.entries = files;
      this.render();
      this.message.textContent = files.length ? "" : "No files yet.";
      if (this.upload && maxUpload) {
        this.upload.maxUpload = maxUpload;
        this.showLimit();
      }
      if (this.upload && Array.isArray(accept) && accept.length) this.setAccept(accept.map(String));
    } catch (error) {
      this.message.textContent = `Could not list the files: ${error.message}`;
    } finally {
      this.loading = null;
      if (this.again) {
        this.again = false;
        this.refresh();
      }
    }
  }

  /** What an answer of ours said of one file, shown before the next listing confirms it. */
  merge(entry) {
    const key = keyOf(entry);
    const at = this.entries.findIndex((known) => keyOf(known) === key);
    if (at >= 0) this.entries[at] = { ...this.entries[at], ...entry };
    else this.entries = [{ kind: "upload", ...entry }, ...this.entries];
    this.changes += 1;
    this.message.textContent = "";
    this.render();
  }

  render() {
    const keys = new Set();
    const elements = this.entries.map((entry) => {
      const key = keyOf(entry);
      keys.add(key);
      let row = this.rows.get(key);
      if (!row) {
        row = new FileRow(this, key);
        this.rows.set(key, row);
      }
      if (this.fresh === key && entry.status !== "placing") {
        this.fresh = null;
        if (entry.status !== "failed") row.previewOpen = true;
      }
      row.show(entry);
      return row.element;
    });
    for (const key of [...this.rows.keys()]) if (!keys.has(key)) this.rows.delete(key);
    // Move only what moved: a row re-inserted would lose the focus of its open form.
    elements.forEach((element, index) => {
      if (this.list.children[index] !== element) this.list.insertBefore(element, this.list.children[index] ?? null);
    });
    while (this.list.children.length > elements.length) this.list.lastElementChild.remove();
    this.recheckWhileReading();
  }

  /** An upload's event may not reach us (say, the socket was down): list again, for a while,
   * until none is still being read. */
  recheckWhileReading() {
    clearTimeout(this.recheck);
    this.recheck = null;
    if (!this.entries.some((entry) => entry.kind === "upload" && entry.status === "placing")) {
      this.rechecks = 0;
      return;
    }
    this.rechecks += 1;
    if (this.rechecks <= MAX_RECHECKS) this.recheck = setTimeout(() => this.refresh(), RECHECK_MS);
  }

  /** A file_added event: an upload is in the sandbox and described (again, after new options).
   * The listing says so with its URLs; an event replayed from the log may be an old one. */
  fileAdded() {
    this.refresh();
  }

  /** A file_removed event (from this page or another). */
  fileRemoved(payload) {
    if (payload?.id != null) this.forget(payload); // by path, a replayed event could hit a re-upload
    this.refresh();
  }

  /** An error event with code file_not_placed: the upload failed for good (until retried). */
  fileNotPlaced() {
    this.refresh();
  }

  forget({ id, path }) {
    const gone = (entry) => (id != null ? entry.id === id : entry.path === path) && entry.kind !== "output";
    this.entries = this.entries.filter((entry) => !gone(entry));
    this.changes += 1;
    this.render();
    if (!this.entries.length) this.message.textContent = "No files yet.";
  }

  async retry(entry) {
    await this.api.post(entry.retry_url);
    this.fresh = keyOf(entry);
    this.merge({ ...entry, status: "placing", error: "" });
    this.refresh();
  }

  async remove(entry) {
    await this.api.delete(entry.delete_url);
    this.forget(entry);
    this.refresh();
  }

  /** Saves an upload's data dictionary; the row shows it as saved. */
  async describe(entry, dictionary) {
    const answer = await this.api.patch(entry.url, { dictionary });
    this.merge({ ...entry, dictionary: answer?.file?.dictionary ?? dictionary });
  }

  /** Marks an upload's columns (sensitive, ordinary, or none); the row shows the answer. */
  async mark(entry, marks) {
    const answer = await this.api.patch(entry.url, { column_marks: marks });
    this.merge({ ...entry, ...(answer?.file ?? {}) });
  }

  async reread(entry, options) {
    const answer = await this.api.post(entry.options_url, options);
    this.merge({ ...entry, ...(answer?.file ?? {}), status: "placing" });
    this.refresh();
  }
}

/** An upload's id once the server has given it one; its path before that (and for outputs). */
function keyOf(entry) {
  if (entry.kind === "output") return `output:${entry.path}`;
  return entry.id != null ? `upload:${entry.id}` : `path:${entry.path}`;
}

/** One file being sent: its name, progress bar and then what went wrong, if anything. */
class UploadItem {
  constructor(file, dismiss) {
    this.file = file;
    this.bar = el("progress", { class: "upload-progress", testid: "upload-progress", attrs: { max: "1", value: "0" } });
    this.status = el("span", { class: "upload-item-status", text: "Waiting to upload…" });
    this.dismiss = el("button", {
      class: "upload-dismiss",
      text: "×",
      attrs: { type: "button", "aria-label": `Dismiss ${file.name}` },
    });
    this.dismiss.hidden = true;
    this.dismiss.addEventListener("click", dismiss);
    this.element = el(
      "li",
      { class: "upload-item", testid: "upload-item" },
      el("span", { class: "upload-item-name", text: file.name }),
      this.dismiss,
      this.bar,
      this.status,
    );
  }

  start() {
    this.status.textContent = `Uploading ${humanSize(this.file.size)}…`;
  }

  progress(fraction) {
    this.bar.value = fraction;
    if (fraction >= 1) this.status.textContent = `Uploaded; the server is storing it…`;
  }

  fail(message) {
    this.bar.hidden = true;
    this.element.classList.add("error");
    this.element.dataset.testid = "upload-failed";
    this.status.textContent = message;
    this.status.setAttribute("role", "alert");
    this.dismiss.hidden = false;
  }
}

/** One file of the list; it keeps its preview's state (open, which table) across refreshes. */
class FileRow {
  constructor(panel, key) {
    Object.assign(this, { panel, key });
    this.element = el("li", { class: "file-row", testid: "file-row" });
    this.previewOpen = false;
    this.dictionaryOpen = false;
    this.dictionarySaved = false; // its form was just saved
    this.tableIndex = 0;
    this.shown = null; // the entry as last drawn, to redraw only on a change
  }

  show(entry) {
    const drawn = JSON.stringify([entry, this.previewOpen, this.dictionaryOpen]);
    if (drawn === this.shown) return;
    this.shown = drawn;
    this.entry = entry;
    this.draw();
  }

  draw() {
    const { entry } = this;
    const { name, path, size, kind, status, download_url: href } = entry;
    const upload = kind !== "output";
    const reading = upload && status === "placing";
    const row = this.element;
    row.dataset.kind = kind ?? "upload";
    row.dataset.status = status ?? "";
    row.dataset.fileId = entry.id ?? "";
    const details = [humanSize(size), upload ? formatLabel(entry) : ""].filter(Boolean).join(" · ");
    const parts = [
      el("div", { class: "file-name", testid: "file-name", text: name, attrs: { title: path } }),
      el(
        "div",
        { class: "file-details" },
        el("span", { class: `file-kind ${kind}`, text: upload ? "upload" : "output" }),
        el("span", { text: details }),
      ),
    ];
    if (href) parts.push(el("a", { class: "file-download", text: "Download", attrs: { href, download: name } }));
    if (reading) {
      parts.push(
        el("div", { class: "file-placement", testid: "file-reading", text: `Reading ${name} in the sandbox…` }),
      );
    } else if (status === "failed") {
      parts.push(this.failed());
    } else if (upload) {
      parts.push(...this.facts());
    }
    const actions = this.actions(reading);
    if (actions.childElementCount) parts.push(actions);
    this.problem = el("p", { class: "file-problem", testid: "file-problem", attrs: { role: "alert" } });
    parts.push(this.problem);
    if (upload && !reading && status !== "failed" && this.previewOpen && this.previewable()) {
      parts.push(this.preview());
    }
    if (this.dictionaryOpen && this.describable()) parts.push(this.dictionary());
    if (this.describable()) parts.push(columnMarks(entry, (marks) => this.panel.mark(entry, marks)));
    row.replaceChildren(...parts);
  }

  /** Something to show: first rows, or (for the owner) the form to read it differently. */
  previewable() {
    const { entry, panel } = this;
    if (entry.status === "failed") return false;
    if (entry.tables?.length) return true;
    return Boolean(panel.owner && entry.options_url && entry.format !== undefined && correctable(entry).length);
  }

  /** The shape of each table and what was detected; a file that could not be read says why. */
  facts() {
    const { entry } = this;
    const parts = [];
    if (entry.read_error) {
      parts.push(el("div", { class: "file-read-error", testid: "file-read-error", text: entry.read_error }));
    }
    // A table's error that only repeats why the whole file failed is said once.
    const repeats = (error) => entry.read_error && error && entry.read_error.includes(error);
    const lines = tableLines(entry).filter(({ text, error }) => text || !repeats(error));
    if (lines.length) {
      const list = el("ul", { class: "file-tables", testid: "file-tables" });
      for (const { label, text, error } of lines) {
        const item = el("li", { class: "file-table", testid: "file-table" });
        if (label) item.append(el("span", { class: "file-table-label", text: `${label}:` }), " ");
        if (text) item.append(el("span", { class: "file-table-shape", text }));
        if (error && !repeats(error)) item.append(el("span", { class: "file-table-error", text: error }));
        list.append(item);
      }
      parts.push(list);
    }
    for (const note of entry.notes ?? []) {
      parts.push(el("div", { class: "file-note-line", testid: "file-notes", text: String(note) }));
    }
    return parts;
  }

  failed() {
    const { entry } = this;
    const box = el("div", { class: "file-placement failed" });
    box.append(
      el("div", {
        testid: "file-failed",
        text: `Not in the sandbox: ${entry.error || "it could not be placed"}`,
      }),
    );
    return box;
  }

  actions(reading) {
    const { entry, panel } = this;
    const bar = el("div", { class: "file-actions" });
    if (entry.kind === "output") return bar;
    if (!reading && this.previewable()) {
      const toggle = el("button", {
        class: "file-action",
        testid: "file-preview-toggle",
        text: entry.tables?.length ? "Preview" : "Read differently",
        attrs: { type: "button", "aria-expanded": String(this.previewOpen) },
      });
      toggle.addEventListener("click", () => {
        this.previewOpen = !this.previewOpen;
        this.show(this.entry);
      });
      bar.append(toggle);
    }
    if (this.describable()) {
      const toggle = el("button", {
        class: "file-action",
        testid: "file-describe-toggle",
        text: "Describe",
        attrs: { type: "button", "aria-expanded": String(this.dictionaryOpen) },
      });
      toggle.addEventListener("click", () => {
        this.dictionaryOpen = !this.dictionaryOpen;
        this.dictionarySaved = false;
        this.show(this.entry);
      });
      bar.append(toggle);
    }
    if (panel.owner && entry.status === "failed" && entry.retry_url) {
      bar.append(this.button("Retry", "file-retry", "Retrying…", () => panel.retry(entry), "file-retry"));
    }
    if (panel.owner && entry.delete_url) {
      const remove = () => {
        if (!window.confirm(`Delete ${entry.name}? It goes from the sandbox and from storage.`)) return null;
        return panel.remove(entry);
      };
      bar.append(this.button("Delete", "file-delete", "Deleting…", remove, "file-action danger"));
    }
    return bar;
  }

  /** A button that runs `act` (a promise, or null when the person thought better of it). */
  button(text, testid, busy, act, className) {
    const button = el("button", { class: className, testid, text, attrs: { type: "button" } });
    button.addEventListener("click", async () => {
      this.problem.textContent = "";
      const running = act();
      if (!running) return;
      button.disabled = true;
      button.textContent = busy;
      try {
        await running;
      } catch (error) {
        this.problem.textContent = error.message;
        button.disabled = false;
        button.textContent = text;
      }
    });
    return button;
  }

  /** The owner may say what a file that was read holds (its data dictionary). */
  describable() {
    const { entry, panel } = this;
    return Boolean(panel.owner && entry.url && entry.status === "ready");
  }

  dictionary() {
    const { entry, panel } = this;
    const onSave = async (dictionary) => {
      this.dictionarySaved = true; // said by the form drawn anew with what was saved
      try {
        await panel.describe(entry, dictionary);
      } catch (error) {
        this.dictionarySaved = false;
        throw error;
      }
    };
    return new DictionaryForm(entry, { onSave, saved: this.dictionarySaved }).element;
  }

  preview() {
    const { entry, panel } = this;
    const editable = Boolean(panel.owner && entry.options_url);
    const preview = new FilePreview(entry, {
      tableIndex: this.tableIndex,
      onPick: (index) => (this.tableIndex = index),
      onApply: editable ? (options) => panel.reread(entry, options) : null,
    });
    return preview.element;
  }
}

const RECHECK_MS = 5000;
const MAX_RECHECKS = 60; // five minutes: a placement gives up (and says so) well before
