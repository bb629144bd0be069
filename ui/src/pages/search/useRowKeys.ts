import {
  type FocusEvent,
  type KeyboardEvent,
  type RefObject,
  useCallback,
  useLayoutEffect,
  useRef,
  useState,
} from 'react';
import type { LogEvent } from '../../api';
import { PAGE_SIZE } from './useSearch';

const ROW_KEYS: Record<string, number | 'first' | 'last'> = {
  ArrowDown: 1,
  ArrowUp: -1,
  j: 1,
  k: -1,
  Home: 'first',
  End: 'last',
};

type Open = (ev: LogEvent, opts?: { context?: boolean; focus?: boolean }) => void;

/**
 * The results' keyboard: the rows are one Tab stop (a roving tabindex on each row's open
 * button), ↑/↓ and j/k move between them, Home/End to the first and last, Enter (the
 * button) opens the row. While an event is open the panel follows the row. `stepRef` is
 * set to the panel's own j/k: the event before or after the open one.
 */
export function useRowKeys({
  tableRef,
  count,
  pages,
  selectedId,
  onOpen,
  ensureRows,
  stepRef,
  scrollTo,
}: {
  tableRef: RefObject<HTMLTableElement | null>;
  count: number;
  pages: ReadonlyMap<number, LogEvent[]>;
  selectedId: string | null;
  onOpen: Open;
  ensureRows: (first: number, last: number) => void;
  stepRef: RefObject<((delta: number) => void) | null> | undefined;
  scrollTo: (index: number, opts?: { align?: 'auto' | 'center' }) => void;
}) {
  const [active, setActive] = useState(0);
  /** A row to focus once drawn (the arrows moved to it). */
  const focusWanted = useRef<number | null>(null);
  /** A row to open once read (stepped to before its page was loaded). */
  const openWanted = useRef<{ index: number; focus: boolean } | null>(null);
  const rowAt = useCallback((i: number) => pages.get(Math.floor(i / PAGE_SIZE))?.[i % PAGE_SIZE], [pages]);

  /** Moves to row `i`; with an event open (or `open`), opens it there. */
  const moveTo = useCallback(
    (i: number, opts: { focusRow: boolean; open: boolean; focusPanel: boolean }) => {
      if (count === 0) return;
      const target = Math.max(0, Math.min(count - 1, i));
      setActive(target);
      if (opts.focusRow) focusWanted.current = target;
      scrollTo(target, { align: 'auto' });
      if (!opts.open) return;
      const ev = rowAt(target);
      if (ev) onOpen(ev, { focus: opts.focusPanel });
      else {
        openWanted.current = { index: target, focus: opts.focusPanel };
        ensureRows(target, target);
      }
    },
    [count, scrollTo, rowAt, onOpen, ensureRows],
  );

  /** The index of the open event among the rows read, or -1. */
  const selectedIndex = useCallback(() => {
    if (selectedId === null) return -1;
    for (const [page, rows] of pages) {
      const i = rows.findIndex((ev) => ev.ev_id === selectedId);
      if (i !== -1) return page * PAGE_SIZE + i;
    }
    return -1;
  }, [pages, selectedId]);

  if (stepRef)
    stepRef.current = (delta: number) => {
      const i = selectedIndex();
      if (i === -1 || i + delta < 0 || i + delta >= count) return;
      moveTo(i + delta, { focusRow: false, open: true, focusPanel: true });
    };

  const onKeyDown = (e: KeyboardEvent<HTMLTableSectionElement>) => {
    const key = ROW_KEYS[e.key];
    if (key === undefined || e.ctrlKey || e.metaKey || e.altKey || e.shiftKey) return;
    const row = (e.target as Element).closest<HTMLElement>('tr[data-index]');
    if (!row) return;
    e.preventDefault();
    const at = Number(row.dataset.index);
    const to = key === 'first' ? 0 : key === 'last' ? count - 1 : at + key;
    if (to < 0 || to >= count) return;
    moveTo(to, { focusRow: true, open: selectedId !== null, focusPanel: false });
  };

  // A row focused by a click or Tab becomes the table's tab stop.
  const onFocus = (e: FocusEvent<HTMLTableSectionElement>) => {
    const row = (e.target as Element).closest<HTMLElement>('tr[data-index]');
    if (row) setActive(Number(row.dataset.index));
  };

  // After each render: one row's button is tabbable (the active one, or the first drawn when
  // it is scrolled away), the open event's row is marked, a row moved to takes the focus.
  useLayoutEffect(() => {
    const rows = tableRef.current?.querySelectorAll<HTMLElement>('tbody tr.event-row') ?? [];
    const drawn = [...rows];
    const stop = drawn.find((r) => Number(r.dataset.index) === active) ?? drawn[0];
    for (const r of drawn) {
      const button = r.querySelector<HTMLElement>('.row-open');
      if (button) button.tabIndex = r === stop ? 0 : -1;
      if (r.classList.contains('selected')) r.setAttribute('aria-current', 'true');
      else r.removeAttribute('aria-current');
    }
    if (focusWanted.current !== null) {
      const row = drawn.find((r) => Number(r.dataset.index) === focusWanted.current);
      if (row) {
        focusWanted.current = null;
        row.querySelector<HTMLElement>('.row-open')?.focus();
      }
    }
    const wanted = openWanted.current;
    if (wanted) {
      const ev = rowAt(wanted.index);
      if (ev) {
        openWanted.current = null;
        onOpen(ev, { focus: wanted.focus });
      }
    }
  });

  return { onKeyDown, onFocus };
}
