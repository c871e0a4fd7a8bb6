// Third-party libraries, served from /static/vendor (scripts/vendor-js): the one module that names their files.
export { marked } from "/static/vendor/marked.esm.js";
export { default as DOMPurify } from "/static/vendor/purify.es.mjs";
export { default as hljs } from "/static/vendor/highlight.esm.js";

// plotly.js (a classic script, 4.6 MB) is loaded when the first figure needs it, not with every
// page: most sessions have none, and it was a third of the page's start-up time.
let plotlyLoading = null;

/** window.Plotly, loading it first if no figure has yet; rejects when it cannot be loaded. */
export function loadPlotly() {
  plotlyLoading ??= new Promise((resolve, reject) => {
    if (window.Plotly) return resolve(window.Plotly);
    const script = document.createElement("script");
    script.src = "/static/vendor/plotly.min.js";
    script.onload = () => (window.Plotly ? resolve(window.Plotly) : reject(new Error("plotly.js did not load")));
    script.onerror = () => {
      plotlyLoading = null; // the next figure tries again
      reject(new Error("plotly.js could not be loaded"));
    };
    document.head.append(script);
  });
  return plotlyLoading;
}

// Tabulator (the tables' grid, 450 kB) is imported when the first table is seen, for the same reason.
let tabulatorLoading = null;

/** Tabulator's class with all its modules; rejects when it cannot be loaded (the next table tries again). */
export function loadTabulator() {
  tabulatorLoading ??= importOnce("/static/vendor/tabulator_esm.min.js", () => (tabulatorLoading = null)).then(
    (module) => module.TabulatorFull,
  );
  return tabulatorLoading;
}

// CodeMirror (the code cell's editor, 370 kB, bundled by scripts/vendor-js) and KaTeX (LaTeX,
// 270 kB) the same way: when the composer is built, when the first formula is seen.
let codeMirrorLoading = null;
let katexLoading = null;

/** The parts of CodeMirror 6 that scripts/codemirror.js exports; rejects when it cannot be loaded. */
export function loadCodeMirror() {
  codeMirrorLoading ??= importOnce("/static/vendor/codemirror.js", () => (codeMirrorLoading = null));
  return codeMirrorLoading;
}

/** KaTeX (its stylesheet, vendor/katex.css, is the page's); rejects when it cannot be loaded. */
export function loadKatex() {
  katexLoading ??= importOnce("/static/vendor/katex.mjs", () => (katexLoading = null)).then(
    (module) => module.default,
  );
  return katexLoading;
}

/** import(url), calling ``forget`` when it fails so that the next call tries again. */
function importOnce(url, forget) {
  return import(url).catch((error) => {
    forget();
    throw error;
  });
}
