// The session page: builds the app inside <main id="app"> from its data attributes and wires
// the live event stream to the transcript, the status bar, the composer and the files panel.
import { Api } from "./api.js";
import { ApprovalSetting } from "./approval_setting.js";
import { Backlog } from "./backlog.js";
import { Composer } from "./composer.js";
import "./copy_buttons.js"; // the share panel's "Copy link" buttons
import "./publishing.js"; // the menu's Publish panel
import { el } from "./dom.js";
import { EventStream } from "./events.js";
import { liveTablesAt } from "./data_table.js";
import { FilesPanel } from "./files.js";
import { FoldedText } from "./folded.js";
import { KernelControls } from "./kernel_controls.js";
import { PrivacySetting } from "./privacy_setting.js";
import { RerunDialog } from "./rerun.js";
import { RunsPanel } from "./runs.js";
import { FOLD_LINES } from "./render.js";
import { followBottom } from "./scroll.js";
import { StatusBar } from "./status.js";
import { SessionConnections } from "./session_connections.js";
import { SessionSecrets } from "./session_secrets.js";
import { CellLanguage } from "./sql_cell.js";
import { Comments } from "./comments.js";
import { Presence } from "./presence.js";
import { TurnQueue } from "./turn_queue.js";
import { SessionTitle } from "./title.js";
import { Transcript } from "./transcript.js";
import { Turns } from "./turns.js";
import { SessionUsage } from "./usage.js";
import { VariablesPanel } from "./variables.js";

const TURN_ENDS = new Set(["turn_done", "turn_cancelled", "turn_failed"]);

const app = document.getElementById("app");
const config = app.dataset;
const owner = config.mode === "owner";
const api = new Api(config.csrfToken || cookie("csrftoken"));
if (owner) liveTablesAt(`${config.apiBase}/variables`); // a table a variable holds pages from the kernel
const turns = new Turns();
const status = new StatusBar(turns);
// A member's page (not a share link's): who else is here, comments, whose turn it is.
const member = config.mode !== "shared";
const me = document.querySelector("meta[name=analyst-user]")?.content ?? null;
const presence = member ? new Presence({ me }) : null;
const comments = member ? new Comments({ api, url: `${config.apiBase}/comments`, me }) : null;
const queue = member ? new TurnQueue({ me }) : null;

const transcriptElement = el("div", { class: "transcript", testid: "transcript", attrs: { role: "log" } });
transcriptElement.dataset.empty = owner
  ? "Upload your data (CSV, Excel, Parquet, JSON…), then ask a question about it."
  : "Nothing here yet.";
