// The transcript: each event of the log, in seq order, turned into messages, code cells and notices.
import { figuresLine, traceFigures, withoutMarkers } from "./citations.js";
import { copyButton } from "./copy.js";
import { el } from "./dom.js";
import { PendingCells } from "./approvals.js";
import { addFileNote } from "./file_notes.js";
import { tableShape } from "./format.js";
import { foldTallOutput } from "./output_fold.js";
import { appendStream, outputText, renderCellError, renderProblem, renderResult } from "./render.js";
import { highlighted, markdownFragment } from "./sanitize.js";
import { sqlCellLabel, sqlCellOf } from "./sql_cell.js";
import { turnUsageText } from "./usage.js";

// A cell has finished when one of these follows it (cell_done says so; the others are for a
// turn that ended without it: stopped, failed, its worker lost).
// prettier-ignore
const ENDS_CELL = new Set([
  "cell_done", "user_message", "cell", "tool_call", "assistant_delta", "assistant_message",
  "turn_done", "turn_cancelled", "turn_failed",
]);

// What a turn's events leave in the transcript's state while they are drawn.
const BETWEEN_TURNS = ["root", "cells", "ownCell", "running", "streaming", "waiting", "folding", "figureTally"];

export class Transcript {
  /** ``onEdit(code, seq)``, where given (the owner's page), puts a cell's code back in the
   * composer to be edited and run again as a new cell; ``onEditQuestion(text, turn)`` a question,
   * to be edited into a branch; ``onRegenerate(turn)`` asks the last question again.
   * ``branches``: this session's branches ({id, title, at: the question's seq}), linked there.
   * ``foldedText`` (a FoldedText) loads the outputs the server left out of the page (?fold=).
   * ``me``: the viewer's username (a question or cell of someone else's says who asked or ran
   * it); ``decorate(node, seq)``, where given, adds to each question, cell and answer (comments). */
  constructor(
    root,
    {
      artifactBase,
      onEdit = null,
      onEditQuestion = null,
      onRegenerate = null,
      onDecide = null,
      onParameters = null,
      branches = [],
      foldedText = null,
      me = null,
      decorate = null,
    },
  ) {
    this.root = root;
    this.page = root; // this.root is a turn's own fragment while buildApart builds it
    this.artifactBase = artifactBase;
    this.onEdit = onEdit;
    this.onEditQuestion = onEditQuestion;
    this.onRegenerate = onRegenerate;
    this.onParameters = onParameters; // onParameters(code): mark that cell as the parameters cell ("" unmarks)
    this.parametersCode = null; // the code of the marked parameters cell
    this.branches = branches;
    this.foldedText = foldedText;
    this.me = me;
    this.decorate = decorate ?? (() => {});
    this.turn = null; // the turn of the event being applied: its nodes are marked with it
    this.kinds = new Map(); // turn → "chat" | "cell" | "restart", from its first event
    this.regenerate = null; // the Regenerate button under the last answer, while it is the last turn
    this.folding = null; // while a fork's copied answer asked again since arrives: its fold
    this.apart = false; // while buildApart builds an earlier turn, out of the log's order
    this.lastTurn = null; // the log's newest turn (foreseen too): the one Regenerate may follow
    this.supersededTurns = new Set(); // answers asked again, folded whenever they are built
    this.cells = new Map(); // tool_call_id → cell: where the model's tagged outputs go
    this.outputs = new Map(); // an output event's seq → the element showing it: where a traced figure links
    this.figureTally = null; // the turn whose figures are counted under its latest answer: {turn, all, line}
    this.ownCell = null; // the user's own cell of this turn: where untagged outputs go
    this.running = null; // the cell whose code is running, until an event in ENDS_CELL
    this.streaming = null; // the assistant message being streamed: {box, text}
    this.waiting = null; // "Reading ventes.csv…" while a turn waits for its uploads: {turn, box}
    this.described = new Map(); // upload id → the seq of its first file_added
    // The model's cells waiting for approval; onDecide(toolCallId, action, body): the owner's decision.
    this.pendingCells = new PendingCells({ decide: onDecide });
  }

