// Third-party libraries, served from /static/vendor (scripts/vendor-js): the one module that names their files.
export { marked } from "/static/vendor/marked.esm.js";
export { default as DOMPurify } from "/static/vendor/purify.es.mjs";
export { default as hljs } from "/static/vendor/highlight.esm.js";

// plotly.js is a classic script the page loads before our modules; undefined if it failed to load.
export function plotly() {
  return window.Plotly;
}
