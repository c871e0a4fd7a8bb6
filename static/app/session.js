// The session page: builds the app inside <main id="app"> from its data attributes and wires
// the live event stream to the transcript, the status bar, the composer and the files panel.
import { Api } from "./api.js";
import { Backlog } from "./backlog.js";
import { Composer } from "./composer.js";
import { copyOnClick } from "./copy.js";
import { el } from "./dom.js";
import { EventStream } from "./events.js";
import { FilesPanel } from "./files.js";
import { FoldedText } from "./folded.js";
import { KernelControls } from "./kernel_controls.js";
import { FOLD_LINES } from "./render.js";
import { followBottom } from "./scroll.js";
import { StatusBar } from "./status.js";
import { Transcript } from "./transcript.js";
import { Turns } from "./turns.js";
import { SessionUsage } from "./usage.js";

const TURN_ENDS = new Set(["turn_done", "turn_cancelled", "turn_failed"]);

const app = document.getElementById("app");
const config = app.dataset;
const owner = config.mode === "owner";
const api = new Api(config.csrfToken || cookie("csrftoken"));
const turns = new Turns();
const status = new StatusBar(turns);

const transcriptElement = el("div", { class: "transcript", testid: "transcript", attrs: { role: "log" } });
transcriptElement.dataset.empty = owner
  ? "Upload your data (CSV, Excel, Parquet, JSON…), then ask a question about it."
  : "Nothing here yet.";
const transcript = new Transcript(transcriptElement, {
  artifactBase: config.artifactBase,
  onEdit: owner ? (code, seq) => composer.edit(code, seq) : null,
  foldedText: new FoldedText(api, config.eventsUrl),
});
const backlog = new Backlog(transcript, transcriptElement);

const files = config.filesUrl
  ? new FilesPanel({
      api,
      filesUrl: config.filesUrl,
      upload: owner ? { url: `${config.apiBase}/files`, maxUpload: Number(config.maxUpload) } : null,
    })
  : null;

const dock = el("div", { class: "dock" }, status.element);
let composer = null;
if (owner) {
  composer = new Composer({
    api,
    apiBase: config.apiBase,
    models: parseList(config.models),
    model: config.model,
    unavailable: config.modelUnavailable ?? "",
    turns,
    files,
  });
  dock.append(composer.element);
}

const usage = new SessionUsage();
const header = el(
  "header",
  { class: "app-header" },
  el("h1", { class: "session-title", text: config.title }),
  usage.element,
);
if (owner) {
  const controls = new KernelControls({
    api,
    apiBase: config.apiBase,
    turns,
    onError: (message) => composer.showError(message),
  });
  header.append(controls.element);
}
if (files) {
  const toggle = el("button", {
    class: "files-toggle",
    text: "Files",
    attrs: { type: "button", "aria-expanded": "false" },
  });
  toggle.addEventListener("click", () =>
    toggle.setAttribute("aria-expanded", String(app.classList.toggle("files-open"))),
  );
  header.append(toggle);
}
app.replaceChildren(header);
if (!owner) {
  app.append(
    el("div", { class: "readonly-banner", testid: "readonly-banner", text: "Read-only shared view" }),
  );
}
const chat = el("div", { class: "chat-column" }, transcriptElement, dock);
const body = el("div", { class: "app-body" }, chat);
if (files) body.append(files.element);
app.append(body);
app.classList.toggle("has-files", Boolean(files));

if (owner && files) files.acceptDrops(document);
followBottom(chat);
files?.refresh();
new EventStream({
  api,
  eventsUrl: config.eventsUrl,
  wsUrl: config.wsUrl,
  fold: FOLD_LINES,
  onState: (state) => status.setConnection(state),
  onCaughtUp: () => backlog.release(),
  onEvent(event) {
    backlog.apply(event);
    turns.apply(event);
    if (event.type === "file_added") files?.fileAdded(event.payload);
    else if (event.type === "file_removed") files?.fileRemoved(event.payload);
    else if (event.type === "error" && event.payload?.code === "file_not_placed") files?.fileNotPlaced(event.payload);
    else if (TURN_ENDS.has(event.type)) {
      files?.refresh();
      usage.add(event.turn, event.payload?.usage);
    }
  },
}).start();

function parseList(json) {
  try {
    const list = JSON.parse(json || "[]");
    return Array.isArray(list) ? list.map(String) : [];
  } catch {
    return [];
  }
}

function cookie(name) {
  return (
    document.cookie
      .split("; ")
      .find((c) => c.startsWith(`${name}=`))
      ?.slice(name.length + 1) ?? ""
  );
}

// The share panel's "Copy link" buttons (server-rendered): each copies the link it stands by.
for (const button of document.querySelectorAll("[data-copy]")) copyOnClick(button, () => button.dataset.copy);