  apply({ type, turn, seq, payload = {} }) {
    this.turn = turn ?? null;
    this.copiedSuperseded = Boolean(payload.superseded); // a fork's copy of an answer asked again since
    if (turn != null && !this.kinds.has(turn)) this.kinds.set(turn, kindOf(type, payload));
    if (!this.apart && turn != null) this.lastTurn = turn;
    if (this.apart) {
      // An earlier turn: it neither takes the Regenerate button from the last one nor gets one.
    } else if (this.regenerate && turn != null && String(turn) !== this.regenerate.dataset.turn) {
      this.dropRegenerate();
    }
    if (ENDS_CELL.has(type)) this.settle();
    this.pendingCells.follow(type, turn);
    if (this.waiting && type !== "files_waiting" && turn != null && turn === this.waiting.turn) {
      this.waiting.box.hidden = true; // the turn goes on: its files are read (or failed)
      this.waiting = null;
    }
    switch (type) {
      case "user_message":
        this.stopStreaming();
        if (payload.regenerates != null) this.supersede(payload.regenerates);
        return this.add(this.question(payload, turn, seq));
      case "cell": {
        const via = payload.via === "mcp" ? viaMcp(payload, "run") : this.someoneElse(payload.by, "run");
        const replay = payload.replay ?? null;
        const author = replay?.by === "model" ? "assistant" : "user";
        this.ownCell = this.addCell(payload.code ?? "", author, { seq, via, editedFrom: payload.edited_from, replay });
        return;
      }
      case "tool_call":
        this.cells.set(payload.id, this.addCell(payload.code ?? "", "assistant", { seq, number: payload.cell }));
        return;
      case "cell_pending":
        this.stopStreaming();
        return this.add(this.pendingCells.pending(payload, seq, turn));
      case "cell_decided":
        return this.pendingCells.decidedOn(payload);
      case "assistant_delta":
        return this.streamAssistant(payload.text ?? "");
      case "assistant_message":
        return this.finishAssistant(payload.text ?? "", payload.citations, seq);
      case "stdout":
      case "stderr": {
        const output = this.outputFor(payload);
        appendStream(output, type, payload.text ?? "", this.folded(seq, payload));
        return this.outputs.set(seq, [...output.querySelectorAll(":scope > pre.stream")].at(-1) ?? output);
      }
      case "result": {
        const node = renderResult(payload, this.artifactBase);
        if (node) this.outputFor(payload).append(node);
        if (node) this.outputs.set(seq, node);
        return;
      }
      case "error":
        return this.error(payload, seq);
      case "kernel_restored": // the running cell waited for it: it reads before that cell
        return this.notice(payload.text ?? "", type, this.running);
      case "notice":
      case "kernel_resumed": // quiet: the kernel came back as it was
        return this.notice(payload.text ?? "", type);
      case "forked":
        return this.forked(payload);
      case "file_added":
        return this.fileAdded(payload, seq);
      case "file_removed":
        return this.fileNote("file-removed", "Deleted", payload.path ?? payload.name ?? "a file", "");
      case "files_waiting":
        return this.filesWaiting(turn, payload);
      case "turn_done":
        this.endTurn();
        this.usage(payload.usage);
        return this.offerRegenerate(turn);
      case "turn_cancelled":
        this.endTurn();
        this.notice("Stopped.", type);
        this.usage(payload.usage);
        return this.offerRegenerate(turn);
      case "turn_failed":
        this.endTurn();
        this.add(renderProblem(`The turn failed: ${payload.reason ?? "unknown reason"}`));
        this.usage(payload.usage);
        return this.offerRegenerate(turn);
    }
  }

