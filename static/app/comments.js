// Comments beside a session's questions, cells and answers: each commentable node the transcript
// draws gets a thread (its comments, and a box to add one); the session's comments are read once
// over HTTP and then arrive live through the socket ({"type": "comment"} and "comment_removed"),
// so one made on another page shows here at once. Text goes in through textContent only.
import { el } from "./dom.js";

const MAX_LENGTH = 4000; // analyst/collab/comments.py MAX_LENGTH

export class Comments {
  constructor({ api, url, me }) {
    Object.assign(this, { api, url, me });
    this.threads = new Map(); // seq → its thread's list element
    this.comments = new Map(); // id → comment, every one known
    window.addEventListener("hashchange", () => this.reveal());
  }

  /** The session's comments so far (live ones may have come first: each is shown once). */
  async load() {
    try {
      const { comments } = await this.api.get(this.url);
      for (const comment of comments) this.add(comment);
      this.reveal();
    } catch (error) {
      console.warn("could not load the comments", error);
    }
  }

  /** A thread under ``node``, the question, cell or answer at ``seq``. */
  decorate(node, seq) {
    if (seq == null || this.threads.has(seq)) return;
    const list = el("ul", { class: "comment-list" });
    const thread = el("div", { class: "comments", testid: "comments" }, list, this.composer(seq));
    thread.dataset.seq = seq;
    node.append(thread);
    this.threads.set(seq, list);
    for (const comment of this.comments.values()) if (comment.seq === seq) this.draw(comment);
  }

  add(comment) {
    if (this.comments.has(comment.id)) return;
    this.comments.set(comment.id, comment);
    this.draw(comment);
  }

  remove(id) {
    this.comments.delete(id);
    document.getElementById(`comment-${id}`)?.remove();
  }

  draw(comment) {
    const list = this.threads.get(comment.seq);
    if (!list || document.getElementById(`comment-${comment.id}`)) return;
    const mine = comment.author != null && comment.author === this.me;
    const item = el(
      "li",
      { class: mine ? "comment mine" : "comment", testid: "comment" },
      el("span", { class: "comment-author", testid: "comment-author", text: mine ? "you" : comment.author ?? "a former member" }),
      el("span", { class: "comment-text", testid: "comment-text", text: comment.text }),
    );
    item.id = `comment-${comment.id}`;
    if (mine) {
      const remove = el("button", { class: "link comment-delete", testid: "comment-delete", text: "Delete", attrs: { type: "button" } });
      remove.addEventListener("click", () => this.delete(comment.id));
      item.append(remove);
    }
    list.append(item);
  }

  /** "Comment": opens a box under the thread; sending posts it (the socket then shows it). */
  composer(seq) {
    const open = el("button", { class: "link comment-open", testid: "comment-open", text: "Comment", attrs: { type: "button" } });
    const input = el("textarea", {
      class: "comment-input",
      testid: "comment-input",
      attrs: { rows: "2", maxlength: String(MAX_LENGTH), "aria-label": "Your comment" },
    });
    const send = el("button", { testid: "comment-send", text: "Comment", attrs: { type: "submit" } });
    const cancel = el("button", { class: "link", text: "Cancel", attrs: { type: "button" } });
    const error = el("p", { class: "error comment-error", attrs: { role: "alert" } });
    const form = el("form", { class: "comment-form" }, input, el("div", { class: "comment-actions" }, send, cancel), error);
    form.hidden = true;
    const show = (shown) => {
      form.hidden = !shown;
      open.hidden = shown;
      if (shown) input.focus();
    };
    open.addEventListener("click", () => show(true));
    cancel.addEventListener("click", () => show(false));
    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      if (!input.value.trim()) return;
      send.disabled = true;
      error.textContent = "";
      try {
        this.add(await this.api.post(this.url, { seq, text: input.value }));
        input.value = "";
        show(false);
      } catch (failure) {
        error.textContent = failure.message;
      } finally {
        send.disabled = false;
      }
    });
    return el("div", { class: "comment-box" }, open, form);
  }

  async delete(id) {
    try {
      await this.api.delete(`${this.url}/${id}`);
      this.remove(id);
    } catch (error) {
      console.warn("could not delete the comment", error);
    }
  }

  /** The comment the address names (#comment-<id>, a notification's link), scrolled to. */
  reveal() {
    const target = location.hash.startsWith("#comment-") ? document.getElementById(location.hash.slice(1)) : null;
    if (!target) return;
    target.scrollIntoView({ block: "center" });
    target.classList.add("highlighted");
  }
}
