// A cell's outputs as DOM: streamed text, rich results (Plotly, images, tables, text) and errors.
import { el } from "./dom.js";
import { openLightbox } from "./lightbox.js";
import { htmlFragment, markdownFragment } from "./sanitize.js";
import { plotly } from "./vendor.js";

const PLOTLY = "application/vnd.plotly.v1+json";
const IMAGES = { "image/png": "png", "image/jpeg": "jpg", "image/svg+xml": "svg" };
const ANSI = /\x1b\[[0-9;?]*[ -/]*[@-~]/g;

const stripAnsi = (text) => text.replace(ANSI, "");

/**
 * One `result` event as an element, chosen by preference: Plotly > image > HTML table >
 * markdown > JSON > plain text. Parts stored as artifacts are fetched from artifactBase, so a
 * shared page reads them through its own token; the element is returned at once and filled in.
 */
export function renderResult(payload, artifactBase) {
  const data = payload.data ?? {};
  const artifacts = payload.artifacts ?? {};
  const has = (mime) => mime in data || mime in artifacts;
  const url = (mime) => `${artifactBase}/${encodeURIComponent(artifacts[mime].id)}`;
  const load = (mime, as) => (mime in data ? Promise.resolve(data[mime]) : fetchArtifact(url(mime), as));

  if (has(PLOTLY) && plotly()) return plotlyChart(load(PLOTLY, "json"));
  const image = Object.keys(IMAGES).find(has);
  if (image) {
    const src = image in artifacts ? url(image) : dataUrl(image, data[image]);
    return imageOutput(src, IMAGES[image]);
  }
  if (has("text/html")) {
    const box = el("div", { class: "table-output", testid: "table-output" });
    return filled(box, load("text/html", "text"), (html) => htmlFragment(String(html)));
  }
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

/** A cell error (traceback without its ANSI colours). */
export function renderCellError({ name, value, traceback }) {
  const text = Array.isArray(traceback) ? traceback.join("\n") : traceback || `${name}: ${value}`;
  return el("pre", { class: "error-output", testid: "error-output", text: stripAnsi(text) });
}

/** A problem with the turn itself (the provider, a bad tool call, the sandbox), or a failed turn. */
export function renderProblem(message) {
  return el("div", { class: "problem", testid: "error-output", attrs: { role: "alert" }, text: message });
}

// Streamed text: consecutive chunks of one stream share a <pre> holding two text nodes, the
// finished lines and the last, unfinished one; a bare "\r" rewrites that line (progress bars).
const unfinished = new WeakMap();

export function appendStream(container, stream, text) {
  let pre = container.lastElementChild;
  if (!pre || pre.dataset.stream !== stream) {
    pre = el("pre", { class: `stream ${stream}` }, "", "");
    pre.dataset.stream = stream;
    container.append(pre);
  }
  const [done, last] = pre.childNodes;
  const lines = ((unfinished.get(pre) ?? "") + stripAnsi(text)).replaceAll("\r\n", "\n").split("\n");
  const tail = lines.pop();
  if (lines.length) done.appendData(lines.map(overwritten).join("\n") + "\n");
  unfinished.set(pre, tail);
  last.data = overwritten(tail);
}

const overwritten = (line) => line.split("\r").findLast((part) => part !== "") ?? "";

function plotlyChart(figure) {
  const box = el("div", { class: "plotly-chart", testid: "plotly-chart" });
  // A promise even when inline: by the time it resolves the box is in the page, so Plotly sizes it.
  figure
    .then((fig) => (typeof fig === "string" ? JSON.parse(fig) : fig))
    .then((fig) => {
      // Ours alone (not the figure's): nothing may send the data to plotly's cloud.
      const config = { responsive: true, displaylogo: false, showSendToCloud: false, showLink: false };
      return plotly().newPlot(box, fig.data ?? [], { ...fig.layout, autosize: true }, config);
    })
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