  add(node) {
    if (this.turn != null) node.dataset.turn = this.turn;
    this.root.append(node);
    if (!this.copiedSuperseded) {
      this.folding = null;
    } else if (this.folding) {
      this.folding.add(node);
    } else {
      this.folding = foldAway([node]);
    }
  }

  /** A question: Edit (the owner's, on a question of this session's own turns) puts it back in
   * the composer to branch from; the branches made at it are linked below it. */
  question(payload, turn, seq) {
    const box = el(
      "div",
      { class: "message user", testid: "user-message" },
      el("div", { class: "bubble", testid: "question-text", text: payload.text ?? "" }),
    );
    if (seq != null) box.id = `msg-${seq}`;
    if (payload.via === "mcp") box.append(el("div", { class: "via", testid: "via", text: viaMcp(payload, "asked") }));
    else if (this.someoneElse(payload.by, "asked")) {
      box.append(el("div", { class: "via asked-by", testid: "asked-by", text: this.someoneElse(payload.by, "asked") }));
    }
    const actions = el("div", { class: "question-actions" });
    if (payload.regenerates != null) {
      actions.append(el("span", { class: "regenerated", testid: "regenerated", text: "asked again" }));
    }
    if (this.onEditQuestion && turn != null) {
      const edit = el("button", { class: "cell-action", testid: "question-edit", text: "Edit", attrs: { type: "button" } });
      edit.title = "Edit this question: it is asked in a new session, branched from just before it";
      edit.addEventListener("click", () => this.onEditQuestion(payload.text ?? "", turn));
      actions.append(edit);
    }
    if (actions.childElementCount) box.append(actions);
    for (const branch of this.branches.filter((b) => b.at === seq)) {
      const link = el("a", { class: "branch-link", testid: "branch-link", text: `branched: ${branch.title}` });
      link.href = `/sessions/${branch.id}/`;
      box.append(link);
    }
    this.decorate(box, seq);
    return box;
  }

  /** "asked by alice": a member's question or cell shown to another member ("" to its own). */
  someoneElse(by, verb) {
    return by && this.me && by !== this.me ? `${verb} by ${by}` : "";
  }

  /** A fork's or a branch's first line; a branch links back to the question it was made at
   * (on the owner's page: a viewer of a shared branch may not see the original). */
  forked(payload) {
    const box = el("div", { class: "notice", testid: "notice", text: payload.text ?? "" });
    box.dataset.type = "forked";
    if (payload.branched_at != null && payload.from && this.onEditQuestion) {
      const link = el("a", {
        class: "branch-origin",
        testid: "branch-origin",
        text: `Back to “${payload.from_title ?? "the original"}” at that question`,
      });
      link.href = `/sessions/${payload.from}/#msg-${payload.branched_at}`;
      box.append(" ", link);
    }
    this.add(box);
  }

  /** The last answer, a question's, gets a Regenerate button (the owner's page), until another
   * turn's event arrives. */
  offerRegenerate(turn) {
    if (this.apart && String(turn) !== String(this.lastTurn)) return;
    this.dropRegenerate();
    if (!this.onRegenerate || turn == null || this.kinds.get(turn) !== "chat") return;
    const button = el("button", { class: "cell-action regenerate", testid: "regenerate", text: "Regenerate", attrs: { type: "button" } });
    button.title = "Ask this question again, in the kernel as it was before it";
    button.dataset.turn = turn;
    button.addEventListener("click", () => this.onRegenerate(turn));
    this.regenerate = el("div", { class: "regenerate-bar" }, button);
    this.regenerate.dataset.turn = turn;
    this.root.append(this.regenerate);
  }

  dropRegenerate() {
    this.regenerate?.remove();
    this.regenerate = null;
  }

  /** Hidden while a turn runs (it would be refused). */
  setIdle(idle) {
    if (this.regenerate) this.regenerate.hidden = !idle;
  }

