/** The dashboard grid: positions in 12 columns, and moving, resizing and placing widgets on it. */

import type { Schemas } from '../../api';

export const GRID_COLUMNS = 12;

export interface Position {
  x: number;
  y: number;
  w: number;
  h: number;
}

export type Widget = Schemas['Widget'];

export type Direction = 'left' | 'right' | 'up' | 'down';

/** The position one step in a direction, kept inside the 12 columns; null when it cannot move. */
export function moved(p: Position, d: Direction): Position | null {
  const w = Math.min(p.w, GRID_COLUMNS);
  const next = { ...p };
  if (d === 'left') next.x = Math.max(0, p.x - 1);
  if (d === 'right') next.x = Math.min(GRID_COLUMNS - w, p.x + 1);
  if (d === 'up') next.y = Math.max(0, p.y - 1);
  if (d === 'down') next.y = p.y + 1;
  return next.x === p.x && next.y === p.y ? null : next;
}

export const byPlace = (a: Widget, b: Widget) => a.position.y - b.position.y || a.position.x - b.position.x;

export const samePlace = (a: Position, b: Position) =>
  a.x === b.x && a.y === b.y && a.w === b.w && a.h === b.h;

export const overlaps = (a: Position, b: Position) =>
  a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;

/**
 * The layout with widget `id` at `pos`, and every widget it would overlap pushed down
 * until nothing overlaps (simple vertical compaction: widgets only ever move down, in
 * layout order; read-only widgets cannot be saved, so they stay and what meets them goes
 * below them, the placed widget included).
 */
export function placed(widgets: readonly Widget[], id: number, pos: Position): Widget[] {
  const done: Widget[] = widgets.filter((w) => w.read_only && w.id !== id);
  const settle = (w: Widget) => {
    let p = w.position;
    for (
      let hit = done.find((d) => overlaps(d.position, p));
      hit;
      hit = done.find((d) => overlaps(d.position, p))
    )
      p = { ...p, y: hit.position.y + hit.position.h };
    done.push(p === w.position ? w : { ...w, position: p });
  };
  const self = widgets.find((w) => w.id === id);
  if (self) settle({ ...self, position: pos });
  for (const w of [...widgets].sort(byPlace)) if (!w.read_only && w.id !== id) settle(w);
  const byId = new Map(done.map((w) => [w.id, w]));
  return widgets.map((w) => byId.get(w.id) ?? w);
}

/** A size one step bigger or smaller, kept inside the 12 columns; null when it cannot change. */
export function resized(p: Position, d: Direction): Position | null {
  const next = { ...p };
  if (d === 'left') next.w = Math.max(1, p.w - 1);
  if (d === 'right') next.w = Math.min(GRID_COLUMNS - p.x, p.w + 1);
  if (d === 'up') next.h = Math.max(1, p.h - 1);
  if (d === 'down') next.h = p.h + 1;
  return next.w === p.w && next.h === p.h ? null : next;
}

export const KEY_DIRECTION: Record<string, Direction> = {
  ArrowLeft: 'left',
  ArrowRight: 'right',
  ArrowUp: 'up',
  ArrowDown: 'down',
};

export const ARROWS: Record<Direction, string> = { left: '←', right: '→', up: '↑', down: '↓' };
