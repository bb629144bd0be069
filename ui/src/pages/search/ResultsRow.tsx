import { type FocusEvent, type KeyboardEvent, type MouseEvent, memo } from 'react';
import type { LogEvent } from '../../api';
import { formatCount, formatTs } from '../../format';
import { spareColumn } from './column-widths';
import { cellText, columnClass } from './columns';
import { Marked } from './highlight';
import { filterTerm } from './query';

/** Short forms for narrow screens (syslog's own abbreviations). */
const SEV_SHORT: Record<string, string> = {
  emergency: 'emerg',
  critical: 'crit',
  error: 'err',
  warning: 'warn',
};

/**
 * The most of a value a cell draws: one line shows a few hundred characters at most, a
 * wrapped one some pages; the whole value is in the event (a 64 KB message drawn in full
 * in every row in view would cost the page seconds of layout).
 */
const LINE_CHARS = 500;
export const WRAPPED_CHARS = 4_000;
/** Longer values are copied, not made into a filter (the query would be the value). */
const MAX_FILTER_CHARS = 1_000;
const COPIED_NOTE_MS = 1_500;

/** A value as a cell draws it, cut where no one would read on. */
function CellText({ text, wrap, marked = false }: { text: string; wrap: boolean; marked?: boolean }) {
  const most = wrap ? WRAPPED_CHARS : LINE_CHARS;
  const shown = text.length <= most ? text : text.slice(0, most);
  if (text.length <= most) return marked ? <Marked text={shown} /> : text;
  return (
    <>
      {marked ? <Marked text={shown} /> : shown}
      <span className="cell-more">… {formatCount(text.length - most)} more characters</span>
    </>
  );
}

function Cell({ column, ev, wrap }: { column: string; ev: LogEvent; wrap: boolean }) {
  if (column === 'time') {
    const ts = formatTs(ev.ts);
    return (
      <>
        <span className="date">{ts.slice(0, 11)}</span>
        {ts.slice(11)}
      </>
    );
  }
  if (column === 'severity') {
    const severity = cellText(ev.severity);
    return severity ? (
      <span className={`sev sev-${severity}`} title={severity}>
        <span className="sev-long">{severity}</span>
        {/* A phone shows the short form; assistive technology reads the full one. */}
        <span className="sev-short" aria-hidden="true">
          {SEV_SHORT[severity] ?? severity}
        </span>
      </span>
    ) : null;
  }
  // The message shows the search's terms marked (highlight.tsx).
  return <CellText text={cellText(ev[column])} wrap={wrap} marked={column === 'message'} />;
}

/** What a cell's actions do with its value; a click on one does not open the event. */
export interface CellHandlers {
  onFilter?: ((term: string) => void) | undefined;
  /** Copies a value; true once it is on the clipboard. */
  onCopy: (text: string) => Promise<boolean>;
}

/**
 * A cell's actions, shown while the pointer is over it or the focus in it: filter for
 * the value, filter it out, copy it.
 */
function CellActions({ column, ev, handlers }: { column: string; ev: LogEvent; handlers: CellHandlers }) {
  const value = ev[column];
  const text = column === 'time' ? formatTs(ev.ts) : cellText(value);
  if (text === '') return null;
  const { onFilter, onCopy } = handlers;
  // An object's JSON or a very long value is no term to search for: it can be copied.
  const canFilter =
    onFilter && column !== 'time' && typeof value !== 'object' && text.length <= MAX_FILTER_CHARS;
  const short = text.length > 40 ? `${text.slice(0, 40)}…` : text;
  const act = (action: () => void) => (e: MouseEvent) => {
    e.stopPropagation();
    action();
  };
  const numeric = typeof value === 'number';
  return (
    <span className="cell-actions">
      {canFilter && (
        <>
          <button
            type="button"
            className="cell-action filter-in"
            aria-label={`Filter for ${column}:${short}`}
            title={`Filter for ${column}:${short}`}
            onClick={act(() => onFilter(filterTerm(column, text, { numeric })))}
          />
          <button
            type="button"
            className="cell-action filter-out"
            aria-label={`Filter out ${column}:${short}`}
            title={`Filter out ${column}:${short}`}
            onClick={act(() => onFilter(filterTerm(column, text, { numeric, negate: true })))}
          />
        </>
      )}
      <button
        type="button"
        className="cell-action copy"
        aria-label={`Copy ${column}`}
        title={`Copy ${column}`}
        onClick={(e) => {
          e.stopPropagation();
          // "Copied" shows beside the button for a moment (no render: the row stays as it is).
          const button = e.currentTarget;
          void onCopy(text).then((ok) => {
            if (!ok) return;
            button.dataset.copied = '';
            setTimeout(() => delete button.dataset.copied, COPIED_NOTE_MS);
          });
        }}
      />
    </span>
  );
}

