// A model cell's output folded past a few lines: the model's cells are there to check, not to
// read through, so a whole df.info() waits behind "Show all output" (and "Show less" again).
// Only streamed text is folded; tables, charts and errors stay as they are.
import { el } from "./dom.js";

export function foldTallOutput(output) {
  output.classList.add("clamped");
  const toggle = el("button", {
    class: "output-toggle link",
    testid: "output-toggle",
    text: "Show all output",
    attrs: { type: "button", "aria-expanded": "false" },
  });
  toggle.hidden = true;
  toggle.addEventListener("click", () => {
    const clamped = output.classList.toggle("clamped");
    toggle.textContent = clamped ? "Show all output" : "Show less";
    toggle.setAttribute("aria-expanded", String(!clamped));
    toggle.hidden = false;
  });
  // Text arrives without resizing a box already at its fold, so its mutations are watched too.
  const check = () => {
    if (!output.classList.contains("clamped")) return;
    const streams = [...output.querySelectorAll(":scope > pre.stream")];
    toggle.hidden = !streams.some((pre) => pre.scrollHeight > pre.clientHeight + 1);
  };
  new ResizeObserver(check).observe(output);
  new MutationObserver(check).observe(output, { childList: true, subtree: true, characterData: true });
  output.after(toggle);
}
