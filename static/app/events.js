// The session's events, each once and in seq order, across reconnects: first the log over HTTP
// (paged), then live over the WebSocket from the last seq seen; a lost connection reconnects
// with backoff and carries on from there.
import { ApiError } from "./api.js";

const FIRST_DELAY = 500;
const MAX_DELAY = 5000;
const NOT_ALLOWED = 4404; // the server's close code: no such session, or not yours

/**
 * onEvent(event) gets each event once, in order; onState(state) hears "connecting", "live",
 * "reconnecting" and, when the session is gone or forbidden, "unavailable" (the stream stops).
 */
export class EventStream {
  constructor({ api, eventsUrl, wsUrl, onEvent, onState }) {
    Object.assign(this, { api, eventsUrl, wsUrl, onEvent, onState });
    this.last = 0; // the last seq handed to onEvent
    this.askedAfter = null; // the gap replay already requested, so a burst asks once
    this.delay = FIRST_DELAY;
  }

  start() {
    this.onState("connecting");
    this.connect();
  }

  async connect() {
    try {
      await this.catchUp();
    } catch (error) {
      if (error instanceof ApiError && [401, 403, 404].includes(error.status))
        return this.onState("unavailable");
      return this.retry();
    }
    const socket = new WebSocket(this.socketUrl());
    socket.onopen = () => {
      this.delay = FIRST_DELAY;
      this.onState("live");
    };
    socket.onmessage = (message) => this.receive(socket, message.data);
    socket.onclose = (close) => (close.code === NOT_ALLOWED ? this.onState("unavailable") : this.retry());
  }

  /** The log over HTTP page by page: a long history comes faster than through the socket. */
  async catchUp() {
    for (;;) {
      const before = this.last;
      const { events } = await this.api.get(`${this.eventsUrl}?after=${this.last}`);
      // The stored log is the truth: in order, and any seq above ours is new.
      for (const event of events) if (event.seq > this.last) this.accept(event);
      if (!events.length || this.last === before) return;
    }
  }

  retry() {
    this.onState("reconnecting");
    setTimeout(() => this.connect(), this.delay);
    this.delay = Math.min(this.delay * 2, MAX_DELAY);
  }

  socketUrl() {
    const url = new URL(this.wsUrl, location.href);
    url.protocol = location.protocol === "https:" ? "wss:" : "ws:";
    url.searchParams.set("after", String(this.last));
    return url;
  }

  receive(socket, raw) {
    let event;
    try {
      event = JSON.parse(raw);
    } catch {
      return;
    }
    if (!Number.isInteger(event?.seq) || event.seq <= this.last) return; // seen already
    if (event.seq > this.last + 1) {
      // One went missing: the server replays from our last; this one comes again in order.
      if (this.askedAfter !== this.last) socket.send(JSON.stringify({ after: this.last }));
      this.askedAfter = this.last;
      return;
    }
    this.accept(event);
  }

  accept(event) {
    this.last = event.seq;
    try {
      this.onEvent(event);
    } catch (error) {
      console.error("could not show event", event, error); // one bad event must not stop the rest
    }
  }
}
