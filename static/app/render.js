// A cell's outputs as DOM: streamed text, rich results (Plotly, images, tables, text) and errors.
import { dataTable, tableText } from "./data_table.js";
import { el } from "./dom.js";
import { openLightbox } from "./lightbox.js";
import { drawFigure } from "./plotly_figure.js";
import { htmlFragment, latexFragment, markdownFragment } from "./sanitize.js";
import { loadPlotly } from "./vendor.js";

const PLOTLY = "application/vnd.plotly.v1+json";
const TABLE = "application/vnd.dataresource+json";
const IMAGES = { "image/png": "png", "image/jpeg": "jpg", "image/svg+xml": "svg" };
const ANSI = /\x1b\[[0-9;?]*[ -/]*[@-~]/g;

const stripAnsi = (text) => text.replace(ANSI, "");

/**
 * One `result` event as an element, chosen by preference: Plotly > LaTeX (but a table's) >
 * image > a table's grid (over its HTML table, shown until the grid is drawn and if it cannot
 * be) > HTML > markdown > JSON > plain text. Parts stored as artifacts are fetched from
 * artifactBase, so a shared page reads them through its own token; the element is returned at
 * once and filled in.
 */
export function renderResult(payload, artifactBase) {
  const data = payload.data ?? {};
  const artifacts = payload.artifacts ?? {};
  const has = (mime) => mime in data || mime in artifacts;
  const url = (mime) => `${artifactBase}/${encodeURIComponent(artifacts[mime].id)}`;
  const load = (mime, as) => (mime in data ? Promise.resolve(data[mime]) : fetchArtifact(url(mime), as));

  if (has(PLOTLY)) return plotlyChart(load(PLOTLY, "json"));
  if (has("text/latex") && !has(TABLE) && !has("text/html")) {
    const box = el("div", { class: "latex-output", testid: "latex-output" });
    return filled(box, load("text/latex", "text"), (text) => latexFragment(String(text)));
  }
  const image = Object.keys(IMAGES).find(has);
  if (image) {
    const src = image in artifacts ? url(image) : dataUrl(image, data[image]);
    return imageOutput(src, IMAGES[image]);
  }
  const html = () => {
    const box = el("div", { class: "table-output", testid: "table-output" });
    return filled(box, load("text/html", "text"), (html) => htmlFragment(String(html)));
  };
  if (has(TABLE)) {
    const text = () => el("pre", { class: "text-output", text: stripAnsi(String(data["text/plain"] ?? "")) });
    return dataTable(load(TABLE, "json"), has("text/html") ? html() : text()); // a Series has no HTML
  }
  if (has("text/html")) return html();
  if (has("text/markdown")) {
    const box = el("div", { class: "markdown result-markdown" });
    return filled(box, load("text/markdown", "text"), (text) => markdownFragment(String(text)));
  }
  if (has("application/json")) {
    const box = el("pre", { class: "text-output" });
    return filled(box, load("application/json", "json"), (value) => JSON.stringify(value, null, 2));
  }
  if (has("text/plain")) {
    return el("pre", { class: "text-output", text: stripAnsi(String(data["text/plain"])) });
  }
  return null;
}

/**
 * A cell error, compact: its type and message, and the line of the cell that raised it, with
 * the whole traceback (without its ANSI colours) folded under "Show full traceback".
 */
export function renderCellError({ name, value, traceback }) {
  const full = stripAnsi(Array.isArray(traceback) ? traceback.join("\n") : traceback || "");
  const box = el(
    "div",
    { class: "error-output", testid: "error-output" },
    el("div", { class: "error-summary", testid: "error-summary", text: value ? `${name}: ${value}` : name }),
  );
  const line = failingLine(full);
  if (line) box.append(el("div", { class: "error-line", testid: "error-line", text: line }));
  if (full.trim()) {
    box.append(
      el(
        "details",
        { class: "error-traceback" },
        el("summary", { text: "Show full traceback" }),
        el("pre", { testid: "error-traceback", text: full }),
      ),
    );
  }
  return box;
}

/**
 * "line 2: total = sales['margin']": the arrowed line of the last frame IPython shows in the
 * cell itself ("Cell In[3], line 2" then "----> 2 ..."), the user's code rather than a library's.
 */
function failingLine(traceback) {
  let found = "";
  let inCell = false;
  for (const line of traceback.split("\n")) {
    if (/^(Cell In\s*\[|Input In \[|<ipython-input-)/.test(line)) inCell = true;
    else if (/^File /.test(line)) inCell = false;
    const arrow = inCell && line.match(/^-+>\s*(\d+)\s?(.*)$/);
    if (arrow) found = `line ${arrow[1]}: ${arrow[2].trim()}`;
  }
  return found;
}

/** A problem with the turn itself (the provider, a bad tool call, the sandbox), or a failed turn. */
export function renderProblem(message) {
  return el("div", { class: "problem", testid: "error-output", attrs: { role: "alert" }, text: message });
}

// Streamed text: consecutive chunks of one stream share a <pre> holding two text nodes, the
// finished lines and the last, unfinished one; a bare "\r" rewrites that line (progress bars).
// Past FOLD_LINES lines the rest is kept aside, not in the page, behind "Show all N lines": a
// cell printing 200,000 lines leaves the page as light as one printing a few hundred. A piece
// the server left out (?fold=) comes as ``folded``: {lines, newline, load() → its text}.
export const FOLD_LINES = 300;
// pre → {tail, shown, total, rest: raw text (or pieces still to load) kept aside once folded,
// more: its button, open: all shown on request, so nothing more is folded}
const streams = new WeakMap();

export function appendStream(container, stream, text, folded = null) {
  let pre = container.lastElementChild;
  if (pre?.matches(".show-all")) pre = pre.previousElementSibling;
  if (!pre || pre.dataset.stream !== stream) {
    pre = el("pre", { class: `stream ${stream}` }, "", "");
    pre.dataset.stream = stream;
    container.append(pre);
    streams.set(pre, { tail: "", shown: 0, total: 0, rest: null, more: null, open: false });
  }
  const state = streams.get(pre);
  const [done, last] = pre.childNodes;
  if (folded) {
    // Past the fold where the server counted (it folds only where the page already has).
    if (!state.rest) Object.assign(state, { rest: [state.tail], tail: "", more: showAllButton(pre, state) });
    state.rest.push(folded);
    state.total += folded.lines;
  } else if (state.rest) {
    // Folded: kept as it came, only its lines counted (a huge output costs no line splitting).
    const raw = stripAnsi(text);
    state.rest.push(raw);
    state.total += newlines(raw);
  } else {
    const lines = (state.tail + stripAnsi(text)).replaceAll("\r\n", "\n").split("\n");
    state.tail = lines.pop();
    const finished = lines.map(overwritten);
    state.total += finished.length;
    const shown = state.open ? finished : finished.slice(0, Math.max(FOLD_LINES - state.shown, 0));
    if (shown.length) done.appendData(shown.join("\n") + "\n");
    state.shown += shown.length;
    if (shown.length < finished.length) {
      state.rest = [finished.slice(shown.length).join("\n") + "\n" + state.tail];
      state.tail = "";
      state.more = showAllButton(pre, state);
    }
  }
  if (state.more) {
    const end = state.rest.at(-1);
    const unfinished = (typeof end === "string" ? end.endsWith("\n") : end.newline) ? 0 : 1;
    last.data = "";
    state.more.textContent = `Show all ${(state.total + unfinished).toLocaleString()} lines`;
  } else {
    last.data = overwritten(state.tail);
  }
}

function newlines(text) {
  let count = 0;
  for (let at = text.indexOf("\n"); at !== -1; at = text.indexOf("\n", at + 1)) count += 1;
  return count;
}

/** Lines kept aside, as they would have been drawn: [finished lines' text, the unfinished one]. */
function drawnRest(state) {
  const lines = state.rest.join("").replaceAll("\r\n", "\n").split("\n");
  const tail = lines.pop();
  return [lines.length ? lines.map(overwritten).join("\n") + "\n" : "", tail];
}

function showAllButton(pre, state) {
  const button = el("button", { class: "show-all link", testid: "show-all", attrs: { type: "button" } });
  button.addEventListener("click", async () => {
    const shown = button.textContent;
    button.disabled = true;
    try {
      await loadRest(state);
    } catch {
      button.disabled = false;
      button.textContent = "Could not load the rest; try again";
      return;
    }
    const [done, last] = pre.childNodes;
    const [text, tail] = drawnRest(state);
    done.appendData(text);
    Object.assign(state, { tail, rest: null, more: null, open: true });
    last.data = overwritten(tail);
    button.replaceWith(showLessButton(pre, shown));
  });
  pre.after(button);
  return button;
}

/** Once all is shown: "Show less" folds it back to its first FOLD_LINES lines (the rest stays
 * in the page, hidden), and ``shown`` ("Show all N lines") shows it again. */
function showLessButton(pre, shown) {
  // A "show-all" to appendStream (the stream's <pre> is before it), not to the tests' eyes.
  const button = el("button", {
    class: "show-all show-less link",
    testid: "show-less",
    text: "Show less",
    attrs: { type: "button", "aria-expanded": "true" },
  });
  pre.style.setProperty("--fold-lines", FOLD_LINES);
  button.addEventListener("click", () => {
    const cut = pre.classList.toggle("cut");
    button.textContent = cut ? shown : "Show less";
    button.setAttribute("aria-expanded", String(!cut));
    if (cut) button.scrollIntoView({ block: "nearest" });
  });
  return button;
}

/** The pieces kept aside that the server left out, loaded in place (any arriving meanwhile follow). */
async function loadRest({ rest }) {
  if (rest.every((piece) => typeof piece === "string")) return;
  const texts = await Promise.all(rest.map((piece) => piece.load?.().then(stripAnsi) ?? piece));
  texts.forEach((text, at) => (rest[at] = text));
}

/** A cell's output as text, every line of it (those kept aside too), for its copy button. */
export async function outputText(output) {
  const parts = [];
  for (const node of output.children) {
    const state = streams.get(node);
    if (state?.rest) await loadRest(state);
    const table = state ? null : tableText(node); // a grid: its rows, not its buttons and pages
    if (state?.rest) parts.push(node.firstChild.data + drawnRest(state).join(""));
    else if (state) parts.push(node.firstChild.data + overwritten(state.tail));
    else if (table != null) parts.push(table);
    else if (!node.matches("button")) parts.push(node.innerText ?? node.textContent);
  }
  return parts.join("\n");
}

const overwritten = (line) => line.split("\r").findLast((part) => part !== "") ?? "";

function plotlyChart(figure) {
  const box = el("div", { class: "plotly-chart", testid: "plotly-chart" });
  // A promise even when inline: by the time it resolves the box is in the page, so Plotly sizes it.
  Promise.all([figure, loadPlotly()])
    .then(([fig, Plotly]) => drawFigure(Plotly, box, fig))
    .catch((error) => box.replaceChildren(failure("chart", error)));
  return box;
}

function imageOutput(src, extension) {
  const img = el("img", {
    class: "chart",
    testid: "chart",
    attrs: { src, alt: "Chart", title: "Click to enlarge" },
  });
  img.addEventListener("click", () => openLightbox(src, "Chart"));
  const download = el("a", {
    class: "download-link",
    text: `Download ${extension.toUpperCase()}`,
    attrs: { href: src, download: `chart.${extension}` },
  });
  return el("figure", { class: "image-output" }, img, el("figcaption", {}, download));
}

function dataUrl(mime, value) {
  return mime === "image/svg+xml"
    ? `data:${mime};charset=utf-8,${encodeURIComponent(value)}`
    : `data:${mime};base64,${value}`;
}

function filled(box, content, toNode) {
  content
    .then((value) => box.replaceChildren(toNode(value)))
    .catch((error) => box.replaceChildren(failure("output", error)));
  return box;
}

async function fetchArtifact(url, as) {
  const response = await fetch(url, { credentials: "same-origin" });
  if (!response.ok) throw new Error(`HTTP ${response.status}`);
  return as === "json" ? response.json() : response.text();
}

function failure(what, error) {
  return el("p", { class: "output-failure", text: `Could not show this ${what}: ${error.message ?? error}` });
}
