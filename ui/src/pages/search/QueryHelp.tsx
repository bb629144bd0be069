import { type KeyboardEvent, useEffect, useId, useRef } from 'react';
import { clearQueryHistory, useQueryHistory } from './query-history';
import { SYNTAX_SECTIONS } from './syntax-examples';
import './query-help.css';

/** ↑ and ↓ move the focus between the popover's choices (its buttons marked `data-choice`). */
function moveFocus(e: KeyboardEvent<HTMLElement>) {
  if (e.key !== 'ArrowDown' && e.key !== 'ArrowUp') return;
  const choices = [...e.currentTarget.querySelectorAll<HTMLElement>('[data-choice]')];
  if (choices.length === 0) return;
  e.preventDefault();
  const at = choices.indexOf(document.activeElement as HTMLElement);
  const next = e.key === 'ArrowDown' ? Math.min(choices.length - 1, at + 1) : Math.max(0, at - 1);
  choices[at < 0 ? 0 : next]?.focus();
}

/** The popover takes the focus when it opens: its first choice, or itself. */
function useFirstFocus() {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const el = ref.current;
    (el?.querySelector<HTMLElement>('[data-choice]') ?? el)?.focus();
  }, []);
  return ref;
}

/**
 * The queries searched last (query-history.ts), newest first: one chosen goes into the
 * box (Enter then searches it). Clear history forgets them all.
 */
export function HistoryPopover(props: { id: string; onPick: (query: string) => void }) {
  const history = useQueryHistory();
  const ref = useFirstFocus();
  const headingId = useId();
  return (
    <dialog
      open
      ref={ref}
      id={props.id}
      className="query-popover history-popover"
      aria-labelledby={headingId}
      tabIndex={-1}
      onKeyDown={moveFocus}
    >
      <div className="query-popover-head">
        <h2 id={headingId}>Recent queries</h2>
        {history.length > 0 && (
          <button
            type="button"
            className="secondary small"
            onClick={() => {
              clearQueryHistory();
              ref.current?.focus();
            }}
          >
            Clear history
          </button>
        )}
      </div>
      {history.length > 0 ? (
        <ol className="history-list">
          {history.map((q) => (
            <li key={q}>
              <button
                type="button"
                className="history-item"
                data-choice
                title={q}
                onClick={() => props.onPick(q)}
              >
                {q}
              </button>
            </li>
          ))}
        </ol>
      ) : (
        <p className="muted small-text">
          The queries you search show here (↑ in the empty box shows them too).
        </p>
      )}
    </dialog>
  );
}

/**
 * A compact reference of the query language (syntax-examples.ts): each form with an
 * example, which a click puts into the box.
 */
export function SyntaxPopover(props: { id: string; onPick: (query: string) => void }) {
  const ref = useFirstFocus();
  const headingId = useId();
  return (
    <dialog
      open
      ref={ref}
      id={props.id}
      className="query-popover syntax-popover"
      aria-labelledby={headingId}
      tabIndex={-1}
      onKeyDown={moveFocus}
    >
      <div className="query-popover-head">
        <h2 id={headingId}>Query syntax</h2>
        <span className="muted small-text">Click an example to put it in the box.</span>
      </div>
      <div className="syntax-sections">
        {SYNTAX_SECTIONS.map((section) => (
          <div key={section.title} className="syntax-section">
            <h3>{section.title}</h3>
            <p className="muted small-text">{section.note}</p>
            <ul>
              {section.examples.map((ex) => (
                <li key={ex.query}>
                  <button
                    type="button"
                    className="syntax-example"
                    data-choice
                    onClick={() => props.onPick(ex.query)}
                  >
                    {ex.query}
                  </button>
                  <span className="syntax-meaning">{ex.meaning}</span>
                </li>
              ))}
            </ul>
          </div>
        ))}
      </div>
    </dialog>
  );
}
