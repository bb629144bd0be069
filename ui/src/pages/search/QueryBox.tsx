import { type Ref, useEffect, useImperativeHandle, useRef, useState } from 'react';
import type { FieldInfo } from './FieldList';
import type { QueryEditor } from './QueryEditor';

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
 * `errorId` names), the cursor goes there, and the editor marks the character.
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

  useImperativeHandle(props.ref, () => ({
    focus() {
      const editor = editorRef.current;
      if (editor) return editor.focus();
      const input = inputRef.current;
      if (!input) return;
      input.focus();
      input.setSelectionRange(input.value.length, input.value.length);
    },
  }));

  return (
    <div className="query-box">
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
    </div>
  );
}
