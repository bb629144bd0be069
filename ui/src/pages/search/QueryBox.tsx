import {
  type FocusEvent,
  type KeyboardEvent,
  type Ref,
  useEffect,
  useId,
  useImperativeHandle,
  useRef,
  useState,
} from 'react';
import type { FieldInfo } from './FieldList';
import type { QueryEditor } from './QueryEditor';
import { HistoryPopover, SyntaxPopover } from './QueryHelp';
import { queryHistory } from './query-history';

export interface QueryBoxHandle {
  focus(): void;
}

const PLACEHOLDER = 'e.g. error AND host:web-1';

/**
 * Whether the CodeMirror editor (highlighting, completion; loaded on demand) replaces the
 * plain input once it has loaded: yes unless `localStorage['logscope.queryEditor']` is
 * `plain`.
 */
export const codeMirrorWanted = () => {
  try {
    // The editor unless someone asked for the plain box (`logscope.queryEditor` = `plain`).
    return window.localStorage.getItem('logscope.queryEditor') !== 'plain';
  } catch {
    return true;
  }
};

/**
 * The query box, named "Query". A plain input first; with the editor wanted, CodeMirror
 * (highlighting, completion of fields and values) is imported on demand and takes its
 * place once loaded, keeping the name, `/` and Enter. Enter submits. `errorAt` is where a
 * syntax error in `value` is: the box is then `aria-invalid` (described by the element
 * `errorId` names), the cursor goes there, and the editor marks the character. Beside it,
 * "Query history" (the queries searched last; ↑ in the empty box offers them too) and
 * "Query syntax" (a reference with examples): what is chosen there goes into the box.
 */
