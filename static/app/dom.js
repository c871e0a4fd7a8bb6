// A terse element builder: every piece of untrusted text goes in through textContent.

/**
 * el("div", {class: "x", testid: "y", text: "…", attrs: {…}}, ...children)
 * `text` is set with textContent; children are nodes or strings (strings become text nodes).
 */
export function el(tag, options = {}, ...children) {
  const node = document.createElement(tag);
  if (options.class) node.className = options.class;
  if (options.testid) node.dataset.testid = options.testid;
  if (options.text != null) node.textContent = options.text;
  for (const [name, value] of Object.entries(options.attrs ?? {})) node.setAttribute(name, value);
  node.append(...children);
  return node;
}
