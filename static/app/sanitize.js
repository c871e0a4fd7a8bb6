// Untrusted HTML made safe: the model's markdown, HTML outputs, highlighted code. Nothing reaches
// innerHTML without going through DOMPurify here.
//
// Safe means two things: nothing runs script, and nothing makes the browser fetch another site
// without a click. A prompt-injected model or a hostile cell could otherwise put what it read in
// a URL (a <video poster>, an SVG <image>, a table's background, a CSS url(...)) and learn that
// the page was opened, by its owner or through a share link. The Content-Security-Policy says
// the same; this holds without it.
import { displayedTex, mathMarkdown } from "./math.js";
import { DOMPurify, hljs, loadKatex, marked } from "./vendor.js";

// Everything that loads a resource by itself, or navigates, or submits. Images are refused in
// markdown too: a markdown image is fetched without a click. (An output's own image is drawn by
// render.js from its data or its artifact, never from what the HTML says.)
const FETCHING_TAGS = words(
  "script style iframe frame frameset object embed applet portal form input button textarea select" +
    " img picture source video audio track link meta base noscript" +
    " image feimage use foreignobject tref altglyph glyphref mpath font-face-uri cursor mglyph",
);
const FETCHING_ATTRS = words(
  "style srcset imagesrcset background poster ping action formaction data codebase archive lowsrc dynsrc" +
    " longdesc manifest icon xml:base",
);
// Attributes holding a URL: anywhere but a link's href, a URL must stay inside the page.
const URL_ATTRS = new Set(words("src href xlink:href cite usemap"));
const LINK_TAGS = new Set(["a", "area"]);
const SVG = "http://www.w3.org/2000/svg";

const MARKDOWN = { FORBID_TAGS: FETCHING_TAGS, FORBID_ATTR: FETCHING_ATTRS, RETURN_DOM_FRAGMENT: true };

// An HTML output is a table (a DataFrame) or simple formatting: nothing else survives.
const TABLE = {
  ALLOWED_TAGS: words(
    "table thead tbody tfoot tr th td caption colgroup col div span p br hr b i strong em code pre small sub sup" +
      " ul ol li h1 h2 h3 h4 h5 h6 blockquote a",
  ),
  ALLOWED_ATTR: ["class", "colspan", "rowspan", "title", "href", "align", "valign"],
  FORBID_TAGS: FETCHING_TAGS,
  FORBID_ATTR: FETCHING_ATTRS,
  RETURN_DOM_FRAGMENT: true,
};

const HIGHLIGHT = { ALLOWED_TAGS: ["span"], ALLOWED_ATTR: ["class"], RETURN_DOM_FRAGMENT: true };

// KaTeX's output: spans placed by inline styles (which the hook below drops if they could
// fetch), SVG paths for stretchy symbols, and MathML for screen readers. KaTeX itself is held to
// plain TeX: no \href, \url, \includegraphics or \htmlClass (trust: false), a size limit, and
// input that is not LaTeX is an error (strict), shown as its source.
const MATH = {
  USE_PROFILES: { html: true, svg: true, mathMl: true },
  ADD_TAGS: ["semantics", "annotation"],
  FORBID_TAGS: FETCHING_TAGS,
  FORBID_ATTR: FETCHING_ATTRS.filter((name) => name !== "style"),
  RETURN_DOM_FRAGMENT: true,
};
const KATEX = {
  throwOnError: false,
  trust: false,
  strict: "error",
  maxSize: 50, // em
  maxExpand: 500,
  output: "htmlAndMathml",
};

marked.use(mathMarkdown);

DOMPurify.addHook("uponSanitizeAttribute", (node, attribute) => {
  const name = attribute.attrName;
  const value = attribute.attrValue;
  if (URL_ATTRS.has(name)) {
    const link = name !== "src" && LINK_TAGS.has(node.localName);
    if (!(link ? isLink(value) : staysInPage(value, node.namespaceURI === SVG))) attribute.keepAttr = false;
  } else if (fetchesInCss(value)) {
    attribute.keepAttr = false; // an SVG presentation attribute: fill="url(https://…)", filter, mask…
  }
});

