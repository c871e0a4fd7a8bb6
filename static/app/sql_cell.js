// The SQL cell kind: a code cell written in SQL runs as the kernel's %%sql magic on one of the
// session's connections (`%%sql warehouse`), or on the uploaded files through DuckDB (`%%sql`
// alone). The composer's switch writes that first line; the transcript reads it back.
import { el } from "./dom.js";
import { SQL_KINDS } from "./connection_text.js";

const UPLOADS = ""; // the picker's value for DuckDB over the uploaded files
const MAGIC = /^%%sql(?:[ \t]([^\n]*))?(?:\n|$)/;

/** ``code`` read as a SQL cell: {connection: a name or null (the uploads), body}; null for Python. */
export function sqlCellOf(code) {
  const match = MAGIC.exec(code);
  if (!match) return null;
  const first = (match[1] ?? "").trim().split(/\s+/)[0];
  const connection = /^[A-Za-z_]\w*$/.test(first) ? first : null;
  return { connection, body: code.slice(match[0].length) };
}

/** "SQL · warehouse", "SQL · uploaded files": what a cell's header calls it. */
export function sqlCellLabel({ connection }) {
  return `SQL · ${connection ?? "uploaded files"}`;
}

/** The composer's Python/SQL switch for code cells, and which connection a SQL cell runs on. */
export class CellLanguage {
  constructor() {
    this.language = el("select", {
      class: "cell-language-switch",
      testid: "cell-language-switch",
      attrs: { "aria-label": "The cell's language" },
    });
    this.language.append(el("option", { text: "Python", attrs: { value: "python" } }));
    this.language.append(el("option", { text: "SQL", attrs: { value: "sql" } }));
    this.connection = el("select", {
      class: "sql-connection",
      testid: "sql-connection",
      attrs: { "aria-label": "Where the SQL runs" },
    });
    this.names = [];
    this.setConnections([]);
    this.element = el("span", { class: "sql-switch", testid: "sql-switch" }, this.language, this.connection);
    this.language.addEventListener("change", () => this.show());
    this.show();
  }

  get sql() {
    return this.language.value === "sql";
  }

  show() {
    this.connection.hidden = !this.sql;
    this.element.dataset.language = this.language.value; // static/connections.css follows it
  }

  /** The session's attached connections (the API's objects): the SQL kinds are offered, after the uploads. */
  setConnections(connections) {
    const chosen = this.connection.value;
    this.names = connections.filter((c) => SQL_KINDS.has(c.kind)).map((c) => c.name);
    this.connection.replaceChildren(
      el("option", { text: "uploaded files (DuckDB)", attrs: { value: UPLOADS } }),
      ...this.names.map((name) => el("option", { text: name, attrs: { value: name } })),
    );
    this.connection.value = this.names.includes(chosen) ? chosen : UPLOADS;
  }

  /** The code to run for what was typed: SQL gets its %%sql line. */
  wrap(text) {
    if (!this.sql) return text;
    const name = this.connection.value;
    return `%%sql${name ? ` ${name}` : ""}\n${text}`;
  }

  /** A past cell's code to edit: the switch set to its language (and connection); returns what
   * goes in the editor (a SQL cell's body, without its %%sql line). */
  load(code) {
    const cell = sqlCellOf(code);
    this.language.value = cell ? "sql" : "python";
    if (cell?.connection && !this.names.includes(cell.connection)) {
      // Detached since: still offered, so that the edited cell runs where it did (or says why not).
      this.connection.append(el("option", { text: cell.connection, attrs: { value: cell.connection } }));
    }
    if (cell) this.connection.value = cell.connection ?? UPLOADS;
    this.show();
    return cell ? cell.body : code;
  }
}