export function QueryBox(props: {
  ref?: Ref<QueryBoxHandle>;
  value: string;
  onChange: (value: string) => void;
  onSubmit: (value: string) => void;
  fields: () => Promise<FieldInfo[]>;
  errorAt?: number | null;
  errorId?: string | undefined;
}) {
  const inputRef = useRef<HTMLInputElement>(null);
  const hostRef = useRef<HTMLDivElement>(null);
  const editorRef = useRef<QueryEditor | null>(null);
  const [editorReady, setEditorReady] = useState(false);
  const wrapRef = useRef<HTMLDivElement>(null);
  const [popover, setPopover] = useState<'history' | 'syntax' | null>(null);
  const historyButton = useRef<HTMLButtonElement>(null);
  const syntaxButton = useRef<HTMLButtonElement>(null);
  const popoverId = useId();
  // The editor calls the latest props.
  const latest = useRef(props);
  latest.current = props;

  useEffect(() => {
    if (!codeMirrorWanted()) return;
    let cancelled = false;
    import('./QueryEditor')
      .then(({ createQueryEditor }) => {
        const host = hostRef.current;
        if (cancelled || !host) return;
        const hadFocus = document.activeElement === inputRef.current;
        const editor = createQueryEditor(host, {
          value: latest.current.value,
          placeholder: PLACEHOLDER,
          onChange: (v) => latest.current.onChange(v),
          onSubmit: (v) => latest.current.onSubmit(v),
          fields: () => latest.current.fields(),
          history: queryHistory,
        });
        editorRef.current = editor;
        editor.markError(latest.current.errorAt ?? null, latest.current.errorId);
        setEditorReady(true);
        if (hadFocus) editor.focus();
      })
      .catch(() => {
        // The plain input stays.
      });
    return () => {
      cancelled = true;
      editorRef.current?.destroy();
      editorRef.current = null;
      setEditorReady(false);
    };
  }, []);

  // Changes from outside (a filter from the field list) reach the editor.
  useEffect(() => {
    editorRef.current?.setValue(props.value);
  }, [props.value]);

  // A new error is marked (after the value it is about, above); an edit unmarks it.
  const errorAt = props.errorAt ?? null;
  useEffect(() => {
    const editor = editorRef.current;
    if (editor) return editor.markError(errorAt, props.errorId);
    // The plain input: the cursor to the error (without taking the focus).
    const input = inputRef.current;
    if (input && errorAt !== null && errorAt <= input.value.length) input.setSelectionRange(errorAt, errorAt);
  }, [errorAt, props.errorId]);

  const focusBox = () => {
    const editor = editorRef.current;
    if (editor) return editor.focus();
    const input = inputRef.current;
    if (!input) return;
    input.focus();
    input.setSelectionRange(input.value.length, input.value.length);
  };
  useImperativeHandle(props.ref, () => ({ focus: focusBox }));

  // A click outside the box and its popover closes the popover.
  useEffect(() => {
    if (!popover) return;
    const onDown = (e: PointerEvent) => {
      if (!wrapRef.current?.contains(e.target as Node)) setPopover(null);
    };
    document.addEventListener('pointerdown', onDown);
    return () => document.removeEventListener('pointerdown', onDown);
  }, [popover]);

  const toggle = (which: 'history' | 'syntax') => setPopover((p) => (p === which ? null : which));
  /** A query chosen in a popover: into the box, the focus there (Enter searches it). */
  const pick = (query: string) => {
    setPopover(null);
    props.onChange(query);
    // The editor takes the value and the focus at once, before the popover goes (a key
    // pressed right after the pick reaches the box); the plain input shows the new value
    // once the page has rendered it.
    if (editorRef.current) {
      editorRef.current.setValue(query);
      focusBox();
    } else setTimeout(focusBox);
  };
  const onKeyDown = (e: KeyboardEvent) => {
    if (e.key !== 'Escape' || !popover) return;
    e.preventDefault();
    e.stopPropagation();
    (popover === 'history' ? historyButton : syntaxButton).current?.focus();
    setPopover(null);
  };
  // The focus moving on past the box and its popover (Tab) closes the popover.
  const onBlur = (e: FocusEvent) => {
    const next = e.relatedTarget;
    if (popover && next instanceof Node && !wrapRef.current?.contains(next)) setPopover(null);
  };

  return (
    // biome-ignore lint/a11y/noStaticElementInteractions: Escape or the focus leaving, anywhere in the box and its popovers, closes a popover.
    <div className="query-box" ref={wrapRef} onKeyDown={onKeyDown} onBlur={onBlur}>
      {!editorReady && (
        <>
          <label htmlFor="query" className="visually-hidden">
            Query
          </label>
          <input
            id="query"
            ref={inputRef}
            type="text"
            className="query-input"
            value={props.value}
            onChange={(e) => props.onChange(e.target.value)}
            onKeyDown={(e) => {
              // ↑ in the empty box: the queries searched last.
              if (e.key !== 'ArrowUp' || props.value !== '' || queryHistory().length === 0) return;
              e.preventDefault();
              setPopover('history');
            }}
            placeholder={PLACEHOLDER}
            aria-keyshortcuts="/"
            aria-invalid={errorAt !== null ? true : undefined}
            aria-describedby={errorAt !== null ? props.errorId : undefined}
            autoComplete="off"
            autoCapitalize="none"
            spellCheck={false}
          />
        </>
      )}
      <div ref={hostRef} className="query-input query-editor" hidden={!editorReady} />
      <button
        ref={historyButton}
        type="button"
        className="secondary query-tool"
        title="Recent queries (↑ in the empty box)"
        aria-haspopup="dialog"
        aria-expanded={popover === 'history'}
        aria-controls={popover === 'history' ? popoverId : undefined}
        onClick={() => toggle('history')}
      >
        <svg aria-hidden="true" viewBox="0 0 16 16" width="16" height="16">
          <path
            d="M2.5 8a5.5 5.5 0 1 0 1.6-3.9M2.5 2.5v2.6h2.6M8 4.8V8l2.2 1.4"
            fill="none"
            stroke="currentColor"
            strokeWidth="1.5"
            strokeLinecap="round"
            strokeLinejoin="round"
          />
        </svg>
        <span className="visually-hidden">Query history</span>
      </button>
      <button
        ref={syntaxButton}
        type="button"
        className="secondary query-tool"
        title="Query syntax"
        aria-haspopup="dialog"
        aria-expanded={popover === 'syntax'}
        aria-controls={popover === 'syntax' ? popoverId : undefined}
        onClick={() => toggle('syntax')}
      >
        <span aria-hidden="true">?</span>
        <span className="visually-hidden">Query syntax</span>
      </button>
      {popover === 'history' && <HistoryPopover id={popoverId} onPick={pick} />}
      {popover === 'syntax' && <SyntaxPopover id={popoverId} onPick={pick} />}
    </div>
  );
}
