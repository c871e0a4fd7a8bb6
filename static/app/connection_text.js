// How a connection reads on the page (the Connections page, the session's sidebar): its kind, its
// tables, what its last test found. A connection is the API's object (GET /api/connections).

export const KIND_NAMES = {
  postgres: "PostgreSQL",
  mysql: "MySQL / MariaDB",
  sqlite: "SQLite file",
  duckdb: "DuckDB file",
  s3: "S3 storage",
  http: "HTTP API",
};

/** The kinds that hold SQL tables (a connection of one may be read-only, and a SQL cell runs on it). */
export const SQL_KINDS = new Set(["postgres", "mysql", "sqlite", "duckdb"]);

export function kindName(kind) {
  return KIND_NAMES[kind] ?? kind;
}

/** The tables a test or an attach found: [{name, columns}] ([] before either). */
export function tablesOf(connection) {
  const tables = connection?.schema?.tables;
  return Array.isArray(tables) ? tables : [];
}

/** "12 tables", "1 table"; "" for a kind without tables or a connection not yet looked into. */
export function tablesText(connection) {
  const tables = tablesOf(connection);
  if (!tables.length && !SQL_KINDS.has(connection.kind)) return "";
  if (!tables.length && !connection.checked?.ok) return "";
  return `${tables.length} table${tables.length === 1 ? "" : "s"}`;
}

/** What a test of ``connection`` answered ({ok, category, message, schema}), or its last one (its
 * ``checked``: {ok, category, message, at}), in words: "Connected: 12 tables", "Could not connect: …". */
export function outcomeText(outcome, connection) {
  if (!outcome || outcome.ok == null) return "Not tested yet";
  if (outcome.ok) {
    const schema = outcome.schema ?? connection.schema;
    const tables = tablesText({ kind: connection.kind, schema, checked: outcome });
    return tables ? `Connected: ${tables}` : "Connected";
  }
  return `Could not connect: ${outcome.message || CATEGORIES[outcome.category] || "it failed"}`;
}

// When a failure came without its own sentence.
const CATEGORIES = {
  dns: "its host name was not found",
  refused: "the server refused the connection",
  auth: "the server refused the user name or the password",
  tls: "the secure (TLS) connection failed",
  timeout: "the server did not answer in time",
  blocked: "this address may not be reached from a sandbox",
  unreachable: "the address cannot be reached",
  not_found: "the database or the file was not found",
};