  /** The answer asked again: folded away (see foldAway). */
  supersede(turn) {
    this.supersededTurns.add(String(turn)); // if it is not built yet, it is folded when it is
    const selector = `[data-turn="${CSS.escape(String(turn))}"]:not(.superseded)`;
    // In the page, and in the turn being built apart (not in the page yet).
    const roots = this.root === this.page ? [this.page] : [this.page, this.root];
    const nodes = roots.flatMap((root) => [...root.querySelectorAll(selector)]);
    if (nodes.length) foldAway(nodes);
  }

  /** ``events``, a whole turn (or what came between two) read earlier than those shown, built
   * apart from the rest: as a fragment to put where it belongs, leaving the running turn's
   * state (its cells, a streamed answer) as it was. */
  buildApart(events) {
    const kept = {};
    for (const name of BETWEEN_TURNS) kept[name] = this[name];
    Object.assign(this, { root: document.createDocumentFragment(), cells: new Map() });
    Object.assign(this, { ownCell: null, running: null, streaming: null, waiting: null, folding: null });
    this.figureTally = null;
    this.apart = true;
    try {
      for (const event of events) this.apply(event);
      this.endTurn();
      const turn = events.find((event) => event.turn != null)?.turn;
      if (turn != null && this.supersededTurns.has(String(turn))) this.supersede(turn);
      return this.root;
    } finally {
      Object.assign(this, kept);
      this.apart = false;
    }
  }

  /** An event held back to be built later: what the turns built before it need to know of it
   * (an upload's first description, so that later ones say "Read again" in any order). */
  foresee({ type, turn, seq, payload = {} }) {
    if (type === "file_added" && payload.id != null && !this.described.has(payload.id)) {
      this.described.set(payload.id, seq);
    }
    if (turn != null) this.lastTurn = turn;
    if (type === "user_message" && payload.regenerates != null) this.supersededTurns.add(String(payload.regenerates));
  }

  /** A stream event's piece the server left out, with a way to load it; null for one it sent. */
  folded(seq, { folded }) {
    if (!folded || !this.foldedText) return null;
    return { lines: folded.lines ?? 0, newline: Boolean(folded.newline), load: () => this.foldedText.load(seq) };
  }

  /** A cell of ``author`` ("user" or "assistant"), its event's ``seq``; ``via`` says who ran a
   * user's cell when the page did not (an MCP client), ``editedFrom`` the seq of the cell it is
   * an edited copy of. The model's cells start folded to a one-line summary, the user's open:
   * the model's code is there to check, not to read through. */
  addCell(code, author, { seq = null, via = "", editedFrom = null, replay = null, number = null } = {}) {
    this.stopStreaming();
    const section = el("section", { class: "cell", testid: "code-cell" });
    if (seq != null) section.id = `cell-${seq}`;
    if (Number.isInteger(number)) section.dataset.cell = number; // the model cites it as [[cell N]]
    section.dataset.author = author;
    section.dataset.state = "running";
    const lines = code.split("\n").length;
    const sql = sqlCellOf(code); // a SQL cell (%%sql): named and coloured so
    const language = sql ? "sql" : "python";
    const codeBox = el("code", { class: `hljs language-${language}`, text: code });
    let coloured = false;
    const highlight = () => {
      if (coloured) return;
      codeBox.replaceChildren(highlighted(code, language));
      coloured = true;
    };
    if (author !== "assistant") highlight(); // a folded cell's code is coloured when first shown
    const toggle = el("button", { class: "cell-toggle", testid: "cell-toggle", attrs: { type: "button" } });
    const fold = (collapsed) => {
      section.classList.toggle("collapsed", collapsed);
      toggle.textContent = collapsed ? "Show code" : "Hide code";
      toggle.setAttribute("aria-expanded", String(!collapsed));
    };
    toggle.addEventListener("click", () => {
      fold(!section.classList.contains("collapsed"));
      highlight();
    });
    fold(author === "assistant");
    const output = el("div", { class: "cell-output", testid: "cell-output" });
    const header = el(
      "header",
      { class: "cell-header" },
      el("span", { class: "cell-language", testid: "cell-language", text: sql ? sqlCellLabel(sql) : "Python" }),
      el("span", {
        class: "cell-author",
        testid: "cell-author",
        text: author === "user" ? via || "your cell" : "run by the assistant",
      }),
      ...(replay ? [replayMark(replay)] : []),
      ...(Number.isInteger(number) ? [cellNumber(number)] : []),
      el("span", { class: "cell-summary", testid: "cell-summary", text: summary(code) }),
      el("span", { class: "cell-lines", text: `${lines} line${lines === 1 ? "" : "s"}` }),
      el("span", { class: "cell-state" }),
      copyButton(() => outputText(output), "Copy output", "copy-output"),
      toggle,
    );
    if (editedFrom != null) {
      const link = el("a", { class: "cell-edited", testid: "cell-edited", text: "edited from this cell" });
      link.href = `#cell-${editedFrom}`;
      header.insertBefore(link, header.querySelector(".cell-summary"));
    }
    if (this.onEdit && seq != null) {
      const edit = el("button", { class: "cell-action", testid: "cell-edit", text: "Edit", attrs: { type: "button" } });
      edit.addEventListener("click", () => this.onEdit(code, seq));
      header.insertBefore(edit, toggle);
    }
    if (this.onParameters && seq != null && looksLikeParameters(code)) header.insertBefore(this.parametersToggle(code), toggle);
    const source = el(
      "pre",
      { class: "cell-code", testid: "cell-code" },
      codeBox,
      copyButton(() => code, "Copy", "copy-code"),
    );
    section.append(header, source, output);
    if (author === "assistant") foldTallOutput(output);
    this.decorate(section, seq);
    this.add(section);
    this.running = section;
    return section;
  }

