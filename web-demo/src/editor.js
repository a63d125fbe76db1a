// The code editor: CodeMirror 6 with JavaScript highlighting, plus one marked line (the line of
// the user's code that made a failing call) that the page sets and any edit clears, and
// Ctrl/Cmd+Enter to run (trace).
import { EditorView, basicSetup } from 'codemirror';
import { javascript } from '@codemirror/lang-javascript';
import { Prec, StateEffect, StateField } from '@codemirror/state';
import { Decoration, keymap } from '@codemirror/view';

const markLine = StateEffect.define();   // value: a 1-based line number, or null to clear
const errorMark = Decoration.line({ class: 'cm-error-line' });

const markedLine = StateField.define({
  create: () => Decoration.none,
  update(marks, tr) {
    for (const e of tr.effects) {
      if (e.is(markLine)) {
        return e.value === null ? Decoration.none
          : Decoration.set([errorMark.range(tr.state.doc.line(e.value).from)]);
      }
    }
    return tr.docChanged ? Decoration.none : marks;
  },
  provide: (f) => EditorView.decorations.from(f),
});

export class CodeEditor {
  /** host: the element the editor fills; onChange(text) runs after every edit, onRun on Ctrl/Cmd+Enter. */
  constructor(host, onChange, onRun) {
    this.view = new EditorView({
      parent: host,
      extensions: [
        basicSetup,
        javascript(),
        EditorView.lineWrapping,
        markedLine,
        Prec.highest(keymap.of([{ key: 'Mod-Enter', run: () => { onRun(); return true; } }])),
        EditorView.updateListener.of((u) => { if (u.docChanged) onChange(this.text); }),
      ],
    });
  }

  get text() {
    return this.view.state.doc.toString();
  }

  set text(code) {
    this.view.dispatch({ changes: { from: 0, to: this.view.state.doc.length, insert: code } });
  }

  /**
   * Marks a line (1-based; out of range is clamped). Unless the person is typing in the editor
   * (it has focus: the error came from the check of a pause in the typing), it also scrolls the
   * place into view and puts the focused cursor there, ready for the fix; moving the cursor under
   * someone's fingers would send their next keys to the wrong place.
   */
  markError(line, column = 1) {
    const doc = this.view.state.doc;
    const l = doc.line(Math.min(Math.max(1, line), doc.lines));
    if (this.view.hasFocus) {
      this.view.dispatch({ effects: markLine.of(l.number) });
      return;
    }
    const pos = Math.min(l.from + Math.max(0, column - 1), l.to);
    this.view.dispatch({
      effects: [markLine.of(l.number), EditorView.scrollIntoView(pos, { y: 'center' })],
      selection: { anchor: pos },
    });
    this.view.focus();
  }

  clearError() {
    this.view.dispatch({ effects: markLine.of(null) });
  }
}
