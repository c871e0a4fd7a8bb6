// File notes (Uploaded…, Read again…, Deleted…) that come one after another make one line,
// "Files: uploaded a.csv, b.csv · deleted c.csv", that opens to each note: a session, a branch
// or a fork opens without a stack of them.
import { el } from "./dom.js";

const groups = new WeakMap(); // the group's element → its FileNotes

/** ``note`` (an element with data-verb and data-name) after the last element of ``root``: into
 * the group there, or making one with a lone note there; else ``add(note)`` adds it alone. */
export function addFileNote(root, note, add) {
  const last = root.lastElementChild;
  if (last && groups.has(last)) return groups.get(last).add(note);
  if (!last?.matches(".file-note")) return add(note);
  const group = new FileNotes();
  if (last.dataset.turn != null) group.element.dataset.turn = last.dataset.turn;
  last.replaceWith(group.element);
  group.add(last);
  group.add(note);
}

class FileNotes {
  constructor() {
    this.summary = el("span", { class: "file-notes-summary", testid: "file-notes-summary" });
    this.list = el("div", { class: "file-notes-list" });
    this.list.hidden = true;
    const toggle = el("button", {
      class: "link file-notes-toggle",
      testid: "file-notes-toggle",
      text: "Show each",
      attrs: { type: "button", "aria-expanded": "false" },
    });
    toggle.addEventListener("click", () => {
      this.list.hidden = !this.list.hidden;
      toggle.textContent = this.list.hidden ? "Show each" : "Hide";
      toggle.setAttribute("aria-expanded", String(!this.list.hidden));
    });
    const line = el("div", { class: "file-notes-line" }, this.summary, toggle);
    this.element = el("div", { class: "notice file-notes", testid: "file-notes" }, line, this.list);
    groups.set(this.element, this);
  }

  add(note) {
    this.list.append(note);
    const names = new Map(); // verb → the names it was said of, in order, each once
    for (const { dataset } of this.list.children) {
      if (!names.has(dataset.verb)) names.set(dataset.verb, new Set());
      names.get(dataset.verb).add(dataset.name);
    }
    const parts = [...names].map(([verb, said]) => `${verb.toLowerCase()} ${[...said].join(", ")}`);
    this.summary.textContent = `Files: ${parts.join(" · ")}`;
  }
}
