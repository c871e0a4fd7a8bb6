// An upload's data dictionary, edited in the files panel: what the file holds, each table (a
// workbook's sheet, a zip's member) and each column, in the owner's words. The model is given it
// beside the file's schema. Names and types come from an untrusted file: text only.
import { el } from "./dom.js";
import { tableLabel } from "./file_preview.js";

const MAX_TEXT = 1000; // the server's limit on one description (analyst/trust/dictionary.py)

/** How the dictionary names a table: "" for a file that is its one table, else the sheet's
 * name, else the member's path (as analyst/trust/tables.py does). */
export function tableKey(entry, table) {
  if (table.sheet) return String(table.sheet);
  return table.path && table.path !== entry.path ? String(table.path) : "";
}

/** The form. onSave(dictionary) → a promise (rejects with the reason); saved: it was just saved. */
export class DictionaryForm {
  constructor(entry, { onSave, saved: justSaved = false }) {
    Object.assign(this, { entry, onSave });
    const saved = entry.dictionary ?? {};
    this.fileText = this.field(saved.file, `What ${entry.name} holds`, "dictionary-file", true);
    this.tables = []; // [{key, text: its input or null, columns: [[name, input]]}]
    const form = el("form", { class: "file-dictionary", testid: "file-dictionary" });
    form.append(
      el("p", { class: "dictionary-title", text: "Describe it for the analyst" }),
      el("label", { class: "dictionary-file" }, el("span", { text: "The file" }), this.fileText),
    );
    const tables = (entry.tables ?? []).filter((table) => !table.error && table.columns?.length);
    for (const table of tables) form.append(this.tableFields(table, saved.tables ?? {}, tables.length > 1));
    this.status = el("span", {
      class: "dictionary-status",
      testid: "dictionary-status",
      text: justSaved ? "Saved" : "",
      attrs: { role: "status" },
    });
    this.problem = el("p", { class: "dictionary-error", testid: "dictionary-error", attrs: { role: "alert" } });
    const save = el("button", { class: "read-apply", testid: "dictionary-save", text: "Save", attrs: { type: "submit" } });
    form.append(el("div", { class: "read-options-bar" }, save, this.status), this.problem);
    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      save.disabled = true;
      this.status.textContent = "Saving…";
      this.problem.textContent = "";
      try {
        await this.onSave(this.value());
        this.status.textContent = "Saved";
      } catch (error) {
        this.status.textContent = "";
        this.problem.textContent = error.message;
      } finally {
        save.disabled = false;
      }
    });
    this.element = form;
  }

  tableFields(table, savedTables, several) {
    const key = tableKey(this.entry, table);
    const saved = savedTables[key] ?? {};
    const box = el("fieldset", { class: "dictionary-table", testid: "dictionary-table" });
    const label = tableLabel(this.entry, table) || key;
    let text = null;
    if (several) {
      box.append(el("legend", { text: label }));
      text = this.field(saved.text, `What ${label} holds`, "dictionary-table-text");
      box.append(el("label", {}, el("span", { text: "The table" }), text));
    }
    const columns = [];
    for (const column of table.columns) {
      const name = String(column.name);
      const input = this.field(saved.columns?.[name], `What ${name} means`, "dictionary-column");
      input.dataset.column = name;
      const caption = el("span", { class: "dictionary-column-name", text: name, attrs: { title: String(column.dtype ?? "") } });
      columns.push([name, input]);
      box.append(el("label", {}, caption, input));
    }
    this.tables.push({ key, text, columns });
    return box;
  }

  field(value, placeholder, testid, long = false) {
    const input = el(long ? "textarea" : "input", {
      testid,
      attrs: { maxlength: String(MAX_TEXT), placeholder, "aria-label": placeholder, ...(long ? { rows: "2" } : {}) },
    });
    input.value = value ?? "";
    return input;
  }

  /** The dictionary as the form holds it; the server leaves the empty descriptions out. */
  value() {
    const tables = {};
    for (const { key, text, columns } of this.tables) {
      tables[key] = { columns: Object.fromEntries(columns.map(([name, input]) => [name, input.value])) };
      if (text) tables[key].text = text.value;
    }
    return { file: this.fileText.value, tables };
  }
}
