// Token usage as the end of each turn reports it: a turn's small print, and the session's total.
import { el } from "./dom.js";

const NUMBERS = new Intl.NumberFormat("en-US"); // made once: toLocaleString makes one a call
const count = (n) => NUMBERS.format(Number(n ?? 0));

/** "$0.42", "$0.0031", "<$0.0001", "$0.00"; "cost unknown" when a price or a count is missing. */
export function dollars(cost) {
  if (cost == null) return "cost unknown";
  if (cost === 0 || cost >= 0.01) return `$${cost.toFixed(2)}`;
  if (cost < 0.0001) return "<$0.0001";
  return `$${cost.toPrecision(2)}`;
}

/** A turn's usage: "1,234 tokens in · 56 out · 2 model calls · $0.0042". */
export function turnUsageText({ input_tokens, output_tokens, cost_usd, calls }) {
  const calling = `${calls} model call${calls === 1 ? "" : "s"}`;
  return `${count(input_tokens)} tokens in · ${count(output_tokens)} out · ${calling} · ${dollars(cost_usd)}`;
}

/** The session's running total, summed over each turn's end event (replayed after a reload). */
export class SessionUsage {
  constructor() {
    this.turns = new Map(); // turn id → its usage: an event seen twice counts once
    this.element = el("span", { class: "session-usage", testid: "session-usage" });
    this.element.hidden = true;
  }

  add(turn, usage) {
    if (!usage?.calls) return;
    this.turns.set(turn, usage);
    const total = { input_tokens: 0, output_tokens: 0, cost_usd: 0, calls: 0 };
    for (const each of this.turns.values()) {
      total.input_tokens += each.input_tokens ?? 0;
      total.output_tokens += each.output_tokens ?? 0;
      total.calls += each.calls;
      // One turn without a price makes the total unknown: never a smaller, made-up number.
      const known = total.cost_usd != null && each.cost_usd != null;
      total.cost_usd = known ? total.cost_usd + each.cost_usd : null;
    }
    this.element.hidden = false;
    const tokens = count(total.input_tokens + total.output_tokens);
    this.element.textContent = `${tokens} tokens · ${dollars(total.cost_usd)}`;
    const estimated = total.cost_usd == null ? "" : " (estimated from the price table)";
    this.element.title = `This session: ${turnUsageText(total)}${estimated}`;
  }
}