const transcript = new Transcript(transcriptElement, {
  artifactBase: config.artifactBase,
  onEdit: owner ? (code, seq) => composer.edit(code, seq) : null,
  onEditQuestion: owner ? (text, turn) => composer.editQuestion(text, turn) : null,
  onRegenerate: owner ? (turn) => regenerate(turn) : null,
  onDecide: owner
    ? (toolCallId, action, body) =>
        api.post(`${config.apiBase}/pending/${encodeURIComponent(toolCallId)}/${action}`, body)
    : null,
  onParameters: owner ? (code) => runs?.mark(code) : null,
  branches: parseJson(config.branches, []),
  foldedText: new FoldedText(api, config.eventsUrl),
  me: member ? me : null,
  decorate: comments ? (node, seq) => comments.decorate(node, seq) : null,
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
if (queue) dock.append(queue.element);
let composer = null;
const cellLanguage = owner ? new CellLanguage() : null;
if (owner) {
  composer = new Composer({
    cellLanguage,
    api,
    apiBase: config.apiBase,
    models: parseList(config.models),
    model: config.model,
    unavailable: config.modelUnavailable ?? "",
    turns,
    files,
    queue,
  });
  dock.append(composer.element);
  turns.addEventListener("change", () => transcript.setIdle(!turns.running));
}

/** Regenerate: the last question asked again (its earlier answer folds away when it starts). */
async function regenerate(turn) {
  transcript.setIdle(false);
  try {
    const answer = await api.post(`${config.apiBase}/turns/${turn}/regenerate`);
    if (answer?.turn != null) turns.expect(answer.turn);
  } catch (error) {
    transcript.setIdle(!turns.running);
    composer.showError(error.message); // a 409: a turn runs, or it is no longer the last answer
  }
}

const rerun =
  owner && files ? new RerunDialog({ api, apiBase: config.apiBase, filesUrl: config.filesUrl, turns }) : null;

const usage = new SessionUsage();
const title = new SessionTitle({ title: config.title, untitled: config.untitled });
const header = el(
  "header",
  { class: "app-header" },
  title.element,
  usage.element,
);
if (presence) header.append(presence.element);
// The header's controls: in the header where they fit, behind its Menu button where they do not.
const controlsMenu = el("div", { class: "header-controls", attrs: { id: "header-controls", popover: "" } });
let variables = null;
let runs = null;
if (owner) {
  const controls = new KernelControls({
    api,
    apiBase: config.apiBase,
    turns,
    onError: (message) => composer.showError(message),
  });
  controlsMenu.append(controls.element);
  const approval = new ApprovalSetting({
    api,
    apiBase: config.apiBase,
    value: config.approveCells,
    onError: (message) => composer.showError(message),
  });
  const privacy = new PrivacySetting({
    api,
    apiBase: config.apiBase,
    privacy: config.privacy,
    privacySetBy: config.privacySetBy,
    sendChartImages: config.sendChartImages !== "false",
    onError: (message) => composer.showError(message),
  });
  // In the sidebar, before sharing (the page's own section for it is drawn by the server).
  const tools = document.getElementById("session-tools");
  const shares = tools?.querySelector(".shares");
  // The session's connections and secrets: what its SQL cells may name.
  const connections = new SessionConnections({
    api,
    apiBase: config.apiBase,
    onChange: (attached) => cellLanguage.setConnections(attached),
  });
  const secrets = new SessionSecrets({ api, apiBase: config.apiBase });
  connections.element.append(secrets.element);
  connections.refresh();
  secrets.refresh();
  if (shares) shares.before(connections.element, privacy.element, approval.element);
  else tools?.append(connections.element, privacy.element, approval.element);
  // Beside them, and hidden with them while one of their questions is asked.
  if (rerun) controls.buttons.append(rerun.opener);
  variables = new VariablesPanel({
    api,
    apiBase: config.apiBase,
    artifactBase: config.artifactBase,
    turns,
    onState: (state) => controls.setKernel(state),
  });
  controlsMenu.append(drawerToggle("Variables", "variables-open", "variables-toggle"));
  runs = new RunsPanel({
    api,
    apiBase: config.apiBase,
    turns,
    onParametersCell: (code) => transcript.showParametersCell(code),
    onError: (message) => composer.showError(message),
  });
  controlsMenu.append(drawerToggle("Runs", "runs-open", "runs-toggle"));
}
if (files) controlsMenu.append(drawerToggle("Files", "files-open", "files-toggle"));
if (controlsMenu.childElementCount) header.append(menuButton(controlsMenu), controlsMenu);
app.replaceChildren(header);
if (rerun) app.append(rerun.form);
if (!owner) {
  app.append(
    el("div", {
      class: "readonly-banner",
      testid: "readonly-banner",
      text: config.readonlyText ? capitalised(config.readonlyText) : "Read-only shared view",
    }),
  );
}
const chat = el("div", { class: "chat-column" }, transcriptElement, dock);
const body = el("div", { class: "app-body" }, chat);
if (files) body.append(files.element);
if (variables) body.append(variables.element);
if (runs) body.append(runs.element);
app.append(body);
if (config.suggestion) composer?.suggest(config.suggestion); // in the page now: it can size itself
app.classList.toggle("has-files", Boolean(files));

if (owner && files) files.acceptDrops(document);
followBottom(chat);
files?.refresh();
variables?.refresh();
runs?.refresh();
new EventStream({
  api,
  eventsUrl: config.eventsUrl,
  wsUrl: config.wsUrl,
  fold: FOLD_LINES,
  onState: (state) => status.setConnection(state),
  onCaughtUp: () => {
    backlog.release();
    comments?.load();
  },
  onLive(message) {
    if (message.type === "presence") presence?.show(message.users ?? []);
    else if (message.type === "comment") comments?.add(message.comment);
    else if (message.type === "comment_removed") comments?.remove(message.id);
    else if (message.type === "notifications") {
      window.dispatchEvent(new CustomEvent("analyst:notifications", { detail: { unread: message.unread } }));
    }
  },
  onEvent(event) {
    backlog.apply(event);
    turns.apply(event);
    queue?.apply(event);
    title.apply(event);
    if (event.type === "file_added") files?.fileAdded(event.payload);
    else if (event.type === "file_removed") files?.fileRemoved(event.payload);
    else if (event.type === "error" && event.payload?.code === "file_not_placed") files?.fileNotPlaced(event.payload);
    else if (TURN_ENDS.has(event.type)) {
      files?.refresh();
      variables?.refresh();
      usage.add(event.turn, event.payload?.usage);
    }
  },
}).start();

/** The button that opens ``menu`` (a popover) where the header has no room for it; what opens
 * a drawer or a dialog from it closes it, so that is not hidden behind it. */
function menuButton(menu) {
  const button = el("button", {
    class: "header-menu",
    testid: "header-menu",
    text: "Kernel ▾",
    attrs: { type: "button", popovertarget: menu.id, title: "The kernel, its variables and the files" },
  });
  menu.addEventListener("click", (e) => {
    const opener = e.target.closest(".files-toggle, .variables-toggle, .runs-toggle, [data-testid=rerun-open]");
    if (opener && menu.matches(":popover-open")) menu.hidePopover();
  });
  return button;
}

/** A header button that opens and closes a drawer (the class it toggles on the app). */
function drawerToggle(text, openClass, className) {
  const toggle = el("button", {
    class: className,
    testid: className,
    text,
    attrs: { type: "button", "aria-expanded": "false" },
  });
  toggle.addEventListener("click", () =>
    toggle.setAttribute("aria-expanded", String(app.classList.toggle(openClass))),
  );
  return toggle;
}

function parseList(json) {
  const list = parseJson(json, []);
  return Array.isArray(list) ? list.map(String) : [];
}

function parseJson(json, otherwise) {
  try {
    return JSON.parse(json || "null") ?? otherwise;
  } catch {
    return otherwise;
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

function capitalised(text) {
  return text.charAt(0).toUpperCase() + text.slice(1) + ".";
}
