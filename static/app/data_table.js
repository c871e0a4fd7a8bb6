// A DataFrame as an interactive grid (Tabulator): sort by a header, filter, page, resize columns,
// copy, download as CSV; drawn from the Table Schema data resource the kernel sends beside
// pandas' HTML (data_tables.py in the kernel's template), which stays in its place until then.
import { copyOnClick } from "./copy.js";
import { el } from "./dom.js";
import { loadTabulator } from "./vendor.js";

const PAGE_SIZES = [10, 25, 50, 100];
const NUMERIC = new Set(["integer", "number"]);
const SORTERS = { integer: "number", number: "number", boolean: "boolean", string: "string" };
const MISSING = { number: "NaN", integer: "<NA>", datetime: "NaT", duration: "NaT" };
const FROZEN_INDEX_FROM = 600; // px of width: narrower, the index scrolls away with the rest
const grids = new WeakMap(); // a drawn table's box → {table, fields}

/**
 * The grid for ``resource`` (an object or a promise of one: {schema: {fields, primaryKey},
 * data, total_rows, total_columns}) as an element showing ``fallback`` (pandas' HTML table)
 * until the grid is drawn, and for good when the library or the data cannot be had. The grid is
 * drawn when the element is first seen (a table never scrolled to costs nothing).
 */
export function dataTable(resource, fallback) {
  const box = el("div", { class: "data-table", testid: "data-table" }, fallback);
  box.dataset.state = "loading";
  Promise.all([resource, loadTabulator(), shown(box)])
    .then(([table, Tabulator]) => {
      grids.set(box, drawGrid(box, Tabulator, table));
      box.dataset.state = "grid";
    })
    .catch((error) => {
      box.dataset.state = "fallback";
      console.warn("The interactive table could not be drawn; the HTML table stays.", error);
    });
  return box;
}

/** A grid's rows as ``separated`` text (its cell's Copy output), or null for any other node. */
export function tableText(node) {
  const drawn = grids.get(node);
  return drawn ? separated(drawn.table, drawn.fields, "\t") : null;
}

/** Resolves once ``element`` has a width: it is in the page and not hidden. */
function shown(element) {
  return new Promise((resolve) => {
    const observer = new ResizeObserver((entries) => {
      if (entries.some((entry) => entry.contentRect.width > 0)) {
        observer.disconnect();
        resolve();
      }
    });
    observer.observe(element);
  });
}

/** The grid and its bar drawn in place of what ``box`` holds; returns {table, fields}. */
function drawGrid(box, Tabulator, resource) {
  const roomy = box.clientWidth >= FROZEN_INDEX_FROM;
  const fields = resource.schema?.fields ?? [];
  const index = new Set(resource.schema?.primaryKey ?? []);
  // Fields by position (c0, c1…): a column's name may hold dots, which Tabulator reads as nesting.
  const rows = (resource.data ?? []).map((record) =>
    Object.fromEntries(fields.map((field, i) => [`c${i}`, record[field.name] ?? null])),
  );
  const holder = el("div", { class: "data-grid", testid: "data-grid" });
  const filter = el("input", {
    class: "data-table-filter",
    testid: "data-table-filter",
    attrs: { type: "search", placeholder: "Filter rows", "aria-label": "Filter rows" },
  });
  const copy = el("button", {
    class: "copy-button",
    testid: "data-table-copy",
    text: "Copy",
    attrs: { type: "button", title: "Copy the rows (filtered and sorted) as tab-separated text" },
  });
  const download = el("button", {
    class: "copy-button",
    testid: "data-table-download",
    text: "Download CSV",
    attrs: { type: "button", title: "The rows as they are filtered and sorted, every page" },
  });
  const note = partial(resource, rows.length, fields.length - index.size);
  box.replaceChildren(el("div", { class: "data-table-bar" }, filter, copy, download), holder);
  if (note) box.append(el("p", { class: "data-table-note", testid: "data-table-note", text: note }));

  const table = new Tabulator(holder, {
    data: rows,
    columns: fields.map((field, i) => column(field, `c${i}`, index.has(field.name), roomy)),
    layout: "fitData",
    renderVertical: "basic",
    pagination: true,
    paginationSize: PAGE_SIZES[0],
    paginationSizeSelector: PAGE_SIZES,
    paginationCounter: "rows",
    paginationButtonCount: 3,
    columnDefaults: { resizable: true, headerSortTristate: true },
    selectableRange: 1, // a range of cells, copied with Ctrl+C
    selectableRangeColumns: false, // a header click sorts
    clipboard: "copy",
    clipboardCopyRowRange: "range",
    clipboardCopyStyled: false,
    clipboardCopyConfig: { columnHeaders: false }, // the cells alone, as a spreadsheet copies them
    placeholder: () => el("span", { class: "data-grid-empty", text: "No rows match." }),
  });

  table.on("dataSorted", () => table.getPage() > 1 && table.setPage(1)); // a new order starts at its top

  let typing = null;
  filter.addEventListener("input", () => {
    clearTimeout(typing);
    typing = setTimeout(() => {
      const wanted = filter.value.trim().toLowerCase();
      // What the cells show is what is matched: "nan" finds the missing numbers.
      const shows = (row) =>
        fields.some((field, i) => shownAs(row[`c${i}`], field.type).toLowerCase().includes(wanted));
      if (wanted) table.setFilter(shows);
      else table.clearFilter();
    }, 120);
  });
  copyOnClick(copy, () => separated(table, fields, "\t"));
  download.addEventListener("click", () => table.download("csv", "table.csv", { bom: true }));
  return { table, fields };
}

