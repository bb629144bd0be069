/**
 * The query box as a CodeMirror 6 editor: highlighting of the query language, completion
 * of field names and values, and ↑ in the empty box offering the queries searched last.
 * Loaded on demand (QueryBox imports it dynamically), so none of CodeMirror is in the
 * initial bundle.
 */
import {
  acceptCompletion,
  autocompletion,
  type Completion,
  type CompletionContext,
  type CompletionResult,
  completionStatus,
  insertCompletionText,
  startCompletion,
} from '@codemirror/autocomplete';
import { HighlightStyle, StreamLanguage, syntaxHighlighting } from '@codemirror/language';
import { EditorState, Prec, StateEffect, StateField } from '@codemirror/state';
import {
  Decoration,
  type DecorationSet,
  EditorView,
  keymap,
  placeholder,
  WidgetType,
} from '@codemirror/view';
import { tags as t } from '@lezer/highlight';
import type { FieldInfo } from './FieldList';
import {
  completionSpot,
  PIPE_FUNCTIONS,
  PIPE_NAMES,
  quoteValue,
  readToken,
  startState,
  type TokenState,
} from './query';

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
  /** The queries searched last, newest first: ↑ in the empty box lists them. */
  history?: () => readonly string[];
}

export interface QueryEditor {
  view: EditorView;
  setValue(value: string): void;
  /**
   * Marks where a syntax error is (null: nowhere) and puts the cursor there; the box is
   * then `aria-invalid`, described by the element `describedBy` names. Editing unmarks it.
   */
  markError(at: number | null, describedBy?: string): void;
  focus(): void;
  destroy(): void;
}

const FIELD_CHARS = /^[\p{L}\p{N}_.@-]*$/u;

/** A syntax error's place at the end of the query: a marker after the last character. */
class ErrorAtEnd extends WidgetType {
  override eq() {
    return true;
  }
  toDOM() {
    const span = document.createElement('span');
    span.className = 'cm-query-error-end';
    span.setAttribute('aria-hidden', 'true');
    return span;
  }
}

interface ErrorMark {
  at: number | null;
  describedBy: string | undefined;
  deco: DecorationSet;
}

const setError = StateEffect.define<{ at: number | null; describedBy: string | undefined }>();

const noError: ErrorMark = { at: null, describedBy: undefined, deco: Decoration.none };

/** The marked syntax error: set by markError, gone with the next edit. */
const errorField = StateField.define<ErrorMark>({
  create: () => noError,
  update(value, tr) {
    for (const e of tr.effects) {
      if (!e.is(setError)) continue;
      const { at, describedBy } = e.value;
      const doc = tr.state.doc;
      if (at === null || at > doc.length) return noError;
      if (at === doc.length)
        return {
          at,
          describedBy,
          deco: Decoration.set([Decoration.widget({ widget: new ErrorAtEnd(), side: 1 }).range(at)]),
        };
      // One character (two code units outside the BMP).
      const width = (doc.sliceString(at, at + 2).codePointAt(0) ?? 0) > 0xffff ? 2 : 1;
      return {
        at,
        describedBy,
        deco: Decoration.set([Decoration.mark({ class: 'cm-query-error' }).range(at, at + width)]),
      };
    }
    return tr.docChanged ? noError : value;
  },
  provide: (f) => EditorView.decorations.from(f, (v) => v.deco),
});

/** The queries searched last as a completion list, in their order (newest first). */
function historyResult(list: readonly string[], length: number): CompletionResult {
  return {
    from: 0,
    to: length,
    options: list.map((q, i) => ({
      label: q,
      type: 'history',
      // The list's heading, hidden from assistive technology: a listbox holds options only.
      section: { name: 'Recent queries', header: historyHeader },
      boost: -i,
    })),
    filter: false,
  };
}

function historyHeader(): HTMLElement {
  const el = document.createElement('completion-section');
  el.textContent = 'Recent queries';
  el.setAttribute('aria-hidden', 'true');
  return el;
}

