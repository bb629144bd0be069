/**
 * The query box as a CodeMirror 6 editor: highlighting of the query language and
 * completion of field names and values. Loaded on demand (QueryBox imports it
 * dynamically), so none of CodeMirror is in the initial bundle.
 */
import {
  autocompletion,
  type Completion,
  type CompletionContext,
  type CompletionResult,
  completionStatus,
} from '@codemirror/autocomplete';
import { HighlightStyle, StreamLanguage, syntaxHighlighting } from '@codemirror/language';
import { EditorState, Prec } from '@codemirror/state';
import { EditorView, keymap, placeholder } from '@codemirror/view';
import { tags as t } from '@lezer/highlight';
import type { FieldInfo } from './FieldList';
import { completionSpot, quoteValue, readToken, startState, type TokenState } from './query';

const queryLanguage = StreamLanguage.define<TokenState>({
  name: 'logscope-query',
  startState,
  copyState: (s) => ({ ...s }),
  token(stream, state) {
    if (!state.open && stream.eatSpace()) return null;
    const { end, type } = readToken(stream.string, stream.pos, state);
    stream.pos = Math.max(end, stream.pos + 1);
    return type;
  },
});

// Colours from the stylesheet's variables, so both themes hold their contrast.
const highlight = HighlightStyle.define([
  { tag: t.propertyName, color: 'var(--hl-field)', fontWeight: '600' },
  { tag: t.string, color: 'var(--hl-string)' },
  { tag: t.keyword, color: 'var(--hl-keyword)', fontWeight: '600' },
  { tag: t.operator, color: 'var(--hl-keyword)', fontWeight: '600' },
  { tag: t.regexp, color: 'var(--hl-regexp)' },
  { tag: t.number, color: 'var(--hl-number)' },
  { tag: t.atom, color: 'var(--hl-number)' },
  { tag: [t.paren, t.squareBracket, t.punctuation], color: 'var(--muted)' },
]);

export interface QueryEditorOptions {
  value: string;
  placeholder: string;
  onChange: (value: string) => void;
  onSubmit: (value: string) => void;
  /** The fields to complete (names and top values). */
  fields: () => Promise<FieldInfo[]>;
}

export interface QueryEditor {
  view: EditorView;
  setValue(value: string): void;
  focus(): void;
  destroy(): void;
}

const FIELD_CHARS = /^[\p{L}\p{N}_.@-]*$/u;

function completions(fields: () => Promise<FieldInfo[]>) {
  return async (ctx: CompletionContext): Promise<CompletionResult | null> => {
    const text = ctx.state.doc.toString();
    const spot = completionSpot(text, ctx.pos);
    if (!spot) return null;
    // Only when asked, or once something is typed.
    if (!ctx.explicit && spot.prefix === '' && spot.kind === 'field') return null;
    let list: FieldInfo[];
    try {
      list = await fields();
    } catch {
      return null;
    }
    if (ctx.aborted) return null;
    if (spot.kind === 'field') {
      const options: Completion[] = list.map((f) => ({
        label: f.name,
        apply: `${f.name}:`,
        type: 'property',
        detail: f.type,
      }));
      return { from: spot.from, options, validFor: FIELD_CHARS };
    }
    const field = list.find((f) => f.name === spot.field);
    if (!field || field.top.length === 0) return null;
    const options: Completion[] = field.top.map((v, i) => {
      const raw = typeof v.value === 'string' ? v.value : JSON.stringify(v.value);
      const numeric = field.type === 'number' && /^-?\d+(\.\d+)?$/.test(raw);
      return {
        label: numeric ? raw : quoteValue(raw),
        type: 'text',
        detail: `${v.count}`,
        boost: -i,
      };
    });
    return { from: spot.from, options };
  };
}

/** Builds the editor in `parent`: one line, Enter searches, Tab or Enter takes a completion. */
export function createQueryEditor(parent: HTMLElement, opts: QueryEditorOptions): QueryEditor {
  let applying = false;
  const submit = (view: EditorView) => {
    if (completionStatus(view.state) === 'active') return false;
    opts.onSubmit(view.state.doc.toString());
    return true;
  };
  const state = EditorState.create({
    doc: opts.value,
    extensions: [
      queryLanguage,
      syntaxHighlighting(highlight),
      placeholder(opts.placeholder),
      autocompletion({ override: [completions(opts.fields)], icons: false, activateOnTyping: true }),
      Prec.high(keymap.of([{ key: 'Enter', run: submit }])),
      // One line: line breaks typed or pasted become spaces.
      EditorState.transactionFilter.of((tr) => {
        if (!tr.docChanged || tr.newDoc.lines === 1) return tr;
        const flat = tr.newDoc.toString().replace(/\r?\n/g, ' ');
        return [tr, { changes: { from: 0, to: tr.newDoc.length, insert: flat }, sequential: true }];
      }),
      EditorView.contentAttributes.of({
        'aria-label': 'Query',
        'aria-multiline': 'false',
        'aria-keyshortcuts': '/',
        autocapitalize: 'none',
        autocorrect: 'off',
        spellcheck: 'false',
      }),
      EditorView.updateListener.of((u) => {
        if (u.docChanged && !applying) opts.onChange(u.state.doc.toString());
      }),
      EditorView.theme({
        '&': { flex: '1', minWidth: '0' },
        '.cm-scroller': { overflow: 'hidden', fontFamily: 'var(--mono)', lineHeight: '1.45' },
        '.cm-content': { padding: '0' },
        '.cm-line': { padding: '0' },
      }),
    ],
  });
  const view = new EditorView({ state, parent });
  return {
    view,
    setValue(value) {
      if (value === view.state.doc.toString()) return;
      applying = true;
      try {
        view.dispatch({
          changes: { from: 0, to: view.state.doc.length, insert: value },
          selection: { anchor: value.length },
        });
      } finally {
        applying = false;
      }
    },
    focus() {
      view.focus();
      view.dispatch({ selection: { anchor: view.state.doc.length } });
    },
    destroy() {
      view.destroy();
    },
  };
}
