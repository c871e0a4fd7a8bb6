// Copy buttons: a small button that puts some text on the clipboard and says so for a moment.
import { el } from "./dom.js";

/** A button copying ``text()`` (called at the click, so it copies what is there then; it may
 * return a promise of the text). */
export function copyButton(text, label = "Copy", testid = "copy") {
  const button = el("button", { class: "copy-button", testid, text: label, attrs: { type: "button" } });
  return copyOnClick(button, text);
}

/** ``button`` (one the page's HTML holds, say) made to copy ``text()`` when clicked. */
export function copyOnClick(button, text) {
  const label = button.textContent;
  button.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(await text());
      button.textContent = "Copied";
    } catch {
      button.textContent = "Could not copy";
    }
    setTimeout(() => (button.textContent = label), 1500);
  });
  return button;
}
