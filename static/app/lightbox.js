// A chart enlarged in a modal dialog: click anywhere or press Escape to close.
import { el } from "./dom.js";

let dialog = null;

export function openLightbox(src, alt) {
  if (!dialog) {
    dialog = el("dialog", { class: "lightbox", attrs: { "aria-label": "Enlarged chart" } });
    dialog.addEventListener("click", () => dialog.close());
    document.body.append(dialog);
  }
  dialog.replaceChildren(el("img", { attrs: { src, alt } }));
  dialog.showModal();
}
