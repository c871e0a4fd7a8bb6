// What the sandbox found in an upload, in words ("1,234 rows × 5 columns · cp1252 · ';' ·
// decimal ','"), and its preview: the first rows of each table, a picker for a workbook's
// sheets or a zip's members, and (for the owner) a form to read the file differently.
// Every value here came from an untrusted file: it goes into the page as text only.
import { el } from "./dom.js";
import { tableShape } from "./format.js";

const DELIMITER_NAMES = { ",": "','", ";": "';'", "\t": "tab", "|": "'|'", " ": "space" };

/** "',' " for a delimiter, "tab" for a tab: a bare comma in a sentence is easy to miss. */
function delimiterName(delimiter) {
  return DELIMITER_NAMES[delimiter] ?? `'${delimiter}'`;
}

/** "cp1252 · ';' · decimal ','": what was detected (or set) to read a table. */
export function detectedText(detected) {
  if (!detected) return "";
  const parts = [];
  if (detected.encoding) parts.push(detected.encoding);
  if (detected.delimiter) parts.push(delimiterName(detected.delimiter));
  if (detected.decimal && detected.decimal !== ".") parts.push(`decimal '${detected.decimal}'`);
  if (detected.thousands) parts.push(`thousands '${detected.thousands}'`);
  if ("header_row" in detected) {
    const row = detected.header_row;
    if (row == null || row === "none") parts.push("no header row");
    else if (Number(row) > 0) parts.push(`header on line ${Number(row) + 1}`);
  }
  return parts.join(" · ");
}

/** "1,234 rows × 5 columns", "about 1,234 rows × 5 columns" when estimated. */
function shapeText(table) {
  const shape = tableShape(table.rows, table.column_count ?? table.columns?.length);
  return shape && table.rows_exact === false ? `about ${shape}` : shape;
}

