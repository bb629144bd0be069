import { useVirtualizer } from '@tanstack/react-virtual';
import {
  type CSSProperties,
  type ReactNode,
  type RefObject,
  useCallback,
  useEffect,
  useLayoutEffect,
  useMemo,
  useRef,
  useState,
} from 'react';
import type { LogEvent } from '../../api';
import {
  columnWidths,
  contentWidths,
  fontsOf,
  spareColumn,
  type TableFonts,
  tableMinWidth,
} from './column-widths';
import { type ColumnWidths, clampWidth, columnClass, DEFAULT_COLUMNS, placeColumn } from './columns';
import { ResultsHeader } from './ResultsHeader';
import { type CellHandlers, ResultsRow, WRAPPED_CHARS } from './ResultsRow';
import { useRowKeys } from './useRowKeys';
import { PAGE_SIZE, type Phase } from './useSearch';
import { useWrap } from './WrapToggle';

/** Rows the table scrolls through (browsers cap an element's height near 17-33 million px). */
export const MAX_ROWS = 500_000;
const ROW_HEIGHT = 30;
/** A wrapped row's height, guessed before it is drawn: a line of about 100 characters, 18 px. */
const LINE_HEIGHT = 18;
const LINE_CHARS = 100;
const LOAD_DELAY_MS = 120;
const COPIED_MS = 2_000;
const NO_WIDTHS: ColumnWidths = {};

interface Props {
  total: number;
  pages: ReadonlyMap<number, LogEvent[]>;
  phase: Phase;
  ensureRows: (first: number, last: number) => void;
  selectedId: string | null;
  /**
   * Opens an event; `context`: with its context shown (the key `c`); `focus: false`: the
   * table's arrows stepped the open panel to it (the focus stays on the row).
   */
  onOpen: (ev: LogEvent, opts?: { context?: boolean; focus?: boolean }) => void;
  /** Set to a step to the previous (-1) or next (1) event from the one open (the panel's j/k). */
  stepRef?: RefObject<((delta: number) => void) | null>;
  /** Shown when there are no rows (default: nothing matched). */
  emptyText?: string;
  /** Shown instead of `emptyText` when given: what an empty result offers (EmptyResults). */
  emptyState?: ReactNode;
  /** The columns shown, in order (default: time, severity, host, app, message). */
  columns?: readonly string[];
  /** The sort of the results; with `onSort` the headers are buttons that change it. */
  sort?: readonly string[];
  onSort?: (column: string) => void;
  /** The widths the reader gave columns; with `onWidths` their edges can be dragged. */
  widths?: ColumnWidths;
  onWidths?: (widths: ColumnWidths) => void;
  /** With it, a header dragged elsewhere reorders the columns. */
  onColumns?: (columns: string[]) => void;
  /** With it, a cell's actions filter for its value or out (a query term). */
  onFilter?: (term: string) => void;
}

/**
 * The events of a search as a virtualised table: only the rows in view are in the DOM.
 * The message takes the width the other columns (sized to their content, or as the reader
 * dragged them) leave; each row starts with its severity's stripe; a cell's actions show
 * while the pointer is over it or the focus in it.
 */
