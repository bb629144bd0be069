import { useVirtualizer } from '@tanstack/react-virtual';
import { type KeyboardEvent, memo, useEffect, useRef } from 'react';
import type { LogEvent } from '../../api';
import { formatTs } from '../../format';
import { cellText, columnClass, columnLabel, DEFAULT_COLUMNS } from './columns';
import { sortOf } from './search-url';
import { PAGE_SIZE, type Phase } from './useSearch';

/** Rows the table scrolls through (browsers cap an element's height near 17-33 million px). */
export const MAX_ROWS = 500_000;
const ROW_HEIGHT = 30;
const LOAD_DELAY_MS = 120;

interface Props {
  total: number;
  pages: ReadonlyMap<number, LogEvent[]>;
  phase: Phase;
  ensureRows: (first: number, last: number) => void;
  selectedId: string | null;
  /** Opens an event; `context`: with its context shown (the key `c`). */
  onOpen: (ev: LogEvent, opts?: { context: boolean }) => void;
  /** Shown when there are no rows (default: nothing matched). */
  emptyText?: string;
  /** The columns shown, in order (default: time, severity, host, app, message). */
  columns?: readonly string[];
  /** The sort of the results; with `onSort` the headers are buttons that change it. */
  sort?: readonly string[];
  onSort?: (column: string) => void;
}

/** Short forms for narrow screens (syslog's own abbreviations). */
const SEV_SHORT: Record<string, string> = {
  emergency: 'emerg',
  critical: 'crit',
  error: 'err',
  warning: 'warn',
};

function HeaderLabel({ column }: { column: string }) {
  return column === 'severity' ? (
    <>
      <span className="sev-long">Severity</span>
      <span className="sev-short" aria-hidden="true">
        Sev.
      </span>
    </>
  ) : (
    columnLabel(column)
  );
}

/** The events of a search as a virtualised table: only the rows in view are in the DOM. */
export function ResultsTable({
  total,
  pages,
  phase,
  ensureRows,
  selectedId,
  onOpen,
  emptyText,
  columns = DEFAULT_COLUMNS,
  sort,
  onSort,
}: Props) {
  const scrollRef = useRef<HTMLElement>(null);
  const count = Math.min(total, MAX_ROWS);
  const virtualizer = useVirtualizer({
    count,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: 15,
  });
  const items = virtualizer.getVirtualItems();
  const first = items[0]?.index ?? 0;
  const last = items[items.length - 1]?.index ?? -1;

  // Pages beyond the first are fetched once the search is done (its rows no longer move),
  // for the rows in view once scrolling pauses: a fast fling does not queue a request for
  // every page it passes (a deep page costs the server a sorted scan).
  const canLoad = phase === 'SUCCESS' || phase === 'STOPPED';
  useEffect(() => {
    if (!canLoad || last < first) return;
    const t = setTimeout(() => ensureRows(first, last), LOAD_DELAY_MS);
    return () => clearTimeout(t);
  }, [first, last, ensureRows, canLoad]);

  const padTop = items[0]?.start ?? 0;
  const padBottom = items.length > 0 ? virtualizer.getTotalSize() - (items[items.length - 1]?.end ?? 0) : 0;
  const empty = count === 0 && canLoad;

  return (
    <section aria-label="Results" className="results" ref={scrollRef}>
      <table
        className="events"
        aria-rowcount={count + 1}
        // The rows outside the view are margins: no placeholder rows in the accessibility tree.
        style={{ marginTop: padTop, marginBottom: padBottom }}
      >
        <colgroup>
          {columns.map((c) => (
            <col key={c} className={columnClass(c)} />
          ))}
        </colgroup>
        <thead>
          <tr aria-rowindex={1}>
            {columns.map((c) => (
              <th
                key={c}
                scope="col"
                className={c === 'host' || c === 'app' ? columnClass(c) : undefined}
                aria-sort={sort ? (sortOf(sort, c) ?? 'none') : undefined}
              >
                {onSort ? (
                  <button type="button" className="sort-header" onClick={() => onSort(c)}>
                    <HeaderLabel column={c} />
                  </button>
                ) : (
                  <HeaderLabel column={c} />
                )}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {items.map((item) => {
            const ev = pages.get(Math.floor(item.index / PAGE_SIZE))?.[item.index % PAGE_SIZE];
            return ev ? (
              <Row
                key={ev.ev_id}
                index={item.index}
                ev={ev}
                selected={ev.ev_id === selectedId}
                onOpen={onOpen}
                columns={columns}
              />
            ) : (
              <tr key={`loading-${item.index}`} aria-rowindex={item.index + 2} className="loading-row">
                <td colSpan={columns.length}>Loading…</td>
              </tr>
            );
          })}
        </tbody>
      </table>
      {empty && (
        <p className="empty muted">{emptyText ?? 'No events match this query in this time range.'}</p>
      )}
    </section>
  );
}

function Cell({ column, ev }: { column: string; ev: LogEvent }) {
  if (column === 'time')
    return (
      <>
        <span className="date">{formatTs(ev.ts).slice(0, 11)}</span>
        {formatTs(ev.ts).slice(11)}
      </>
    );
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
  return <>{cellText(ev[column])}</>;
}

const Row = memo(function Row(props: {
  index: number;
  ev: LogEvent;
  selected: boolean;
  /** Opens an event; `context`: with its context shown (the key `c`). */
  onOpen: (ev: LogEvent, opts?: { context: boolean }) => void;
  columns: readonly string[];
}) {
  const { ev, onOpen, columns } = props;
  const onKeyDown = (e: KeyboardEvent<HTMLTableRowElement>) => {
    // `c` on the row (or its open button): the event with its context.
    if (e.key === 'c' && !e.ctrlKey && !e.metaKey && !e.altKey) {
      e.preventDefault();
      onOpen(ev, { context: true });
    } else if (e.key === 'Enter' && e.target === e.currentTarget) onOpen(ev);
  };
  return (
    <tr
      aria-rowindex={props.index + 2}
      className={props.selected ? 'event-row selected' : 'event-row'}
      onClick={() => onOpen(ev)}
      onKeyDown={onKeyDown}
    >
      {columns.map((c, i) => (
        <td key={c} className={columnClass(c)}>
          {/* The first cell opens the event from the keyboard. */}
          {i === 0 ? (
            <button type="button" className="row-open" title="Show this event">
              <Cell column={c} ev={ev} />
            </button>
          ) : (
            <Cell column={c} ev={ev} />
          )}
        </td>
      ))}
    </tr>
  );
});
