// An answer's figures as the server traced them (analyst.trust.citations): each one an output
// holds links to that output, each one none holds is marked, the model's [[cell N]] markers
// become links to their cells, and a line under the answer counts them.
import { el } from "./dom.js";

const MARKER = /\[\[\s*cells?\s+(\d{1,6}(?:\s*(?:,|and)\s*\d{1,6})*)\s*\]\]/gi;
// Where no figure is looked for: the server skips code, and links and formulas are not prose.
const SKIP = "code, pre, a, .math-inline, .math-display, .katex";
// A figure the server found but this page cannot (split by emphasis, say) is passed over, as
// long as one of the next LOOKAHEAD is found: one lost figure does not unlink the rest.
const LOOKAHEAD = 5;
const FLASH_MS = 1600;
export const UNTRACED = "not found in any output";

/** The answer's text without its markers (while it streams, and for its copy button). */
export function withoutMarkers(text) {
  return text.replace(new RegExp(`[ \\t]*${MARKER.source}`, "gi"), "");
}

/**
 * ``box`` (the answer's rendered markdown) with its figures marked as ``citations`` say (the
 * event's; an answer stored before figures were traced has none, and only loses its markers).
 * ``locate(seq)`` finds the element showing the output event ``seq``, ``cell(number)`` the
 * model's cell of that number; both are asked at the click, when the page holds more.
 */
export function traceFigures(box, citations, { locate, cell }) {
  const pending = Array.isArray(citations) ? citations.filter((c) => typeof c?.text === "string") : [];
  const state = { pending, next: 0 };
  const walker = document.createTreeWalker(box, NodeFilter.SHOW_TEXT, {
    acceptNode: (node) => (node.parentElement?.closest(SKIP) ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT),
  });
  const texts = [];
  while (walker.nextNode()) texts.push(walker.currentNode);
  for (const text of texts) {
    const pieces = split(text.data, state, { locate, cell });
    if (pieces) text.replaceWith(...pieces);
  }
  return box;
}

/** "12 figures, 11 traced" under an answer with figures; null for one without. */
export function figuresLine(citations) {
  if (!Array.isArray(citations) || !citations.length) return null;
  const traced = citations.filter((c) => c?.verified).length;
  const count = citations.length;
  const text = `${count} figure${count === 1 ? "" : "s"}, ${traced} traced`;
  return el("p", { class: "figures-traced", testid: "figures-traced", text });
}

/** ``data`` as strings and elements (null if nothing in it is a figure or a marker). */
function split(data, state, lookups) {
  const pieces = [];
  let at = 0;
  for (;;) {
    const marker = nextMarker(data, at);
    const figure = nextFigure(data, at, state);
    const first = [marker, figure].filter(Boolean).sort((a, b) => a.start - b.start)[0];
    if (!first) break;
    if (first.start > at) pieces.push(data.slice(at, first.start));
    if (first === marker) {
      pieces.push(cellLinks(marker.numbers, lookups.cell));
    } else {
      state.next = figure.index + 1;
      pieces.push(figureNode(data.slice(figure.start, figure.end), state.pending[figure.index], lookups.locate));
    }
    at = first.end;
  }
  if (!pieces.length) return null;
  if (at < data.length) pieces.push(data.slice(at));
  return pieces;
}

function nextMarker(data, from) {
  MARKER.lastIndex = from;
  const match = MARKER.exec(data);
  if (!match) return null;
  const start = match.index - (data.slice(0, match.index).match(/[ \t]*$/)?.[0].length ?? 0);
  return { start, end: match.index + match[0].length, numbers: match[1].match(/\d+/g).map(Number) };
}

/** The first of the next LOOKAHEAD pending figures found in ``data`` from ``from`` on. */
function nextFigure(data, from, state) {
  let best = null;
  const last = Math.min(state.next + LOOKAHEAD, state.pending.length);
  for (let index = state.next; index < last; index += 1) {
    const found = find(data, state.pending[index].text, from);
    if (found && (!best || found.start < best.start)) best = { ...found, index };
  }
  return best;
}

/** ``figure`` in ``data`` where it stands alone (not a piece of a longer number or a word). */
function find(data, figure, from) {
  const pattern = new RegExp(figure.trim().split(/\s+/).map(escaped).join("\\s+"), "g");
  pattern.lastIndex = from;
  for (let match = pattern.exec(data); match; match = pattern.exec(data)) {
    const before = data.slice(0, match.index);
    const after = data.slice(match.index + match[0].length);
    if (!/[\w.]$|\d,$/.test(before) && !/^(\w|[.,]\d)/.test(after)) {
      return { start: match.index, end: match.index + match[0].length };
    }
  }
  return null;
}

const escaped = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

function figureNode(text, citation, locate) {
  if (!citation.verified || citation.seq == null) {
    return el("span", {
      class: "figure untraced",
      testid: "figure-untraced",
      text,
      attrs: { title: `${text}: ${UNTRACED}`, "aria-label": `${text} (${UNTRACED})` },
    });
  }
  const link = el("a", {
    class: "figure traced",
    testid: "figure-traced",
    text,
    attrs: { href: "#", title: "Show the output this figure comes from" },
  });
  link.dataset.seq = citation.seq;
  link.addEventListener("click", (event) => {
    event.preventDefault();
    reveal(locate(citation.seq));
  });
  return link;
}

/** [[cell 3]] as a small "cell 3" link to that cell (text alone where the page has no such cell). */
function cellLinks(numbers, cell) {
  const sup = el("sup", { class: "cell-cite" });
  numbers.forEach((number, index) => {
    if (index) sup.append(", ");
    const link = el("a", { testid: "cell-cite", text: `cell ${number}`, attrs: { href: "#" } });
    link.addEventListener("click", (event) => {
      event.preventDefault();
      reveal(cell(number));
    });
    sup.append(link);
  });
  return sup;
}

/** Scroll ``target`` into view and highlight it for a moment. */
function reveal(target) {
  if (!target) return;
  // A model cell's text cut at its fold (output_fold.js) is shown whole when the figure may be past it.
  const folded = target.closest(".cell-output.clamped");
  if (folded && target.scrollHeight > target.clientHeight + 1) {
    folded.parentElement.querySelector(":scope > .output-toggle")?.click();
  }
  target.scrollIntoView({ block: "center", behavior: "smooth" });
  target.classList.remove("flash");
  void target.offsetWidth; // restart the animation when clicked again
  target.classList.add("flash");
  setTimeout(() => target.classList.remove("flash"), FLASH_MS);
}
