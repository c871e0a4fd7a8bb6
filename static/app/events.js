// The session's events, each once and in seq order, across reconnects: first the log over HTTP
// (paged), then live over the WebSocket from the last seq seen; a lost connection reconnects
// with backoff and carries on from there. The server sends a heartbeat every `interval` seconds
// ({"type": "heartbeat", "seq": <the last seq it sent>, "interval": <seconds>}): a socket silent
// for SILENT_HEARTBEATS of them counts as lost, even if it never closed. The view is "live" once
// the first heartbeat (sent as the socket opens) has told the interval: a page that said "live" on
// open alone would hold the default until then, and give up on a silent server late.
import { ApiError } from "./api.js";

const CATCH_UP_PAGE = 5000; // events a catch-up request asks for (analyst/api/events.py MAX_PAGE)
const FIRST_DELAY = 500;
const MAX_DELAY = 5000;
const NOT_ALLOWED = 4404; // the server's close code: no such session, or not yours
const SILENT_HEARTBEATS = 2.5;
const FIRST_INTERVAL = 10; // seconds between heartbeats until the server says otherwise
// What a member's socket also sends, outside the log (analyst/web/consumers.py): to onLive.
const LIVE = new Set(["presence", "comment", "comment_removed", "notifications"]);

/**
 * onEvent(event) gets each event once, in order; onState(state) hears "connecting", "live",
 * "reconnecting" and, when the session is gone or forbidden, "unavailable" (the stream stops);
 * onCaughtUp() is called when a read of the log over HTTP has ended (done, or failed part way);
 * onLive(message) gets what the socket sends that is not in the log (presence, comments, the
 * unread count), as it comes.
 * ``fold`` (lines), where given, asks the page's first read of the log to leave out the text of
 * outputs past their first ``fold`` lines (their stream events come with ``payload.folded``).
 */
export class EventStream {
  constructor({ api, eventsUrl, wsUrl, onEvent, onState, onCaughtUp = () => {}, onLive = () => {}, fold = null }) {
    Object.assign(this, { api, eventsUrl, wsUrl, onEvent, onState, onCaughtUp, onLive, fold });
    this.last = 0; // the last seq handed to onEvent
    this.askedAfter = null; // the gap replay already requested, so a burst asks once
    this.delay = FIRST_DELAY;
    this.interval = FIRST_INTERVAL;
    this.silence = null; // the timer that gives up on a socket that has gone quiet
    this.liveSocket = null; // the socket whose first heartbeat made the view live
  }

  start() {
    this.onState("connecting");
    this.connect();
  }

  async connect() {
    try {
      await this.catchUp();
    } catch (error) {
      this.onCaughtUp();
      if (error instanceof ApiError && [401, 403, 404].includes(error.status))
        return this.onState("unavailable");
      return this.retry();
    }
    this.onCaughtUp();
    this.fold = null; // what comes later comes whole, as the socket sends it
    const socket = new WebSocket(this.socketUrl());
    this.expectWithin(socket);
    socket.onopen = () => {
      this.delay = FIRST_DELAY;
    };
    socket.onmessage = (message) => {
      const heard = this.receive(socket, message.data);
      this.expectWithin(socket);
      if (heard === "heartbeat" && socket !== this.liveSocket) {
        this.liveSocket = socket;
        this.onState("live");
      }
    };
    socket.onclose = (close) => {
      clearTimeout(this.silence);
      if (close.code === NOT_ALLOWED) this.onState("unavailable");
      else this.retry();
    };
  }

  /** Give up on `socket` unless something (an event, a heartbeat) arrives soon. */
  expectWithin(socket) {
    clearTimeout(this.silence);
    this.silence = setTimeout(() => {
      // The server may have lost us without closing (say, its Redis restarted): start over.
      socket.onopen = socket.onmessage = socket.onclose = null;
      socket.close();
      this.retry();
    }, this.interval * SILENT_HEARTBEATS * 1000);
  }

  /** The log over HTTP in pages of CATCH_UP_PAGE (one request for most sessions): a long
   * history comes faster than through the socket. */
  async catchUp() {
    for (;;) {
      const before = this.last;
      const fold = this.fold ? `&fold=${this.fold}` : "";
      const { events, more } = await this.api.get(
        `${this.eventsUrl}?after=${this.last}&limit=${CATCH_UP_PAGE}${fold}`,
      );
      // The stored log is the truth: in order, and any seq above ours is new.
      for (const event of events) if (event.seq > this.last) this.accept(event);
      if (!more || this.last === before) return;
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
    url.searchParams.set("collab", "1"); // presence, comments and the unread count too (a member's)
    return url;
  }

  /** Handle one message; returns "heartbeat" for the server's heartbeat. */
  receive(socket, raw) {
    let event;
    try {
      event = JSON.parse(raw);
    } catch {
      return;
    }
    if (event?.type === "heartbeat") {
      if (event.interval > 0) this.interval = event.interval;
      // The server has sent more than we got: ask for the rest (again at each heartbeat, as an
      // answer can be lost too).
      if (Number.isInteger(event.seq) && event.seq > this.last) {
        this.askedAfter = null;
        this.askAgain(socket);
      }
      return "heartbeat";
    }
    if (LIVE.has(event?.type)) {
      try {
        this.onLive(event);
      } catch (error) {
        console.error("could not show", event, error);
      }
      return;
    }
    if (!Number.isInteger(event?.seq) || event.seq <= this.last) return; // seen already
    if (event.seq > this.last + 1) {
      // One went missing: the server replays from our last; this one comes again in order.
      this.askAgain(socket);
      return;
    }
    this.accept(event);
  }

  askAgain(socket) {
    if (this.askedAfter !== this.last) socket.send(JSON.stringify({ after: this.last }));
    this.askedAfter = this.last;
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
