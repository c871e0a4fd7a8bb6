// Untrusted HTML made safe: the model's markdown, HTML outputs, highlighted code. Nothing reaches
// innerHTML without going through DOMPurify here.
import { DOMPurify, hljs, marked } from "./vendor.js";

// Images are refused too: a markdown image is fetched without a click, so a prompt-injected
// model could leak data through its URL.
const FORBID_TAGS = words(
  "script style iframe object embed form input button textarea select img link meta base",
);

const MARKDOWN = { FORBID_TAGS, FORBID_ATTR: ["style"], RETURN_DOM_FRAGMENT: true };

// An HTML output is a table (a DataFrame) or simple formatting: nothing else survives.
const TABLE = {
  ALLOWED_TAGS: words(
    "table thead tbody tfoot tr th td caption colgroup col div span p br hr b i strong em code pre small sub sup" +
      " ul ol li h1 h2 h3 h4 h5 h6 blockquote a",
  ),
  ALLOWED_ATTR: ["class", "colspan", "rowspan", "title", "href", "align", "valign"],
  RETURN_DOM_FRAGMENT: true,
};

const HIGHLIGHT = { ALLOWED_TAGS: ["span"], ALLOWED_ATTR: ["class"], RETURN_DOM_FRAGMENT: true };

// Links open in a new tab and tell the target nothing about us.
DOMPurify.addHook("afterSanitizeAttributes", (node) => {
  if (node.tagName === "A" && node.hasAttribute("href")) {
    node.setAttribute("target", "_blank");
    node.setAttribute("rel", "noopener noreferrer");
  }
});

/** The model's markdown as safe DOM, fenced code highlighted. */
export function markdownFragment(text) {
  const fragment = DOMPurify.sanitize(marked.parse(text, { gfm: true, async: false }), MARKDOWN);
  for (const block of fragment.querySelectorAll("pre code[class*='language-']")) {
    const language = block.className.match(/language-([\w-]+)/)?.[1];
    if (language && hljs.getLanguage(language)) {
      block.replaceChildren(highlighted(block.textContent, language));
    }
  }
  return fragment;
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
