import { type KeyboardEvent, type PointerEvent, useRef, useState } from 'react';
import { columnClass, columnLabel, MAX_WIDTH, MIN_WIDTH } from './columns';
import { sortOf } from './search-url';

/** How far a pointer moves on a header before it drags the column (less is a click). */
const DRAG_THRESHOLD = 6;
/** What ←/→ on a resize handle changes (with Shift: four times as much). */
const KEY_STEP = 16;

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

/** A click right after a drag ends is the drag's, not the header's (no sort). */
function swallowNextClick() {
  const swallow = (e: MouseEvent) => {
    e.stopPropagation();
    e.preventDefault();
  };
  window.addEventListener('click', swallow, { capture: true, once: true });
  setTimeout(() => window.removeEventListener('click', swallow, { capture: true }), 0);
}

interface Props {
  columns: readonly string[];
  /** Each column's width in px; undefined: the one taking the spare width (no handle). */
  widths: Readonly<Record<string, number | undefined>>;
  sort?: readonly string[] | undefined;
  onSort?: ((column: string) => void) | undefined;
  /** A column's width while its edge is dragged (`done` false), then kept; null: to its content. */
  onResize?: ((column: string, px: number | null, done: boolean) => void) | undefined;
  /** A header dropped at `index` of the other columns. */
  onPlace?: ((column: string, index: number) => void) | undefined;
}

/**
 * The results table's header row: a click sorts by the column, a drag moves it among the
 * others, its edge's handle (a focusable separator, ←/→) changes its width.
 */
export function ResultsHeader({ columns, widths, sort, onSort, onResize, onPlace }: Props) {
  const rowRef = useRef<HTMLTableRowElement>(null);
  /** The column dragged and where it would land (its index among the others). */
  const [drag, setDrag] = useState<{ column: string; to: number } | null>(null);

  /** Where a header dropped at `x` lands: how many other headers' middles are left of it. */
  const landing = (column: string, x: number) => {
    const cells = [...(rowRef.current?.children ?? [])];
    return cells.filter((cell, i) => {
      if (columns[i] === column) return false;
      const box = cell.getBoundingClientRect();
      return x > box.left + box.width / 2;
    }).length;
  };

  const startDrag = (column: string) => (e: PointerEvent<HTMLTableCellElement>) => {
    if (!onPlace || e.button !== 0 || !e.isPrimary || columns.length < 2) return;
    if ((e.target as Element).closest('.col-resize')) return;
    const startX = e.clientX;
    let moving = false;
    const move = (ev: globalThis.PointerEvent) => {
      if (!moving && Math.abs(ev.clientX - startX) < DRAG_THRESHOLD) return;
      moving = true;
      setDrag({ column, to: landing(column, ev.clientX) });
    };
    const end = (ev: globalThis.PointerEvent | null) => {
      document.removeEventListener('pointermove', move);
      document.removeEventListener('pointerup', up);
      document.removeEventListener('pointercancel', cancel);
      document.removeEventListener('keydown', onEscape, true);
      setDrag(null);
      if (!moving) return;
      swallowNextClick();
      if (ev) onPlace(column, landing(column, ev.clientX));
    };
    const up = (ev: globalThis.PointerEvent) => end(ev);
    const cancel = () => end(null);
    const onEscape = (ev: globalThis.KeyboardEvent) => {
      if (ev.key !== 'Escape' || !moving) return;
      ev.stopPropagation();
      end(null);
    };
    document.addEventListener('pointermove', move);
    document.addEventListener('pointerup', up);
    document.addEventListener('pointercancel', cancel);
    document.addEventListener('keydown', onEscape, true);
  };

  /** The header the dragged one would land before (or, at the end, after). */
  const others = drag ? columns.filter((c) => c !== drag.column) : [];
  const dropMark = (column: string) => {
    if (!drag) return '';
    if (column === drag.column) return ' dragging';
    if (others[drag.to] === column) return ' drop-before';
    if (drag.to === others.length && others[others.length - 1] === column) return ' drop-after';
    return '';
  };

  return (
    <tr aria-rowindex={1} ref={rowRef}>
      {columns.map((c) => (
        <th
          key={c}
          scope="col"
          className={`${c === 'host' || c === 'app' ? columnClass(c) : ''}${onPlace ? ' movable' : ''}${dropMark(c)}`}
          aria-sort={sort ? (sortOf(sort, c) ?? 'none') : undefined}
          onPointerDown={startDrag(c)}
        >
          {onSort ? (
            <button type="button" className="sort-header" onClick={() => onSort(c)}>
              <HeaderLabel column={c} />
            </button>
          ) : (
            <HeaderLabel column={c} />
          )}
          {onResize && widths[c] !== undefined && (
            <ResizeHandle column={c} width={widths[c]} onResize={onResize} />
          )}
        </th>
      ))}
    </tr>
  );
}

function ResizeHandle(props: {
  column: string;
  width: number;
  onResize: (column: string, px: number | null, done: boolean) => void;
}) {
  const { column, width, onResize } = props;
  const start = useRef<{ x: number; width: number } | null>(null);
  const widthAt = (x: number) => (start.current ? start.current.width + x - start.current.x : width);
  const onKeyDown = (e: KeyboardEvent<HTMLElement>) => {
    const step = e.shiftKey ? KEY_STEP * 4 : KEY_STEP;
    if (e.key === 'ArrowLeft' || e.key === 'ArrowRight') {
      e.preventDefault();
      onResize(column, width + (e.key === 'ArrowLeft' ? -step : step), true);
    }
  };
  return (
    // biome-ignore lint/a11y/useSemanticElements: an <hr> cannot take the focus and the keys; a focusable separator is ARIA's splitter
    <span
      role="separator"
      aria-orientation="vertical"
      aria-label={`Resize ${columnLabel(column)}`}
      aria-valuenow={width}
      aria-valuemin={MIN_WIDTH}
      aria-valuemax={MAX_WIDTH}
      tabIndex={0}
      className="col-resize"
      title="Drag to resize; double-click to fit the content"
      onKeyDown={onKeyDown}
      onDoubleClick={() => onResize(column, null, true)}
      onPointerDown={(e) => {
        if (e.button !== 0) return;
        e.preventDefault();
        e.currentTarget.setPointerCapture(e.pointerId);
        const cell = e.currentTarget.closest('th');
        start.current = { x: e.clientX, width: cell?.getBoundingClientRect().width ?? width };
      }}
      onPointerMove={(e) => {
        if (start.current) onResize(column, widthAt(e.clientX), false);
      }}
      onPointerUp={(e) => {
        if (!start.current) return;
        const moved = e.clientX !== start.current.x;
        const px = widthAt(e.clientX);
        start.current = null;
        if (moved) onResize(column, px, true);
      }}
      onPointerCancel={() => {
        start.current = null;
      }}
    />
  );
}
