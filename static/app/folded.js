// The text of outputs the page's first read of the log left out (?fold=: past an output's first
// lines, only counted), fetched from the log when "Show all" or a copy button needs it: the
// pieces asked for together come in one pass over their seqs.
const PAGE = 5000; // events a request asks for (analyst/api/events.py MAX_PAGE)

export class FoldedText {
  constructor(api, eventsUrl) {
    this.api = api;
    this.eventsUrl = eventsUrl;
    this.batch = null; // seq → {resolve, reject}, asked for in this task
  }

  /** A promise of the whole text of the stream event ``seq``. */
  load(seq) {
    if (!this.batch) {
      const batch = (this.batch = new Map());
      queueMicrotask(() => {
        this.batch = null;
        this.fetch(batch);
      });
    }
    return new Promise((resolve, reject) => this.batch.set(seq, { resolve, reject }));
  }

  async fetch(batch) {
    let after = Infinity;
    let end = 0;
    for (const seq of batch.keys()) {
      after = Math.min(after, seq - 1);
      end = Math.max(end, seq);
    }
    try {
      while (after < end) {
        const limit = Math.min(PAGE, end - after);
        const { events, more } = await this.api.get(`${this.eventsUrl}?after=${after}&limit=${limit}`);
        for (const event of events) batch.get(event.seq)?.resolve(event.payload?.text ?? "");
        if (!more || !events.length) break;
        after = events.at(-1).seq;
      }
      throw new Error("the log no longer holds this output");
    } catch (error) {
      for (const { reject } of batch.values()) reject(error); // those resolved stay resolved
    }
  }
}