  /** The toggle that marks a cell of assignments as the analysis's parameters cell (papermill's
   * "parameters" tag); the server checks the cell and says why when it cannot be one. */
  parametersToggle(code) {
    const mark = el("button", {
      class: "cell-action cell-parameters",
      testid: "cell-parameters",
      text: "Parameters",
      attrs: { type: "button", title: "The analysis's parameters: a run sets its values right after this cell" },
    });
    mark.dataset.code = code;
    mark.setAttribute("aria-pressed", String(code === this.parametersCode));
    mark.addEventListener("click", () => this.onParameters(code === this.parametersCode ? "" : code));
    return mark;
  }

  /** Which cell is the parameters cell now (its code, or null): its toggle pressed, the others not. */
  showParametersCell(code) {
    this.parametersCode = code;
    for (const mark of this.page.querySelectorAll(".cell-parameters")) {
      mark.setAttribute("aria-pressed", String(mark.dataset.code === code));
    }
  }

  /** The output area for an event: its model cell, the user's cell, or a stray block of its own. */
  outputFor(payload) {
    const cell = payload.tool_call_id ? this.cells.get(payload.tool_call_id) : this.ownCell;
    if (cell) return cell.querySelector(".cell-output");
    const last = this.root.lastElementChild;
    if (last?.matches(".cell-output.stray")) return last;
    const stray = el("div", { class: "cell-output stray", testid: "cell-output" });
    this.add(stray);
    return stray;
  }

  error(payload, seq) {
    if ("traceback" in payload || "name" in payload) {
      const cell = payload.tool_call_id ? this.cells.get(payload.tool_call_id) : this.ownCell;
      if (cell) cell.dataset.state = "error";
      const node = renderCellError(payload);
      this.outputFor(payload).append(node);
      this.outputs.set(seq, node);
    } else {
      this.add(renderProblem(payload.message ?? "Something went wrong."));
    }
  }

  /** Streamed text, drawn at most once a frame: a log read back at once (a reload) draws only
   * the finished message, never the pieces it arrived in. */
  streamAssistant(text) {
    if (!this.streaming) {
      const box = el("div", { class: "message assistant streaming", testid: "assistant-message" });
      this.add(box);
      this.streaming = { box, text: "", drawing: false };
    }
    const streaming = this.streaming;
    streaming.text += text;
    if (streaming.drawing) return;
    streaming.drawing = true;
    requestAnimationFrame(() => drawStreamed(streaming));
  }

