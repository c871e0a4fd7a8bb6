// The code cell's editor: CodeMirror 6 with Python's highlighting and indentation, Tab to indent
// (Esc then Tab leaves it, as CodeMirror has it), brackets matched and closed, Shift+Enter or
// Ctrl/Cmd+Enter to run. The composer keeps its textarea for when this cannot be loaded.
import { loadCodeMirror } from "./vendor.js";

export class CodeEditor {
  /** A new editor, once CodeMirror is loaded (rejects when it cannot be): ``onRun()`` when the
   * user asks to run the cell, ``placeholder`` shown while it is empty. */
  static async create({ onRun, placeholder }) {
    return new CodeEditor(await loadCodeMirror(), { onRun, placeholder });
  }

  constructor(cm, { onRun, placeholder }) {
    const run = () => {
      onRun();
      return true;
    };
    this.view = new cm.EditorView({
      state: cm.EditorState.create({
        extensions: [
          cm.Prec.highest(cm.keymap.of([{ key: "Shift-Enter", run }, { key: "Mod-Enter", run }])),
          cm.history(),
          cm.drawSelection(),
          cm.highlightSpecialChars(),
          cm.indentOnInput(),
          cm.bracketMatching(),
          cm.closeBrackets(),
          cm.syntaxHighlighting(cm.defaultHighlightStyle, { fallback: true }),
          cm.keymap.of([...cm.closeBracketsKeymap, ...cm.defaultKeymap, ...cm.historyKeymap, cm.indentWithTab]),
          cm.python(),
          cm.indentUnit.of("    "), // PEP 8's four spaces (CodeMirror's own unit is two)
          cm.placeholder(placeholder),
          cm.EditorView.lineWrapping,
          cm.EditorView.contentAttributes.of({ "aria-label": "Python code", spellcheck: "false" }),
          cm.EditorView.editorAttributes.of({ class: "code-editor" }),
        ],
      }),
    });
    // In a box of its own: CodeMirror's element is display: flex !important, which hidden cannot undo.
    this.element = document.createElement("div");
    this.element.append(this.view.dom);
    this.input = this.view.contentDOM; // what is focused and typed into
  }

  get value() {
    return this.view.state.doc.toString();
  }

  set value(text) {
    const { doc } = this.view.state;
    this.view.dispatch({ changes: { from: 0, to: doc.length, insert: text }, selection: { anchor: text.length } });
  }

  focus() {
    this.view.focus();
  }
}
