// The files panel: the session's uploads and the files its code wrote, with download links;
// for the owner, uploading a CSV (button or drag and drop) with a progress bar, and a Retry
// button on an upload that could not be put in the sandbox.
import { el } from "./dom.js";
import { humanSize, tableShape } from "./format.js";

export class FilesPanel {
  /** upload: {api, url, maxUpload} for the owner; null on a shared page. */
  constructor({ api, filesUrl, upload }) {
    Object.assign(this, { api, filesUrl, upload });
    this.loading = null; // the refresh in flight
    this.again = false; // another refresh was asked for meanwhile
    this.placing = null; // the path of our upload that the sandbox is still reading
    this.placingAgain = false; // ... after a Retry: its rows may be known from before
    this.recheck = null; // the timer that lists again while an upload is still being placed

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

  uploader() {
    this.input = el("input", {
      class: "upload-input",
      testid: "upload-input",
      attrs: { type: "file", accept: ".csv,text/csv" },
    });
    this.input.addEventListener("change", () => {
      if (this.input.files.length) this.send(this.input.files[0]);
      this.input.value = ""; // choosing the same file again still fires change
    });
    this.limit = el("span", { class: "upload-limit" });
    this.showLimit();
    this.progress = el("progress", {
      class: "upload-progress",
      testid: "upload-progress",
      attrs: { max: "1", value: "0" },
    });
    this.progress.hidden = true;
    this.uploadStatus = el("p", { class: "upload-status", attrs: { role: "status" } });
    return el(
      "div",
      { class: "uploader" },
      el("label", { class: "upload-button" }, this.input, "Upload CSV"),
      this.limit,
      this.progress,
      this.uploadStatus,
    );
  }

  showLimit() {
    this.limit.textContent = `CSV, up to ${humanSize(this.upload.maxUpload)} · or drop it on the page`;
  }

  /** Uploads a file dropped anywhere on the page (owner only). */
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
      if (e.dataTransfer.files.length) this.send(e.dataTransfer.files[0]);
    });
  }

  async send(file) {
    const { maxUpload } = this.upload;
    if (!/\.csv$/i.test(file.name)) return this.showUpload(`${file.name} is not a CSV file.`, true);
    if (file.size > maxUpload) {
      return this.showUpload(
        `${file.name} is ${humanSize(file.size)}; the limit is ${humanSize(maxUpload)}.`,
        true,
      );
    }
    this.progress.hidden = false;
    this.progress.value = 0;
    this.showUpload(`Uploading ${file.name} (${humanSize(file.size)})…`);
    try {
      const answer = await this.api.upload(
        this.upload.url,
        file,
        (fraction) => (this.progress.value = fraction),
      );
      this.placing = answer?.file?.path ?? null;
      this.placingAgain = false;
      this.showUpload(`${file.name} uploaded; reading it in the sandbox…`);
      this.refresh();
    } catch (error) {
      this.showUpload(error.message, true);
    } finally {
      this.progress.hidden = true;
    }
  }

  showUpload(text, isError = false) {
    this.uploadStatus.textContent = text;
    this.uploadStatus.classList.toggle("error", isError);
  }

  /** Lists the files again; calls during a refresh fold into one more after it. */
  async refresh() {
    if (this.loading) {
      this.again = true;
      return;
    }
    this.loading = this.api.get(this.filesUrl);
    try {
      const { files, max_upload: maxUpload } = await this.loading;
      this.recheckWhilePlacing(files);
      this.list.replaceChildren(...files.map((file) => this.fileRow(file)));
      this.message.textContent = files.length ? "" : "No files yet.";
      if (this.upload && maxUpload) {
        this.upload.maxUpload = maxUpload;
        this.showLimit();
      }
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

  /** A file_added event: an upload is in the sandbox and described. */
  fileAdded({ path }) {
    if (path && path === this.placing) {
      this.placing = null;
      this.showUpload(`${path} is ready.`);
    }
    this.refresh();
  }

  /** An error event with code file_not_placed: the upload failed for good (until retried). */
  fileNotPlaced({ message, file }) {
    if (file?.path && file.path === this.placing) this.placing = null;
    if (this.upload) this.showUpload(message, true);
    this.refresh();
  }

  /** Our upload may end without its event reaching us (file_added or the error that says it
   * failed): list again, for a while, until it is described or failed. */
  recheckWhilePlacing(files) {
    clearTimeout(this.recheck);
    this.recheck = null;
    if (!this.placing) return;
    const ours = files.find((file) => file.kind === "upload" && file.path === this.placing);
    if (ours?.status === "failed") {
      this.showUpload(`${ours.name} could not be put in the sandbox: ${ours.error}`, true);
    }
    if (!ours || ours.status === "failed" || (ours.rows != null && !this.placingAgain)) {
      this.placing = null;
      this.rechecks = 0;
      return;
    }
    this.rechecks = (this.rechecks ?? 0) + 1;
    if (this.rechecks <= MAX_RECHECKS) this.recheck = setTimeout(() => this.refresh(), RECHECK_MS);
  }

  async retry(file, button) {
    button.disabled = true;
    button.textContent = "Retrying…";
    try {
      await this.api.post(file.retry_url);
      this.placing = file.path;
      this.placingAgain = true;
      this.showUpload(`Putting ${file.name} in the sandbox again…`);
    } catch (error) {
      this.showUpload(error.message, true);
    }
    this.refresh();
  }

  fileRow(file) {
    const { name, path, size, rows, columns, kind, status, error, download_url: href } = file;
    const details = [humanSize(size), tableShape(rows, columns)].filter(Boolean).join(" · ");
    const row = el(
      "li",
      { class: "file-row", testid: "file-row" },
      el("div", { class: "file-name", text: name, attrs: { title: path } }),
      el(
        "div",
        { class: "file-details" },
        el("span", { class: `file-kind ${kind}`, text: kind === "output" ? "output" : "upload" }),
        el("span", { text: details }),
      ),
      el("a", { class: "file-download", text: "Download", attrs: { href, download: name } }),
    );
    row.dataset.kind = kind;
    if (status) row.dataset.status = status;
    if (kind === "upload" && path === this.placing && status !== "failed") {
      row.append(el("div", { class: "file-placement", text: "Reading it into the sandbox…" }));
    } else if (status === "failed") {
      const why = el("div", {
        class: "file-placement failed",
        testid: "file-failed",
        text: `Not in the sandbox: ${error || "it could not be placed"}`,
      });
      row.append(why);
      if (file.retry_url) {
        const button = el("button", {
          class: "file-retry",
          testid: "file-retry",
          text: "Retry",
          attrs: { type: "button" },
        });
        button.addEventListener("click", () => this.retry(file, button));
        row.append(button);
      }
    }
    return row;
  }
}

const RECHECK_MS = 5000;
const MAX_RECHECKS = 60; // five minutes: a placement gives up (and says so) well before
