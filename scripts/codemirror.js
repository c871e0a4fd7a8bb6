// The parts of CodeMirror 6 the code cell's editor uses (static/app/code_editor.js), bundled by
// scripts/vendor-js with esbuild into one ES module, static/vendor/codemirror.js: CodeMirror ships
// as many small packages that import each other by bare name, which a browser cannot resolve.
export { closeBrackets, closeBracketsKeymap } from "@codemirror/autocomplete";
export { defaultKeymap, history, historyKeymap, indentWithTab } from "@codemirror/commands";
export { python } from "@codemirror/lang-python";
export {
  bracketMatching,
  defaultHighlightStyle,
  indentOnInput,
  indentUnit,
  syntaxHighlighting,
} from "@codemirror/language";
export { EditorState, Prec } from "@codemirror/state";
export { drawSelection, EditorView, highlightSpecialChars, keymap, placeholder } from "@codemirror/view";
