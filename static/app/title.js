// The session's name where the page shows it: the header (whole on hover), the tab's title, the
// sidebar's link to it and the rename box. A session still untitled is named by the next
// question asked in it, whose user_message carries the name (analyst/turns/titles.py); a name
// the user gave is never replaced, here as on the server.
import { el } from "./dom.js";

export class SessionTitle {
  constructor({ title, untitled }) {
    this.untitled = untitled;
    this.element = el("h1", { class: "session-title", testid: "session-title", text: title, attrs: { title } });
  }

  /** Any event: a question that named the session shows that name, if the page shows none yet. */
  apply(event) {
    const named = event.type === "user_message" ? event.payload?.session_title : null;
    if (typeof named !== "string" || !named || this.element.textContent !== this.untitled) return;
    this.element.textContent = named;
    this.element.title = named;
    document.title = document.title.replace(this.untitled, named);
    const link = document.querySelector('.session-nav a[aria-current="page"]');
    if (link) {
      link.textContent = named;
      link.title = named;
    }
    const rename = document.querySelector('.session-side input[name="title"]');
    if (rename && rename !== document.activeElement && rename.value === this.untitled) rename.value = named;
  }
}
