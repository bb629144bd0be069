import { useVirtualizer } from '@tanstack/react-virtual';
import { type KeyboardEvent, memo, useEffect, useRef } from 'react';
import type { LogEvent } from '../api';
import { formatTs } from '../format';
import { PAGE_SIZE, type Phase } from './useSearch';

/** Rows the table scrolls through (browsers cap an element's height near 17-33 million px). */
export const MAX_ROWS = 500_000;
const ROW_HEIGHT = 30;
const LOAD_DELAY_MS = 120;

const text = (v: unknown) => (v === null || v === undefined ? '' : typeof v === 'string' ? v : String(v));

interface Props {
  total: number;
  pages: ReadonlyMap<number, LogEvent[]>;
  phase: Phase;
  ensureRows: (first: number, last: number) => void;
  selectedId: string | null;
  onOpen: (ev: LogEvent) => void;
  /** Shown when there are no rows (default: nothing matched). */
  emptyText?: string;
}

/** Short forms for narrow screens (syslog's own abbreviations). */
const SEV_SHORT: Record<string, string> = {
  emergency: 'emerg',
  critical: 'crit',
  error: 'err',
  warning: 'warn',
};

/** The events of a search as a virtualised table: only the rows in view are in the DOM. */
export function ResultsTable({ total, pages, phase, ensureRows, selectedId, onOpen, emptyText }: Props) {
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
          <col className="c-time" />
          <col className="c-sev" />
          <col className="c-host" />
          <col className="c-app" />
          <col className="c-msg" />
        </colgroup>
        <thead>
          <tr aria-rowindex={1}>
            <th scope="col">Time</th>
            <th scope="col">
              <span className="sev-long">Severity</span>
              <span className="sev-short" aria-hidden="true">
                Sev.
              </span>
            </th>
            <th scope="col" className="c-host">
              Host
            </th>
            <th scope="col" className="c-app">
              App
            </th>
            <th scope="col">Message</th>
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
              />
            ) : (
              <tr key={`loading-${item.index}`} aria-rowindex={item.index + 2} className="loading-row">
                <td colSpan={5}>Loading…</td>
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

const Row = memo(function Row(props: {
  index: number;
  ev: LogEvent;
  selected: boolean;
  onOpen: (ev: LogEvent) => void;
}) {
  const { ev, onOpen } = props;
  const severity = text(ev.severity);
  const onKeyDown = (e: KeyboardEvent<HTMLTableRowElement>) => {
    if (e.key === 'Enter' && e.target === e.currentTarget) onOpen(ev);
  };
  return (
    <tr
      aria-rowindex={props.index + 2}
      className={props.selected ? 'event-row selected' : 'event-row'}
      onClick={() => onOpen(ev)}
      onKeyDown={onKeyDown}
    >
      <td className="c-time">
        <button type="button" className="row-open" title="Show this event">
          <span className="date">{formatTs(ev.ts).slice(0, 11)}</span>
          {formatTs(ev.ts).slice(11)}
        </button>
      </td>
      <td className="c-sev">
        {severity && (
          <span className={`sev sev-${severity}`} title={severity}>
            <span className="sev-long">{severity}</span>
            {/* A phone shows the short form; assistive technology reads the full one. */}
            <span className="sev-short" aria-hidden="true">
              {SEV_SHORT[severity] ?? severity}
            </span>
          </span>
        )}
      </td>
      <td className="c-host">{text(ev.host)}</td>
      <td className="c-app">{text(ev.app)}</td>
      <td className="c-msg">{text(ev.message)}</td>
    </tr>
  );
});