  /** The complete message replaces the one streamed so far, with a button copying its markdown;
   * its figures linked to the outputs holding them, or marked when none does (``citations``). */
  finishAssistant(text, citations, seq = null) {
    const box = this.streaming?.box ?? el("div", { class: "message assistant", testid: "assistant-message" });
    if (!this.streaming) this.add(box);
    box.classList.remove("streaming");
    if (this.streaming) this.streaming.drawing = false; // the whole message replaces any pending draw
    const lookups = {
      locate: (seq) => this.outputs.get(seq) ?? null,
      cell: (number) => this.page.querySelector(`.cell[data-cell="${Number(number)}"]`),
    };
    const answer = traceFigures(markdown(text), citations, lookups);
    box.replaceChildren(answer, copyButton(() => withoutMarkers(text), "Copy answer", "copy-answer"));
    const counted = this.countFigures(citations);
    if (counted) box.append(counted);
    this.decorate(box, seq);
    this.streaming = null;
  }

  /** The turn's "12 figures, 11 traced" line, under its latest answer: the figures of all its
   * answers (a turn may answer before its cells and after them). */
  countFigures(citations) {
    if (!Array.isArray(citations) || !citations.length) return null;
    const same = this.figureTally && this.turn != null && this.figureTally.turn === this.turn;
    const tally = same ? this.figureTally : { turn: this.turn, all: [], line: null };
    tally.all = [...tally.all, ...citations];
    tally.line?.remove();
    tally.line = figuresLine(tally.all);
    this.figureTally = tally;
    return tally.line;
  }

  notice(text, type, before = null) {
    const box = el("div", { class: "notice", testid: "notice", text });
    box.dataset.type = type;
    if (this.turn != null) box.dataset.turn = this.turn;
    if (before) before.before(box);
    else this.add(box);
  }

  /** An upload described; a second time for the same file, after the owner's corrections. */
  fileAdded(payload, seq) {
    this.foresee({ type: "file_added", seq, payload });
    const again = payload.id != null && this.described.get(payload.id) < seq;
    const name = payload.path ?? payload.name;
    const rest = payload.read_error ? `, which could not be read: ${payload.read_error}` : shape(payload);
    this.fileNote("file-added", again ? "Read again" : "Uploaded", name, rest);
  }

  /** "Uploaded data/a.csv (3 rows × 2 columns)": grouped with the file notes just before it. */
  fileNote(testid, verb, name, rest) {
    const note = el("div", { class: "notice file-note", testid, text: `${verb} ${name}${rest}` });
    Object.assign(note.dataset, { verb, name });
    if (this.turn != null) note.dataset.turn = this.turn;
    addFileNote(this.root, note, (node) => this.add(node));
  }

  /** A quiet line while the turn waits for uploads still being put in the sandbox. */
  filesWaiting(turn, { files = [] }) {
    const names = files.map((file) => file.name ?? file.path).filter(Boolean);
    if (this.waiting) this.waiting.box.hidden = true;
    const box = el("div", {
      class: "notice files-waiting",
      testid: "files-waiting",
      text: `Reading ${names.join(", ") || "the uploads"}…`,
      attrs: { role: "status" },
    });
    box.dataset.type = "files_waiting";
    this.add(box);
    this.waiting = { turn, box };
  }

  /** The small print under a turn that called the model: its tokens and their cost. */
  usage(spent) {
    if (!spent?.calls) return;
    this.add(el("p", { class: "turn-usage", testid: "turn-usage", text: turnUsageText(spent) }));
  }

  settle() {
    if (this.running?.dataset.state === "running") this.running.dataset.state = "done";
    this.running = null;
  }

