// Who has the session open, in its header: the names the server sends on every arrival and
// departure ({"type": "presence", "users": [...]}), the viewer shown as "you". Hidden while the
// viewer is alone.
import { el } from "./dom.js";

export class Presence {
  constructor({ me }) {
    this.me = me;
    this.names = el("span", { class: "presence-names" });
    this.element = el(
      "div",
      { class: "presence", testid: "presence", attrs: { "aria-live": "polite" } },
      el("span", { class: "presence-label", text: "Here now:" }),
      this.names,
    );
    this.element.hidden = true;
  }

  show(users) {
    const others = users.filter((name) => name !== this.me);
    const shown = users.includes(this.me) ? [...others, null] : others;
    this.names.replaceChildren(
      ...shown.map((name) =>
        el("span", {
          class: name == null ? "presence-name you" : "presence-name",
          testid: "presence-name",
          text: name ?? "you",
        }),
      ),
    );
    this.element.hidden = others.length === 0;
  }
}
