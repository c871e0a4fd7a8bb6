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
const BUSY_RETRY_MS = 2000;
let liveBase = null; // the owner's page: `/api/sessions/<id>/variables`

/** Grids of a table a variable still holds ask the kernel for its pages at ``base`` (the
 * owner's session page; a shared page has none and keeps the rows stored with the cell). */
export function liveTablesAt(base) {
  liveBase = base;
}

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

  const paged = rows.length > PAGE_SIZES[0]; // a table of one page has no pager
  const state = { table: null, live: null };
  const table = new Tabulator(holder, {
    data: rows,
    columns: fields.map((field, i) => column(field, `c${i}`, index.has(field.name), roomy)),
    layout: "fitData",
    renderVertical: "basic",
    pagination: paged,
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

  if (paged) table.on("dataSorted", () => table.getPage() > 1 && table.setPage(1)); // a new order starts at its top

  state.table = table;
  let typing = null;
  filter.addEventListener("input", () => {
    clearTimeout(typing);
    typing = setTimeout(() => {
      if (state.live) return state.table.setPage(1); // asks the kernel again, with the filter
      const wanted = filter.value.trim().toLowerCase();
      // What the cells show is what is matched: "nan" finds the missing numbers.
      const shows = (row) =>
        fields.some((field, i) => shownAs(row[`c${i}`], field.type).toLowerCase().includes(wanted));
      if (wanted) table.setFilter(shows);
      else table.clearFilter();
    }, 120);
  });
  copyOnClick(copy, () => separated(state.table, fields, "\t"));
  download.addEventListener("click", () => {
    if (state.live) window.location.assign(state.live.csvUrl());
    else state.table.download("csv", `${resource.variable?.name ?? "table"}.csv`, { bom: true }); // (an identifier)
  });
  const source = liveBase && resource.variable?.name ? new LiveTable(liveBase, resource.variable, filter) : null;
  if (source && (paged || note)) {
    // (A whole table of one page is all here: nothing to ask the kernel, and no pager.)
    goLive(box, Tabulator, source, { state, holder, fields, index, roomy, copy }, rows.length, partialNote(box));
  }
  return {
    get table() {
      return state.table;
    },
    fields,
  };
}

/** The kernel's pages of a table a variable holds: {variable: {name, token?}} of its resource. */
class LiveTable {
  constructor(base, variable, filter) {
    this.url = `${base}/${encodeURIComponent(variable.name)}/rows`;
    this.name = variable.name;
    this.token = variable.token ?? null;
    this.filter = filter;
    this.sort = null;
  }

  query(extra = {}) {
    const query = new URLSearchParams(extra);
    if (this.token) query.set("token", this.token);
    if (this.sort) query.set("sort", this.sort.name);
    if (this.sort?.desc) query.set("desc", "1");
    const wanted = this.filter.value.trim();
    if (wanted) query.set("filter", wanted);
    return query;
  }

  csvUrl() {
    return `${this.url}.csv?${this.query()}`;
  }

  /** A page: the JSON, or {gone: message} (no longer in the kernel), or {busy: message}. */
  async page(offset, limit) {
    const response = await fetch(`${this.url}?${this.query({ offset, limit })}`, {
      credentials: "same-origin",
      headers: { Accept: "application/json" },
    });
    const body = await response.json().catch(() => ({}));
    if (response.ok) return body;
    const code = body.error?.code;
    const message = body.error?.message ?? `the kernel could not answer (HTTP ${response.status})`;
    if (code === "kernel_busy") return { busy: message };
    if (code === "not_a_table" || code === "no_kernel") return { gone: message };
    throw new Error(message);
  }
}

/** A note under the grid, made once, for what the live grid says. */
function partialNote(box) {
  let note = box.querySelector(".data-table-note");
  return (text) => {
    if (!note) {
      note = el("p", { class: "data-table-note", testid: "data-table-note" });
      box.append(note);
    }
    note.textContent = text;
    note.hidden = !text;
  };
}

/**
 * Swaps the stored rows' grid for one whose pages, sort and filter the kernel answers over the
 * whole frame, once the kernel answers; while a cell runs (409 kernel_busy) it asks again every
 * BUSY_RETRY_MS and the stored rows stay. Once the variable is gone (or holds another table),
 * the stored rows' grid comes back, saying so.
 */
async function goLive(box, Tabulator, source, grid, storedRows, say) {
  const stored = grid.state.table;
  const storedNote = box.querySelector(".data-table-note")?.textContent ?? "";
  const liveHolder = el("div", { class: "data-grid", testid: "data-grid" });
  const gone = (message) => {
    if (grid.state.live) {
      grid.state.table.destroy();
      liveHolder.replaceWith(grid.holder);
      stored.redraw(true);
      grid.state.table = stored;
    }
    grid.state.live = null;
    const count = storedRows.toLocaleString("en");
    const said = message.charAt(0).toUpperCase() + message.slice(1);
    say(`${said}: the ${count} rows stored with the cell are here; sorting, filtering, copying and downloading work on those.`);
    box.dataset.live = "gone";
  };
  let first;
  for (;;) {
    first = await source.page(0, PAGE_SIZES[0]).catch((error) => ({ gone: error.message }));
    if (!first.busy) break;
    say(`The kernel is running a cell: until it ends, ${storedNote.replace(/^The first/, "the first") || "the stored rows are shown"}`);
    box.dataset.live = "busy";
    await new Promise((resolve) => setTimeout(resolve, BUSY_RETRY_MS));
  }
  if (first.gone) return gone(first.gone);
  const { holder, fields, index, roomy } = grid;
  grid.state.live = source;
  say("");
  holder.replaceWith(liveHolder);
  let lastQuery = "";
  const table = new Tabulator(liveHolder, {
    ...liveOptions(fields, index, roomy),
    ajaxURL: source.url,
    ajaxRequestFunc: async (url, config, params) => {
      const wanted = params.sort?.[0];
      const field = wanted ? fields[Number(wanted.field.slice(1))] : null;
      source.sort = field ? { name: field.name, desc: wanted.dir === "desc" } : null;
      const size = params.size ?? PAGE_SIZES[0];
      const query = `${source.query()}`;
      const from = query === lastQuery ? params.page : 1; // a new order or filter starts at its top
      if (from !== params.page) setTimeout(() => table.setPage(1));
      lastQuery = query;
      for (;;) {
        const page = await source.page((from - 1) * size, size);
        if (page.busy) {
          say("The kernel is running a cell: the table answers once it ends.");
          await new Promise((resolve) => setTimeout(resolve, BUSY_RETRY_MS));
          continue;
        }
        if (page.gone) {
          setTimeout(() => gone(page.gone));
          return { last_page: 1, last_row: 0, data: [] };
        }
        say(page.total_rows < page.all_rows ? `${page.total_rows.toLocaleString("en")} of ${page.all_rows.toLocaleString("en")} rows match.` : "");
        const data = page.rows.map((row) => Object.fromEntries(row.map((value, i) => [`c${i}`, value ?? null])));
        return { last_page: Math.max(1, Math.ceil(page.total_rows / size)), last_row: page.total_rows, data };
      }
    },
  });
  grid.state.table = table;
  box.dataset.live = "live";
}

/** The grid's options when the kernel answers its pages, sorts and filters. */
function liveOptions(fields, index, roomy) {
  return {
    columns: fields.map((field, i) => column(field, `c${i}`, index.has(field.name), roomy)),
    layout: "fitData",
    renderVertical: "basic",
    pagination: true,
    paginationMode: "remote",
    sortMode: "remote",
    filterMode: "remote",
    paginationSize: PAGE_SIZES[0],
    paginationSizeSelector: PAGE_SIZES,
    paginationCounter: "rows",
    paginationButtonCount: 3,
    columnDefaults: { resizable: true, headerSortTristate: true },
    selectableRange: 1,
    selectableRangeColumns: false,
    clipboard: "copy",
    clipboardCopyRowRange: "range",
    clipboardCopyStyled: false,
    clipboardCopyConfig: { columnHeaders: false },
    placeholder: () => el("span", { class: "data-grid-empty", text: "No rows match." }),
  };
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