function completions(fields: () => Promise<FieldInfo[]>, historyAsked: () => readonly string[] | null) {
  return async (ctx: CompletionContext): Promise<CompletionResult | null> => {
    const history = historyAsked();
    if (history) return historyResult(history, ctx.state.doc.length);
    const text = ctx.state.doc.toString();
    const spot = completionSpot(text, ctx.pos);
    if (!spot) return null;
    if (spot.kind === 'pipe')
      return {
        from: spot.from,
        options: PIPE_NAMES.map((name) => ({ label: name, type: 'keyword', apply: `${name} ` })),
        validFor: FIELD_CHARS,
      };
    // Only when asked, or once something is typed.
    if (!ctx.explicit && spot.prefix === '' && spot.kind === 'field') return null;
    let list: FieldInfo[];
    try {
      list = await fields();
    } catch {
      return null;
    }
    if (ctx.aborted) return null;
    if (spot.kind === 'pipe-word') {
      if (!ctx.explicit && spot.prefix === '') return null;
      const options: Completion[] = [
        ...PIPE_FUNCTIONS.map((fn) => ({ label: `${fn}()`, type: 'function', apply: `${fn}(`, boost: 1 })),
        ...list.map((f) => ({ label: f.name, type: 'property', detail: f.type })),
      ];
      return { from: spot.from, options, validFor: FIELD_CHARS };
    }
    if (spot.kind === 'field') {
      const options: Completion[] = list.map((f) => ({
        label: f.name,
        // `name:`, then its values are offered.
        apply: (view, _completion, from, to) => {
          view.dispatch(insertCompletionText(view.state, `${f.name}:`, from, to));
          if (f.top.length > 0) setTimeout(() => startCompletion(view));
        },
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
  /** ↑ asked for the history: the next completion lists it (once). */
  let historyWanted = false;
  const historyAsked = () => {
    const wanted = historyWanted;
    historyWanted = false;
    return wanted ? (opts.history?.() ?? []) : null;
  };
  const showHistory = (view: EditorView) => {
    if (view.state.doc.length > 0 || completionStatus(view.state) !== null) return false;
    if ((opts.history?.() ?? []).length === 0) return false;
    historyWanted = true;
    startCompletion(view);
    return true;
  };
  const submit = (view: EditorView) => {
    // An open list took Enter first (its keymap is the higher); it ignores keys for a moment
    // after opening, and then Enter does nothing rather than break the line.
    if (completionStatus(view.state) === 'active') return true;
    opts.onSubmit(view.state.doc.toString());
    return true;
  };
  const state = EditorState.create({
    doc: opts.value,
    extensions: [
      queryLanguage,
      syntaxHighlighting(highlight),
      placeholder(opts.placeholder),
      autocompletion({
        override: [completions(opts.fields, historyAsked)],
        icons: false,
        activateOnTyping: true,
      }),
      // Tab takes a completion too (else it moves the focus on, as in any form).
      Prec.high(
        keymap.of([
          { key: 'Enter', run: submit },
          { key: 'Tab', run: acceptCompletion },
          { key: 'ArrowUp', run: showHistory },
        ]),
      ),
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
      errorField,
      EditorView.contentAttributes.of((view) => {
        const mark = view.state.field(errorField);
        if (mark.at === null) return null;
        const attrs: Record<string, string> = { 'aria-invalid': 'true' };
        if (mark.describedBy) attrs['aria-describedby'] = mark.describedBy;
        return attrs;
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
    markError(at, describedBy) {
      const current = view.state.field(errorField);
      if (current.at === at && current.describedBy === describedBy) return;
      const inside = at !== null && at <= view.state.doc.length;
      view.dispatch({
        effects: setError.of({ at, describedBy }),
        // The cursor to the error, without taking the focus.
        ...(inside ? { selection: { anchor: at } } : {}),
      });
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
