import { type PointerEvent, type RefObject, useMemo, useRef, useState } from 'react';
import { api, errorText } from '../../api';
import {
  byPlace,
  type Direction,
  GRID_COLUMNS,
  moved,
  type Position,
  placed,
  resized,
  samePlace,
  type Widget,
} from './grid';

interface Drag {
  id: number;
  mode: 'move' | 'resize';
  pointerId: number;
  startX: number;
  startY: number;
  start: Position;
  pos: Position;
  /** One grid column and one row, in CSS pixels (cell plus gap). */
  colStep: number;
  rowStep: number;
}

/** The pointer handlers of a widget's header (move) and corner handle (resize). */
export interface DragHandlers {
  start: (mode: 'move' | 'resize', e: PointerEvent<HTMLElement>) => void;
  move: (e: PointerEvent<HTMLElement>) => void;
  end: (e: PointerEvent<HTMLElement>, cancelled: boolean) => void;
}

/**
 * Moving and resizing widgets on the grid, by buttons and keys (a cell a step) and by
 * dragging (whole cells): what is shown meanwhile, and each change saved (PATCH of every
 * widget whose position changed; all back on a failure, which `onError` is told).
 */
export function useGridLayout(opts: {
  widgets: Widget[];
  setWidgets: (next: Widget[]) => void;
  gridRef: RefObject<HTMLDivElement | null>;
  /** A control whose widget moves in the DOM keeps the focus: its id. */
  focus: (id: string) => void;
  onError: (text: string | null) => void;
}) {
  const { widgets, setWidgets, gridRef, focus, onError } = opts;
  const [drag, setDrag] = useState<Drag | null>(null);
  const dragRef = useRef<Drag | null>(null);

  // Layout order of the saved positions: kept while dragging, so that the dragged widget's
  // element is never moved in the DOM (it holds the pointer capture).
  const ordered = useMemo(() => [...widgets].sort(byPlace), [widgets]);
  const preview = useMemo(
    () => (drag ? new Map(placed(widgets, drag.id, drag.pos).map((w) => [w.id, w.position])) : null),
    [widgets, drag],
  );

  /** Shows `next` and saves every widget whose position changed; all back on a failure. */
  const commit = async (next: Widget[], what: string) => {
    const before = widgets;
    const was = new Map(before.map((w) => [w.id, w.position]));
    const changed = next.filter((w) => !samePlace(w.position, was.get(w.id) ?? w.position));
    if (!changed.length) return;
    onError(null);
    setWidgets(next);
    try {
      await Promise.all(
        changed.map((w) => api(`/api/widgets/${w.id}`, { method: 'PATCH', body: { position: w.position } })),
      );
    } catch (err) {
      setWidgets(before);
      onError(`Could not ${what}: ${errorText(err)}`);
    }
  };

  const move = async (w: Widget, d: Direction, buttonId: string) => {
    const next = moved(w.position, d);
    if (!next) return;
    focus(buttonId);
    await commit(placed(widgets, w.id, next), `move “${w.title}”`);
  };

  const resize = async (w: Widget, d: Direction, handleId: string) => {
    const next = resized(w.position, d);
    if (!next) return;
    focus(handleId);
    await commit(placed(widgets, w.id, next), `resize “${w.title}”`);
  };

  // Dragging: the header moves a widget, the corner handle resizes it, both by whole cells.
  const dragStart = (w: Widget, mode: Drag['mode'], e: PointerEvent<HTMLElement>) => {
    if (e.button !== 0 || dragRef.current || w.read_only) return;
    if (mode === 'move' && (e.target as HTMLElement).closest('button, a')) return;
    const grid = gridRef.current;
    if (!grid || window.matchMedia('(max-width: 720px)').matches) return;
    const css = getComputedStyle(grid);
    const colGap = Number.parseFloat(css.columnGap) || 0;
    const rowGap = Number.parseFloat(css.rowGap) || 0;
    const row = Number.parseFloat(css.gridAutoRows) || 56;
    e.preventDefault();
    e.currentTarget.setPointerCapture(e.pointerId);
    const d: Drag = {
      id: w.id,
      mode,
      pointerId: e.pointerId,
      startX: e.clientX,
      startY: e.clientY,
      start: w.position,
      pos: w.position,
      colStep: (grid.getBoundingClientRect().width + colGap) / GRID_COLUMNS,
      rowStep: row + rowGap,
    };
    dragRef.current = d;
    setDrag(d);
  };

  const dragMove = (e: PointerEvent<HTMLElement>) => {
    const d = dragRef.current;
    if (!d || e.pointerId !== d.pointerId) return;
    const dc = Math.round((e.clientX - d.startX) / d.colStep);
    const dr = Math.round((e.clientY - d.startY) / d.rowStep);
    const s = d.start;
    const w = Math.min(s.w, GRID_COLUMNS);
    const pos =
      d.mode === 'move'
        ? { ...s, x: Math.max(0, Math.min(GRID_COLUMNS - w, s.x + dc)), y: Math.max(0, s.y + dr) }
        : { ...s, w: Math.max(1, Math.min(GRID_COLUMNS - s.x, s.w + dc)), h: Math.max(1, s.h + dr) };
    if (samePlace(pos, d.pos)) return;
    const next = { ...d, pos };
    dragRef.current = next;
    setDrag(next);
  };

  const dragEnd = (e: PointerEvent<HTMLElement>, cancelled: boolean) => {
    const d = dragRef.current;
    if (!d || e.pointerId !== d.pointerId) return;
    dragRef.current = null;
    setDrag(null);
    const w = widgets.find((x) => x.id === d.id);
    if (!w || cancelled || samePlace(d.pos, d.start)) return;
    void commit(placed(widgets, d.id, d.pos), `${d.mode === 'move' ? 'move' : 'resize'} “${w.title}”`);
  };

  /** The widgets in layout order, each where it is shown now (a drag's preview included). */
  const shown = ordered.map((w) => {
    const position = preview?.get(w.id) ?? w.position;
    return position === w.position ? w : { ...w, position };
  });

  return {
    shown,
    draggingId: drag?.id ?? null,
    move,
    resize,
    handlers: (w: Widget): DragHandlers => ({
      start: (mode, e) => dragStart(w, mode, e),
      move: dragMove,
      end: dragEnd,
    }),
  };
}