// Links open in a new tab, tell the target nothing about us, and lend it no ranking.
DOMPurify.addHook("afterSanitizeAttributes", (node) => {
  if (LINK_TAGS.has(node.localName) && (node.hasAttribute("href") || node.hasAttribute("xlink:href"))) {
    node.setAttribute("target", "_blank");
    node.setAttribute("rel", "noopener noreferrer nofollow");
  }
});

/** A link's target: any web or mail address (DOMPurify has refused javascript: and its kin). */
function isLink(value) {
  if (value.startsWith("#")) return true;
  try {
    return ["http:", "https:", "mailto:"].includes(new URL(value, document.baseURI).protocol);
  } catch {
    return false;
  }
}

/**
 * Whether loading this URL stays inside the page: a #fragment; outside SVG (whose references
 * should only ever point into the document) also a data: URL or one of our origin (blob: too).
 */
function staysInPage(value, inSvg) {
  if (value.startsWith("#")) return true;
  let url;
  try {
    url = new URL(value, document.baseURI);
  } catch {
    return false;
  }
  if (url.protocol === "data:") return !inSvg;
  return !inSvg && url.origin === location.origin; // a blob: URL's origin is its creator's
}

/** A CSS value that may fetch: url(...) to anything but a #fragment, image-set(), or an escape
 * (which could spell either). */
function fetchesInCss(value) {
  if (value.includes("\\") || /(?:image(?:-set)?|cross-fade|src)\s*\(/i.test(value)) return true;
  return [...value.matchAll(/url\s*\(\s*["']?\s*(.?)/gi)].some((match) => match[1] !== "#");
}

/** The model's markdown as safe DOM, fenced code highlighted, formulas typeset. */
export function markdownFragment(text) {
  const fragment = DOMPurify.sanitize(marked.parse(text, { gfm: true, async: false }), MARKDOWN);
  for (const block of fragment.querySelectorAll("pre code[class*='language-']")) {
    const language = block.className.match(/language-([\w-]+)/)?.[1];
    if (language && hljs.getLanguage(language)) {
      block.replaceChildren(highlighted(block.textContent, language));
    }
  }
  typeset(fragment);
  return fragment;
}

/** A text/latex output as safe DOM: a formula displayed, or text with formulas in it. */
export function latexFragment(text) {
  const tex = displayedTex(text);
  if (tex == null) return markdownFragment(text);
  const box = document.createElement("div");
  box.className = "math-display";
  box.textContent = tex;
  typeset(box);
  return box;
}

/** The formulas in ``root`` (.math-inline, .math-display: their TeX as text) drawn by KaTeX once
 * it is loaded; until then, and if it cannot be, their TeX shows. */
function typeset(root) {
  const formulas = [...root.querySelectorAll(".math-inline, .math-display")];
  if (root.matches?.(".math-display")) formulas.push(root);
  if (!formulas.length) return;
  loadKatex().then(
    (katex) => {
      for (const node of formulas) {
        const options = { ...KATEX, displayMode: node.classList.contains("math-display") };
        node.replaceChildren(DOMPurify.sanitize(katex.renderToString(node.textContent, options), MATH));
        node.classList.add("typeset");
      }
    },
    (error) => console.warn("KaTeX could not be loaded; formulas show as TeX.", error),
  );
}

/** An HTML output (a DataFrame's table) as safe DOM. */
export function htmlFragment(html) {
  return DOMPurify.sanitize(html, TABLE);
}

/** Source code as highlighted DOM (hljs escapes it; DOMPurify keeps only its spans anyway). */
export function highlighted(code, language = "python") {
  try {
    return DOMPurify.sanitize(hljs.highlight(code, { language, ignoreIllegals: true }).value, HIGHLIGHT);
  } catch {
    return document.createTextNode(code);
  }
}

function words(text) {
  return text.split(" ");
}