/** The stripe at the row's start, its severity's colour; named when no column says it. */
function SeverityStripe({ severity, named }: { severity: string; named: boolean }) {
  if (!severity) return null;
  return named ? (
    <span className="sev-stripe" role="img" aria-label={`Severity: ${severity}`} />
  ) : (
    <span className="sev-stripe" aria-hidden="true" />
  );
}

/**
 * ←/→ move the focus between a row's cells, which then show their actions (Tab reaches
 * them); the first cell's button stays the row's one tab stop.
 */
function moveAcross(e: KeyboardEvent<HTMLTableRowElement>): boolean {
  if (e.key !== 'ArrowLeft' && e.key !== 'ArrowRight') return false;
  const cell = (e.target as Element).closest('td');
  if (!cell || cell.parentElement !== e.currentTarget) return false;
  const next = e.key === 'ArrowRight' ? cell.nextElementSibling : cell.previousElementSibling;
  if (!(next instanceof HTMLElement)) return false;
  e.preventDefault();
  next.focus();
  return true;
}

/**
 * A cell focused (or one of its actions) is marked, so that its actions show and Tab
 * reaches them: as CSS's :focus the mark would go as the focus leaves the cell for its
 * first action, hiding the action before it takes the focus. The first cell's button
 * (the row's tab stop) does not mark it: Tab goes on to the next row.
 */
function markFocus(e: FocusEvent<HTMLTableRowElement>) {
  const target = e.target as Element;
  const cell = target.closest('td');
  if (!cell) return;
  if (e.type === 'focus') {
    if (target === cell || target.closest('.cell-actions')) cell.dataset.focused = '';
  } else if (!(e.relatedTarget instanceof Node && cell.contains(e.relatedTarget)))
    delete cell.dataset.focused;
}

export const ResultsRow = memo(function ResultsRow(props: {
  index: number;
  ev: LogEvent;
  selected: boolean;
  /** Opens an event; `context`: with its context shown (the key `c`). */
  onOpen: (ev: LogEvent, opts?: { context: boolean }) => void;
  columns: readonly string[];
  wrap: boolean;
  handlers: CellHandlers;
  /** Measures the row's height (wrapped rows differ). */
  measure?: ((row: HTMLTableRowElement | null) => void) | undefined;
}) {
  const { ev, onOpen, columns, wrap, handlers } = props;
  const severity = cellText(ev.severity);
  const spare = spareColumn(columns);
  const onKeyDown = (e: KeyboardEvent<HTMLTableRowElement>) => {
    if (moveAcross(e)) return;
    // `c` on the row (or its open button): the event with its context.
    if (e.key === 'c' && !e.ctrlKey && !e.metaKey && !e.altKey) {
      e.preventDefault();
      onOpen(ev, { context: true });
    } else if (e.key === 'Enter' && (e.target === e.currentTarget || (e.target as Element).tagName === 'TD'))
      onOpen(ev);
  };
  return (
    <tr
      ref={props.measure}
      data-index={props.index}
      aria-rowindex={props.index + 2}
      className={`event-row sev-row-${severity || 'none'}${props.selected ? ' selected' : ''}`}
      onClick={() => onOpen(ev)}
      onKeyDown={onKeyDown}
      onFocus={markFocus}
      onBlur={markFocus}
    >
      {columns.map((c, i) => (
        <td key={c} className={c === spare ? `${columnClass(c)} spare` : columnClass(c)} tabIndex={-1}>
          {i === 0 && <SeverityStripe severity={severity} named={!columns.includes('severity')} />}
          {/* The first cell opens the event from the keyboard. */}
          {i === 0 ? (
            <button type="button" className="row-open" title="Show this event">
              <Cell column={c} ev={ev} wrap={wrap} />
            </button>
          ) : (
            <span className="cell-value">
              <Cell column={c} ev={ev} wrap={wrap} />
            </span>
          )}
          <CellActions column={c} ev={ev} handlers={handlers} />
        </td>
      ))}
    </tr>
  );
});
