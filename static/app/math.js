// Formulas in markdown: $…$ and \(…\) inline, $$…$$ and \[…\] displayed, each kept as its TeX
// (escaped) in a .math-inline or .math-display element for sanitize.js to typeset with KaTeX.
//
// A dollar is more often money than maths in an answer about data: as in Pandoc, an opening $ is
// followed by a non-space, a closing one follows a non-space and is not followed by a digit, so
// "from $5 to $10" stays text.

const INLINE = [
  { pattern: /^\$\$([^]+?)\$\$/, display: true },
  { pattern: /^\\\[([^]+?)\\\]/, display: true },
  { pattern: /^\\\(([^]+?)\\\)/, display: false },
  { pattern: /^\$(?![\s$])((?:\\.|[^\\$\n])+?)(?<!\s)\$(?!\d)/, display: false },
];
const BLOCK = /^ {0,3}(?:\$\$([^]+?)\$\$|\\\[([^]+?)\\\])[ \t]*(?:\n+|$)/;

function escapeHtml(text) {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function formula(tex, display) {
  const tag = display ? "div" : "span";
  return `<${tag} class="math-${display ? "display" : "inline"}">${escapeHtml(tex.trim())}</${tag}>`;
}

/** The extension for marked.use(). */
export const mathMarkdown = {
  extensions: [
    {
      name: "mathBlock",
      level: "block",
      start: (src) => src.match(/^ {0,3}(?:\$\$|\\\[)/m)?.index,
      tokenizer(src) {
        const match = BLOCK.exec(src);
        if (match) return { type: "mathBlock", raw: match[0], tex: match[1] ?? match[2] };
      },
      renderer: (token) => `${formula(token.tex, true)}\n`,
    },
    {
      name: "math",
      level: "inline",
      start: (src) => src.match(/\$|\\[([]/)?.index,
      tokenizer(src) {
        for (const { pattern, display } of INLINE) {
          const match = pattern.exec(src);
          if (match) return { type: "math", raw: match[0], tex: match[1], display };
        }
      },
      renderer: (token) => formula(token.tex, token.display),
    },
  ],
};

/** A text/latex output's TeX: one formula (in $…$, $$…$$, \[…\], \(…\) or bare, like
 * \begin{align}…) to display, or text with formulas in it (null: read it as markdown). */
export function displayedTex(text) {
  const source = text.trim();
  for (const [open, close] of [["$$", "$$"], ["\\[", "\\]"], ["$", "$"], ["\\(", "\\)"]]) {
    if (source.startsWith(open) && source.endsWith(close) && source.length > open.length + close.length) {
      const inner = source.slice(open.length, -close.length);
      if (!inner.includes(open) && !inner.includes(close)) return inner;
    }
  }
  return /\$|\\[([]/.test(source) ? null : source;
}