/** What names a table among its file's: the sheet of a workbook, the member of a zip. */
export function tableLabel(entry, table) {
  if (table.sheet) return table.sheet;
  if (entry.format === "zip" || (table.path && table.path !== entry.path)) {
    return (table.path ?? "").replace(/^data\//, "");
  }
  return "";
}

/** One line per table: [{label, text, error}], label "" for a file holding one table. */
export function tableLines(entry) {
  const tables = entry.tables ?? [];
  if (!tables.length) {
    const text = tableShape(entry.rows, entry.columns);
    return text ? [{ label: "", text, error: "" }] : [];
  }
  return tables.map((table) => ({
    label: tableLabel(entry, table),
    text: [shapeText(table), detectedText(table.detected)].filter(Boolean).join(" · "),
    error: table.error ?? "",
  }));
}

const FORMAT_NAMES = {
  csv: "CSV",
  excel: "Excel",
  parquet: "Parquet",
  json: "JSON",
  jsonl: "JSON lines",
  feather: "Feather",
  zip: "Zip",
};

/** "CSV · gzip", "Excel", "" before the sandbox has looked at it. */
export function formatLabel(entry) {
  const name = FORMAT_NAMES[entry.format] ?? entry.format ?? "";
  return [name, entry.compression && entry.compression !== "zip" ? entry.compression : ""]
    .filter(Boolean)
    .join(" · ");
}

// The corrections the options form offers: [value, label]; "" is "detect it".
const CHOICES = {
  delimiter: [
    ["", "auto"],
    [",", ", comma"],
    [";", "; semicolon"],
    ["\t", "tab"],
    ["|", "| pipe"],
  ],
  encoding: [
    ["", "auto"],
    ...["utf-8", "utf-8-sig", "utf-16", "cp1252", "latin-1"].map((name) => [name, name]),
  ],
  header_row: [
    ["", "auto"],
    ["none", "none"],
    ...Array.from({ length: 10 }, (_, row) => [String(row), `line ${row + 1}`]),
  ],
  decimal: [
    ["", "auto"],
    [",", ", comma"],
    [".", ". point"],
  ],
};
const LABELS = { delimiter: "Delimiter", encoding: "Encoding", header_row: "Header", decimal: "Decimal", sheet: "Sheet" };

/** Which corrections make sense for a format: none for the self-describing ones. */
export function correctable(entry) {
  if (entry.format === "excel") return ["sheet", "header_row"];
  if (["parquet", "feather", "json", "jsonl"].includes(entry.format)) return [];
  return ["delimiter", "encoding", "header_row", "decimal"];
}

/**
 * The preview of one upload. onApply(options) → a promise (rejects with the reason) when the
 * owner may correct how it is read, else null.
 */
export class FilePreview {
  constructor(entry, { tableIndex = 0, onPick = () => {}, onApply = null } = {}) {
    Object.assign(this, { entry, onPick, onApply });
    const tables = entry.tables ?? [];
    this.tableIndex = Math.min(tableIndex, Math.max(0, tables.length - 1));
    this.body = el("div", { class: "preview-body" });
    this.element = el("div", { class: "file-preview", testid: "file-preview" });
    if (tables.length > 1) this.element.append(this.picker(tables));
    this.element.append(this.body);
    if (onApply && correctable(entry).length) this.element.append(this.optionsForm());
    this.showTable();
  }

  picker(tables) {
    const select = el("select", { class: "preview-picker", testid: "preview-table-picker" });
    tables.forEach((table, index) => {
      const option = el("option", { text: tableLabel(this.entry, table) || `table ${index + 1}` });
      option.value = String(index);
      select.append(option);
    });
    select.value = String(this.tableIndex);
    select.addEventListener("change", () => {
      this.tableIndex = Number(select.value);
      this.onPick(this.tableIndex);
      this.showTable();
    });
    const what = this.entry.format === "excel" ? "Sheet" : "Table";
    return el("label", { class: "preview-pick" }, `${what} `, select);
  }

  showTable() {
    const table = (this.entry.tables ?? [])[this.tableIndex];
    if (!table) {
      const text = this.entry.read_error ? "No preview: the file could not be read." : "No preview of this file.";
      this.body.replaceChildren(el("p", { class: "preview-empty", text }));
      return;
    }
    const parts = [];
    // The row above says these already for a file of one table.
    const several = (this.entry.tables ?? []).length > 1;
    const detected = several ? detectedText(table.detected) : "";
    if (detected) {
      parts.push(el("p", { class: "preview-detected", testid: "preview-detected", text: `Read as ${detected}` }));
    }
    if (table.error && several) {
      parts.push(el("p", { class: "preview-error", testid: "preview-error", text: table.error, attrs: { role: "alert" } }));
    }
    const preview = table.preview;
    if (preview?.columns?.length) parts.push(this.grid(table, preview));
    else if (!table.error || !several) {
      const text = this.entry.read_error || table.error ? "No preview: it could not be read." : "No rows to preview.";
      parts.push(el("p", { class: "preview-empty", text }));
    }
    const shown = preview?.rows?.length ?? 0;
    const notes = [];
    if (shown && table.rows != null && table.rows > shown) {
      notes.push(`The first ${shown.toLocaleString("en")} of ${shapeText(table).split(" × ")[0]}.`);
    }
    if (table.sampled) {
      const from = table.sample_rows ? `the first ${table.sample_rows.toLocaleString("en")} rows` : "a sample";
      notes.push(`Types and missing values from ${from}.`);
    }
    if (notes.length) parts.push(el("p", { class: "preview-note", text: notes.join(" ") }));
    if (table.load) {
      parts.push(
        el("p", { class: "preview-load" }, "Loads with ", el("code", { testid: "preview-load", text: table.load })),
      );
    }
    this.body.replaceChildren(...parts);
  }

  /** The first rows, with each column's type under its name; it scrolls inside its own box. */
  grid(table, { columns, rows = [] }) {
    const types = new Map((table.columns ?? []).map((column) => [String(column.name), column.dtype]));
    const head = el(
      "tr",
      {},
      ...columns.map((name) => {
        const type = types.get(String(name));
        const cell = el("th", { attrs: { scope: "col" } }, el("span", { text: String(name) }));
        if (type) cell.append(el("small", { class: "preview-dtype", text: String(type) }));
        return cell;
      }),
    );
    const body = rows.map((row) =>
      el("tr", {}, ...row.map((value) => el("td", { text: value == null ? "" : String(value) }))),
    );
    return el(
      "div",
      { class: "preview-scroll", attrs: { tabindex: "0", role: "region", "aria-label": "First rows" } },
      el("table", { class: "preview-table", testid: "preview-table" }, el("thead", {}, head), el("tbody", {}, ...body)),
    );
  }

  optionsForm() {
    const current = this.entry.options ?? {};
    const fields = correctable(this.entry);
    const selects = {};
    const form = el("form", { class: "read-options", testid: "read-options" });
    form.append(el("p", { class: "read-options-title", text: "Read it differently" }));
    const grid = el("div", { class: "read-options-fields" });
    for (const key of fields) {
      const choices =
        key === "sheet"
          ? [["", "every sheet"], ...(this.entry.sheets ?? []).map((name) => [String(name), String(name)])]
          : CHOICES[key];
      const select = el("select", { testid: `option-${key.replace("_", "-")}` });
      for (const [value, label] of choices) {
        const option = el("option", { text: label });
        option.value = value;
        select.append(option);
      }
      const value = current[key];
      select.value = value == null ? "" : String(value);
      if (select.selectedIndex < 0) select.value = "";
      selects[key] = select;
      grid.append(el("label", {}, el("span", { text: LABELS[key] }), select));
    }
    const apply = el("button", { class: "read-apply", testid: "options-apply", text: "Apply", attrs: { type: "submit" } });
    const problem = el("p", { class: "read-options-error", attrs: { role: "alert" } });
    form.append(grid, el("div", { class: "read-options-bar" }, apply, problem));
    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      // Every correction is sent: the ones this format has no field for keep what is in force.
      const options = {};
      for (const key of ["delimiter", "encoding", "decimal", "header_row", "sheet"]) {
        const raw = key in selects ? selects[key].value : current[key] == null ? "" : String(current[key]);
        options[key] = raw === "" ? null : key === "header_row" && raw !== "none" ? Number(raw) : raw;
      }
      apply.disabled = true;
      apply.textContent = "Applying…";
      problem.textContent = "";
      try {
        await this.onApply(options);
      } catch (error) {
        problem.textContent = error.message;
      } finally {
        apply.disabled = false;
        apply.textContent = "Apply";
      }
    });
    return form;
  }
}
