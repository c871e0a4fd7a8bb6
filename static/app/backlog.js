// The log read at load, kept as data turn by turn: the page opens scrolled to the bottom, so the
// turns that fill the screen from there are built at once, and each earlier one when it comes
// near the viewport (into a placeholder of about its height, so the scrollbar is right). Built
// once, a turn stays: find in page finds what has been scrolled past.
import { el } from "./dom.js";

const TURN_ENDS = new Set(["turn_done", "turn_cancelled", "turn_failed"]);
const NEAR = 1500; // px above or below the viewport where a turn is built before it shows
const GUESS = 40; // px an event adds to a placeholder's height until built turns tell better

export class Backlog {
  constructor(transcript, root) {
    this.transcript = transcript;
    this.root = root;
    this.held = [[]]; // the events read at load, cut after each turn's end; null once released
    this.waiting = new Map(); // placeholder → the events it stands for
    this.observer = null;
    root.addEventListener("click", (e) => this.buildLinked(e));
  }

  /** An event for the transcript: held while the log is read at load, drawn at once after. */
  apply(event) {
    if (!this.held) return this.transcript.apply(event);
    this.held.at(-1).push(event);
    this.transcript.foresee(event);
    if (TURN_ENDS.has(event.type)) this.held.push([]);
  }

  /** The log read at load is in: its last turns built (and the live one), the rest held. */
  release() {
    if (!this.held) return;
    const turns = this.held.filter((events) => events.length);
    this.held = null;
    const last = turns.at(-1);
    if (!last) return;
    // The last one, finished or not, is the transcript's own: live events carry on from it.
    const finished = TURN_ENDS.has(last.at(-1).type);
    const earlier = finished ? turns : turns.slice(0, -1);
    if (!finished) for (const event of last) this.transcript.apply(event);
    let built = finished ? 0 : last.length;
    let at = earlier.length;
    while (at > 0 && this.builtHeight() < innerHeight) {
      at -= 1;
      this.root.prepend(this.transcript.buildApart(earlier[at]));
      built += earlier[at].length;
    }
    if (at === 0) return;
    const perEvent = built ? Math.max(this.builtHeight() / built, 1) : GUESS;
    this.observer = new IntersectionObserver((seen) => this.buildSeen(seen), { rootMargin: `${NEAR}px 0px` });
    const placeholders = earlier.slice(0, at).map((events) => this.placeholder(events, perEvent));
    this.root.prepend(...placeholders);
  }

  /** From the top of what is built to its bottom (the transcript's own box may be taller). */
  builtHeight() {
    const first = this.root.firstElementChild;
    if (!first) return 0;
    return this.root.lastElementChild.getBoundingClientRect().bottom - first.getBoundingClientRect().top;
  }

  placeholder(events, perEvent) {
    const box = el("div", { class: "turn-placeholder", attrs: { "aria-hidden": "true" } });
    box.style.height = `${Math.round(events.length * perEvent)}px`;
    box.dataset.first = String(events[0].seq);
    box.dataset.last = String(events.at(-1).seq);
    this.waiting.set(box, events);
    this.observer.observe(box);
    return box;
  }

  buildSeen(seen) {
    for (const { target, isIntersecting } of seen) if (isIntersecting) this.build(target);
  }

  build(box) {
    const events = this.waiting.get(box);
    if (!events) return;
    this.waiting.delete(box);
    this.observer.unobserve(box);
    box.replaceWith(this.transcript.buildApart(events));
    if (!this.waiting.size) this.observer.disconnect();
  }

  /** A link to a cell ("edited from this cell") whose turn is not built yet builds it first. */
  buildLinked(e) {
    const seq = Number(e.target.closest?.("a[href^='#cell-']")?.getAttribute("href").slice("#cell-".length));
    if (!seq) return;
    for (const box of this.waiting.keys()) {
      if (Number(box.dataset.first) <= seq && seq <= Number(box.dataset.last)) this.build(box);
    }
  }
}
