// Small text formatters shared by the panels.

const UNITS = [
  ["GiB", 1 << 30],
  ["MiB", 1 << 20],
  ["KiB", 1 << 10],
];

/** "1.5 MiB", the same wording as the server's upload messages. */
export function humanSize(bytes) {
  for (const [unit, scale] of UNITS) {
    if (bytes >= scale) return `${(bytes / scale).toFixed(1).replace(/\.0$/, "")} ${unit}`;
  }
  return `${bytes} bytes`;
}

/** "1,000 rows × 5 columns", or "" when the table has not been described yet. */
export function tableShape(rows, columns) {
  if (rows == null || columns == null) return "";
  const plural = (n, word) => `${n.toLocaleString("en")} ${word}${n === 1 ? "" : "s"}`;
  return `${plural(rows, "row")} × ${plural(columns, "column")}`;
}

/** "3.2 s" */
export function seconds(ms) {
  return `${(Math.max(0, ms) / 1000).toFixed(1)} s`;
}