export function ResultsTable({
  total,
  pages,
  phase,
  ensureRows,
  selectedId,
  onOpen,
  emptyText,
  emptyState,
  columns = DEFAULT_COLUMNS,
  sort,
  onSort,
  widths: own = NO_WIDTHS,
  onWidths,
  onColumns,
  onFilter,
  stepRef,
}: Props) {
  const scrollRef = useRef<HTMLElement>(null);
  const tableRef = useRef<HTMLTableElement>(null);
  const wrap = useWrap();
  const count = Math.min(total, MAX_ROWS);
  // Wrapped rows are measured, under keys of their own: toggling guesses the heights afresh
  // in the same render (not with the other mode's, drawing far too many long rows first).
  const itemKey = useCallback((index: number) => (wrap ? `wrapped-${index}` : index), [wrap]);
  const virtualizer = useVirtualizer({
    count,
    getScrollElement: () => scrollRef.current,
    // Wrapped, a long message's row is guessed tall: fewer rows are drawn (to be measured)
    // than fit in view at one line each.
    estimateSize: (index) => {
      const ev = wrap ? pages.get(Math.floor(index / PAGE_SIZE))?.[index % PAGE_SIZE] : undefined;
      if (!ev) return ROW_HEIGHT;
      const chars = Math.min(WRAPPED_CHARS, String(ev.message ?? '').length);
      return Math.max(ROW_HEIGHT, 12 + LINE_HEIGHT * Math.ceil(chars / LINE_CHARS));
    },
    overscan: wrap ? 3 : 15,
    getItemKey: itemKey,
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

  // Widths: the first page's content sets them once per set of columns (they do not jump
  // as the reader scrolls), the reader's own win. A first page still filling (Live) is
  // measured again each time its rows double, and a column only grows.
  const [fonts, setFonts] = useState<TableFonts | null>(null);
  useLayoutEffect(() => {
    if (tableRef.current) setFonts(fontsOf(tableRef.current));
  }, []);
  const firstPage = pages.get(0);
  const content = useRef<{ key: string; rows: number; widths: Record<string, number> } | null>(null);
  const key = columns.join(',');
  const before = content.current?.key === key ? content.current : null;
  if (fonts && firstPage?.length && (!before || firstPage.length >= 2 * before.rows)) {
    const widths = contentWidths(columns, firstPage, fonts);
    for (const [c, px] of Object.entries(before?.widths ?? {})) widths[c] = Math.max(widths[c] ?? 0, px);
    content.current = { key, rows: firstPage.length, widths };
  }
  const sized = content.current?.key === key ? content.current.widths : null;
  /** The width of the column whose edge is being dragged. */
  const [draft, setDraft] = useState<{ column: string; px: number } | null>(null);
  const shown = columnWidths(columns, draft ? { ...own, [draft.column]: draft.px } : own, sized);

  const resize = useCallback(
    (column: string, px: number | null, done: boolean) => {
      const width = px === null ? null : clampWidth(px);
      if (!done) {
        if (width !== null) setDraft({ column, px: width });
        return;
      }
      setDraft(null);
      // Only the shown columns' widths are kept (the address stays short).
      const next = Object.fromEntries(
        Object.entries(own).filter(([c]) => c !== column && columns.includes(c)),
      );
      if (width !== null) next[column] = width;
      onWidths?.(next);
    },
    [own, columns, onWidths],
  );
  const place = useCallback(
    (column: string, index: number) => {
      const next = placeColumn(columns, column, index);
      if (next.join(',') !== columns.join(',')) onColumns?.(next);
    },
    [columns, onColumns],
  );

  const [copied, setCopied] = useState('');
  const copiedTimer = useRef<ReturnType<typeof setTimeout>>(undefined);
  useEffect(() => () => clearTimeout(copiedTimer.current), []);
  const handlers = useMemo<CellHandlers>(
    () => ({
      onFilter,
      onCopy: async (text) => {
        clearTimeout(copiedTimer.current);
        copiedTimer.current = setTimeout(() => setCopied(''), COPIED_MS);
        try {
          await navigator.clipboard.writeText(text);
          setCopied('Copied');
          return true;
        } catch {
          setCopied('Not copied: the browser gives this page no clipboard');
          return false;
        }
      },
    }),
    [onFilter],
  );

  const { onKeyDown, onFocus } = useRowKeys({
    tableRef,
    count,
    pages,
    selectedId,
    onOpen,
    ensureRows,
    stepRef,
    scrollTo: virtualizer.scrollToIndex,
  });

  const padTop = items[0]?.start ?? 0;
  const padBottom = items.length > 0 ? virtualizer.getTotalSize() - (items[items.length - 1]?.end ?? 0) : 0;
  const empty = count === 0 && canLoad;
  const spare = spareColumn(columns);

  return (
    <section aria-label="Results" className={wrap ? 'results wrapped' : 'results'} ref={scrollRef}>
      <table
        ref={tableRef}
        className="events"
        aria-rowcount={count + 1}
        // The rows outside the view are margins: no placeholder rows in the accessibility tree.
        style={
          {
            marginTop: padTop,
            marginBottom: padBottom,
            '--table-min': `${tableMinWidth(shown)}px`,
          } as CSSProperties
        }
      >
        <colgroup>
          {columns.map((c) => (
            <col
              key={c}
              className={`${columnClass(c)}${c === spare ? ' spare' : ' sized'}`}
              style={
                shown[c] === undefined ? undefined : ({ '--col-width': `${shown[c]}px` } as CSSProperties)
              }
            />
          ))}
        </colgroup>
        <thead>
          <ResultsHeader
            columns={columns}
            widths={shown}
            sort={sort}
            onSort={onSort}
            onResize={onWidths ? resize : undefined}
            onPlace={onColumns ? place : undefined}
          />
        </thead>
        {/* The rows are one Tab stop (a roving tabindex, useRowKeys): ↑/↓, j/k, Home/End. */}
        <tbody onKeyDown={onKeyDown} onFocus={onFocus}>
          {items.map((item) => {
            const ev = pages.get(Math.floor(item.index / PAGE_SIZE))?.[item.index % PAGE_SIZE];
            return ev ? (
              <ResultsRow
                key={ev.ev_id}
                index={item.index}
                ev={ev}
                selected={ev.ev_id === selectedId}
                onOpen={onOpen}
                columns={columns}
                wrap={wrap}
                handlers={handlers}
                measure={wrap ? virtualizer.measureElement : undefined}
              />
            ) : (
              <tr key={`loading-${item.index}`} aria-rowindex={item.index + 2} className="loading-row">
                <td colSpan={columns.length}>Loading…</td>
              </tr>
            );
          })}
        </tbody>
      </table>
      {empty &&
        (emptyState ?? (
          <p className="empty muted">{emptyText ?? 'No events match this query in this time range.'}</p>
        ))}
      {/* Said to screen readers; seen beside the button (ResultsRow), or here when it failed. */}
      <div className="copy-status">
        <span role="status" className={copied === 'Copied' ? 'visually-hidden' : undefined}>
          {copied}
        </span>
      </div>
    </section>
  );
}