/** A column of the grid; an index column (pandas' row labels) is frozen at the left when
 * ``roomy``. */
function column(field, key, isIndex, roomy) {
  const numeric = NUMERIC.has(field.type);
  return {
    title: field.name,
    field: key,
    // Tabulator writes a title or a formatter's string as HTML: ours are text nodes.
    titleFormatter: () => document.createTextNode(field.name),
    formatter: (cell) => {
      const value = cell.getValue();
      if (value == null) cell.getElement().classList.add("missing");
      return document.createTextNode(shownAs(value, field.type)); // a long one: widen its column
    },
    sorter: SORTERS[field.type] ?? "alphanum",
    hozAlign: numeric ? "right" : "left",
    headerHozAlign: numeric ? "right" : "left",
    frozen: isIndex && roomy,
    cssClass: isIndex ? "index-cell" : "",
    maxInitialWidth: 320,
  };
}

/** A value as pandas would print it: NaN/NaT/<NA> for what is missing, inf, True, a timestamp
 * with a space, a float to six decimals (3.0 for a whole one). */
function shownAs(value, type) {
  if (value == null) return MISSING[type] ?? "None";
  if (value === "Infinity") return "inf";
  if (value === "-Infinity") return "-inf";
  if (typeof value === "boolean") return value ? "True" : "False";
  if (typeof value === "number" && type === "number" && Number.isInteger(value) && Math.abs(value) < 1e16) {
    return `${value}.0`; // a float column's whole number, as pandas prints it
  }
  if (typeof value === "number" && !Number.isInteger(value)) {
    const size = Math.abs(value);
    if (size >= 1e16 || size < 1e-4) return value.toExponential(6).replace(/\.?0+e/, "e");
    return value.toLocaleString("en", { maximumFractionDigits: 6, useGrouping: false });
  }
  if (type === "datetime" && typeof value === "string") return value.replace("T", " ");
  return String(value);
}

/** The active rows (filtered, sorted, every page) with a header line, as text cells split by
 * ``separator`` (tabs and newlines inside a value become spaces). */
function separated(table, fields, separator) {
  const clean = (value) => String(value ?? "").replace(/[\t\r\n]+/g, " ");
  const lines = [fields.map((field) => clean(field.name)).join(separator)];
  for (const row of table.getData("active")) {
    lines.push(fields.map((_, i) => clean(row[`c${i}`])).join(separator));
  }
  return lines.join("\n") + "\n";
}

/** "The first 1,000 of 2,500 rows are here: sorting, filtering, copying and downloading work on
 * those.", or "" for a whole table. */
function partial(resource, rows, columns) {
  const totalRows = resource.total_rows ?? rows;
  const totalColumns = resource.total_columns ?? columns;
  const cut = [];
  const count = (n) => n.toLocaleString("en");
  if (rows < totalRows) cut.push(`${count(rows)} of ${count(totalRows)} rows`);
  if (columns < totalColumns) cut.push(`${count(columns)} of ${count(totalColumns)} columns`);
  if (!cut.length) return "";
  const work = "sorting, filtering, copying and downloading work on those";
  return `The first ${cut.join(" and the first ")} are here: ${work}.`;
}
