// An upload's columns kept from the model, in the files panel: the columns reading the file
// proposed as sensitive (e-mail addresses, phone numbers, IBANs, national ids), each confirmed
// ("Keep from the model") or dismissed ("Not sensitive"); the columns marked so, each with Unmark;
// and any other column marked by hand. PATCH <file> {"column_marks": {"<table>": {"<column>":
// "sensitive" | "ordinary" | null}}} (analyst/trust/column_marks.py). Names come from an untrusted
// file: text only.
import { el } from "./dom.js";
import { tableKey } from "./file_dictionary.js";

const TEXT = /^(object|str|string)/;
const KINDS = {
  email: "e-mail addresses",
  phone: "phone numbers",
  iban: "IBANs",
  national_id: "national ids",
};

/** The marks' element. onMark(marks) → a promise (rejects with the reason). */
export function columnMarks(entry, onMark) {
  const box = el("div", { class: "column-marks", testid: "column-marks" });
  const problem = el("p", { class: "file-problem", testid: "column-marks-error", attrs: { role: "alert" } });
  const send = async (button, key, column, mark) => {
    button.disabled = true;
    problem.textContent = "";
    try {
      await onMark({ [key]: { [column]: mark } });
    } catch (error) {
      problem.textContent = error.message;
      button.disabled = false;
    }
  };
  const action = (text, testid, key, column, mark) => {
    const button = el("button", { class: "file-action", testid, text, attrs: { type: "button" } });
    button.addEventListener("click", () => send(button, key, column, mark));
    return button;
  };
  for (const table of entry.tables ?? []) {
    if (table.error || !table.columns?.length) continue;
    const key = tableKey(entry, table);
    const proposed = entry.proposed_marks?.[key] ?? {};
    const marked = entry.column_marks?.[key] ?? {};
    const where = key ? ` (${key})` : "";
    for (const [column, kind] of Object.entries(proposed)) {
      box.append(
        el(
          "div",
          { class: "column-mark proposed", testid: "column-proposed", attrs: { "data-column": column } },
          el("span", { text: `${column}${where} looks like ${KINDS[kind] ?? "personal data"}.` }),
          action("Keep from the model", "mark-sensitive", key, column, "sensitive"),
          action("Not sensitive", "mark-ordinary", key, column, "ordinary"),
        ),
      );
    }
    for (const [column, mark] of Object.entries(marked)) {
      if (mark !== "sensitive") continue;
      box.append(
        el(
          "div",
          { class: "column-mark", testid: "column-sensitive", attrs: { "data-column": column } },
          el("span", { text: `${column}${where}: kept from the model` }),
          action("Unmark", "unmark-sensitive", key, column, null),
        ),
      );
    }
    // Text columns only: their values are what the server recognises (numbers it cannot tell apart).
    const others = table.columns
      .filter((column) => TEXT.test(column.dtype ?? ""))
      .map((column) => column.name)
      .filter((name) => marked[name] !== "sensitive" && !(name in proposed));
    if (others.length) {
      const pick = el("select", {
        testid: "mark-column-pick",
        attrs: { "aria-label": `A column${where} to keep from the model` },
      });
      for (const name of others) pick.append(el("option", { text: name, attrs: { value: name } }));
      const keep = el("button", {
        class: "file-action",
        testid: "mark-column",
        text: "Keep from the model",
        attrs: { type: "button" },
      });
      keep.addEventListener("click", () => send(keep, key, pick.value, "sensitive"));
      box.append(el("div", { class: "column-mark" }, pick, keep));
    }
  }
  box.append(problem);
  return box;
}