  /** The streamed message ends where it is (a cell follows, the turn ended): drawn whole now. */
  stopStreaming() {
    if (!this.streaming) return;
    drawStreamed(this.streaming);
    this.streaming.box.classList.remove("streaming");
    this.streaming = null;
  }

  endTurn() {
    this.stopStreaming();
    this.ownCell = null;
    this.cells.clear();
  }
}

/** An answer asked again, ``nodes``: folded behind one line before them that shows them again,
 * dimmed. ``add(node)`` folds one more into it (a fork's copy arrives one event at a time). */
function foldAway(nodes) {
  const toggle = el("button", {
    class: "link",
    testid: "superseded-toggle",
    text: "Show",
    attrs: { type: "button", "aria-expanded": "false" },
  });
  const bar = el(
    "div",
    { class: "superseded-bar", testid: "superseded" },
    "An earlier answer to this question, regenerated below. ",
    toggle,
  );
  const fold = (node) => {
    node.classList.add("superseded");
    node.classList.toggle("shown", bar.classList.contains("open"));
  };
  toggle.addEventListener("click", () => {
    const open = bar.classList.toggle("open");
    for (const node of nodes) node.classList.toggle("shown", open);
    toggle.textContent = open ? "Hide" : "Show";
    toggle.setAttribute("aria-expanded", String(open));
  });
  nodes.forEach(fold);
  nodes[0].before(bar);
  return {
    add(node) {
      nodes.push(node);
      fold(node);
    },
  };
}

/** What a turn is, from its first event. */
function kindOf(type, payload) {
  if (type === "user_message") return "chat";
  if (type === "notice" && payload.code === "restarting") return "restart";
  if (type === "turn_started") return payload.kind ?? null;
  return "cell";
}

/** A streamed message's text drawn, if a draw is pending. */
function drawStreamed(streaming) {
  if (!streaming.drawing) return;
  streaming.drawing = false;
  streaming.box.replaceChildren(markdown(withoutMarkers(streaming.text)));
}

/** A folded cell's one line: its first line of code that is not blank or a comment. */
function summary(code) {
  const line = (code.split("\n").find((text) => text.trim() && !text.trim().startsWith("#")) ?? "").trim();
  return line.length > 90 ? `${line.slice(0, 89)}…` : line;
}

function markdown(text) {
  return el("div", { class: "markdown" }, markdownFragment(text));
}

/** " (3 rows × 2 columns)"; a workbook or a zip names its tables: " (2 sheets: a, b)". */
function shape({ rows, columns, tables = [], format }) {
  if (tables?.length > 1) {
    const what = format === "excel" ? "sheets" : "tables";
    const names = tables.map((table) => table.sheet ?? String(table.path ?? "").replace(/^data\//, ""));
    return ` (${tables.length} ${what}: ${names.join(", ")})`;
  }
  const text = tableShape(rows, columns);
  return text ? ` (${text})` : "";
}

/** "run over MCP by Claude Desktop": a request an MCP client made with the owner's token. */
function viaMcp(payload, verb) {
  return `${verb} over MCP by ${payload.client || "an MCP client"}`;
}

/** "cell 3": the model's cell's number in the session, by which its answers cite it. */
function cellNumber(number) {
  return el("span", { class: "cell-number", testid: "cell-number", text: `cell ${number}` });
}

/** A replayed cell's mark: which of the replay's cells it is (Restart and run all, Run again). */
function replayMark({ index, of }) {
  return el("span", { class: "cell-replay", testid: "cell-replay", text: `replay ${index} of ${of}` });
}

/** Whether a cell's every line assigns something (or is blank, or a comment): a hint for the
 * Parameters toggle only; the server decides what a parameters cell is. */
function looksLikeParameters(code) {
  const lines = code.split("\n").filter((line) => line.trim() && !line.trim().startsWith("#"));
  return lines.length > 0 && lines.every((line) => /^[A-Za-z_]\w*\s*(:[^=]+)?=[^=]/.test(line));
}
