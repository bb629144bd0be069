import type { StoredEvent } from '../../core/event.js';
import { fieldError } from '../../errors/errors.js';
import type { SearchPlan } from '../../event-store/query-plan.js';
import type { ReadScope } from '../../event-store/read-scope.js';
import { and, cond, type FilterNode, or } from '../../filter/ast.js';
import { type EventLike, fieldValue } from '../../filter/evaluate.js';

/** Fields naming an event's source, besides `host` and `app`, when the event has one. */
const SOURCE_EXTRAS = ['proc_id', 'log.file.path', 'file.path', 'log.file', 'filename'];
/** Most events on one side of a context. */
export const CONTEXT_MAX = 1000;

export type Side = 'before' | 'after';
/** A position in the order events happened: time, then the order they were stored. */
interface Position {
  ts: number;
  stored_at: number;
  ev_id: string;
}
/** Where a page of one side stopped: the side, the last event's position and the source. */
interface Cursor extends Position {
  side: Side;
  by: Record<string, string | number | boolean | null>;
}

/** The fields (and the anchor's values of them) that name its source: `by`, or the defaults. */
export function sourceOf(anchor: StoredEvent, by: string | undefined): Cursor['by'] {
  const fields =
    by === undefined
      ? [
          'host',
          'app',
          ...SOURCE_EXTRAS.filter((f) => fieldValue(anchor as unknown as EventLike, f) != null).slice(0, 1),
        ]
      : by
          .split(',')
          .map((f) => f.trim())
          .filter(Boolean);
  if (fields.length > 10) throw fieldError('by', 'At most 10 fields.');
  const out: Cursor['by'] = {};
  for (const f of fields) {
    if (!/^[\p{L}\p{N}_.@-]{1,256}$/u.test(f)) throw fieldError('by', `"${f}" is not a field name.`);
    const v = fieldValue(anchor as unknown as EventLike, f);
    out[f] = v === undefined || v === null ? null : (v as string | number | boolean);
  }
  return out;
}

const sameSource = (by: Cursor['by']): FilterNode =>
  and(...Object.entries(by).map(([f, v]) => (v === null ? cond(f, 'not_exists') : cond(f, 'eq', v))));

const seconds = (ms: number) => ms / 1000;

/** The events strictly before (or after) a position: by time, then stored time, then id. */
function beyond(p: Position, side: Side): FilterNode {
  const op = side === 'before' ? 'lt' : 'gt';
  return or(
    cond('ts', op, seconds(p.ts)),
    and(
      cond('ts', 'eq', seconds(p.ts)),
      or(
        cond('stored_at', op, seconds(p.stored_at)),
        and(cond('stored_at', 'eq', seconds(p.stored_at)), cond('ev_id', op, p.ev_id)),
      ),
    ),
  );
}

/** One side's search: the `limit` nearest events of the same source, nearest first. */
export function sidePlan(
  scope: ReadScope,
  by: Cursor['by'],
  from: Position,
  side: Side,
  limit: number,
  span: { oldest: number; newest: number },
): SearchPlan {
  const desc = side === 'before';
  return {
    kind: 'search',
    scope,
    filter: and(sameSource(by), beyond(from, side)),
    range: desc ? { fromMs: span.oldest, toMs: from.ts + 1 } : { fromMs: from.ts, toMs: span.newest + 1 },
    sort: [
      { field: 'ts', desc },
      { field: 'stored_at', desc },
      { field: 'ev_id', desc },
    ],
    limit,
    offset: 0,
    count: false,
  };
}

export function encodeCursor(c: Cursor): string {
  return Buffer.from(JSON.stringify(c)).toString('base64url');
}

export function decodeCursor(text: string): Cursor {
  try {
    const c = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as Cursor;
    if (
      (c.side === 'before' || c.side === 'after') &&
      Number.isFinite(c.ts) &&
      Number.isFinite(c.stored_at) &&
      typeof c.ev_id === 'string' &&
      c.by !== null &&
      typeof c.by === 'object' &&
      Object.values(c.by).every((v) => v === null || ['string', 'number', 'boolean'].includes(typeof v))
    )
      return c;
  } catch {
    // below
  }
  throw fieldError('cursor', 'Not a cursor this endpoint gave.');
}

/**
 * Rows a side reads for `n` events: one more, which says whether the side goes on (its
 * cursor is null when it ended, even on a full page). It also keeps DuckDB's top-N off its
 * late materialization (used up to 50 rows), whose fetch of the rows found reads them
 * again without the window: ± 50 over 10 M events, 47 → 23 ms per context's sides.
 */
export const sideRows = (n: number) => (n === 0 ? 0 : n + 1);

/** A side's events (nearest first, `n` at most) and the cursor past them, null when it ended. */
export function sidePage(
  side: Side,
  found: readonly StoredEvent[],
  n: number,
  by: Cursor['by'],
): { events: StoredEvent[]; cursor: string | null } {
  const events = found.slice(0, n);
  if (found.length <= n) return { events, cursor: null };
  const edge = events[events.length - 1] as StoredEvent;
  return {
    events,
    cursor: encodeCursor({ side, ts: edge.ts, stored_at: edge.stored_at, ev_id: edge.ev_id, by }),
  };
}

/** The first window tried around the anchor (ms): ten minutes, at least. */
const FIRST_WINDOW_MS = 600_000;
/**
 * Events the first window is widened to hold, by the store's per-hour estimate: a read's
 * cost is mostly its own (planning, the rows it returns), scanning 100,000 more events for
 * the source's values adds little, and on a store of few events an hour ten minutes hold
 * too few of a source's events (1 M events a day: ~7 of the 51 a side reads, for a source
 * logging 1,000 a day), which then costs a second read.
 */
export const FIRST_WINDOW_EVENTS = 100_000;

/**
 * The first window for one side (ms): ten minutes, doubled while the store holds fewer
 * than `FIRST_WINDOW_EVENTS` events in it (`estimate`: the store's per-hour estimate)
 * and it does not yet cover the store.
 */
export function firstWindow(
  estimate: (fromMs: number, toMs: number) => number,
  side: Side,
  at: number,
  span: { oldest: number; newest: number },
): number {
  let w = FIRST_WINDOW_MS;
  for (;;) {
    const { window, covers } = windowOf(side, at, w, span);
    const [from, to] = side === 'before' ? [window.oldest, at + 1] : [at, window.newest + 1];
    if (covers || estimate(from, to) >= FIRST_WINDOW_EVENTS) return w;
    w *= 2;
  }
}

/** One side's window of `w` ms from the anchor within the store's span, and whether it covers that side of it. */
function windowOf(side: Side, at: number, w: number, span: { oldest: number; newest: number }) {
  const window =
    side === 'before'
      ? { oldest: Math.max(span.oldest, at - w), newest: span.newest }
      : { oldest: span.oldest, newest: Math.min(span.newest, at + w) };
  const covers = side === 'before' ? window.oldest === span.oldest : window.newest === span.newest;
  return { window, covers };
}
/** Windows tried before the rest of the store is read at once. */
const MAX_WINDOWS = 4;

/**
 * One side's `n` nearest events: searched in a window of `first` from the anchor (ten
 * minutes, or as `firstWindow` widens it on a store of few events an hour), then
 * in windows sized from what the last one held (a source that logged k of the n events in
 * w is read next over about w·n/k, with a margin), until a window holds `n` or covers the
 * store. A window that holds none of the source's events sends the next read to the whole
 * store at once: the word index keeps that read to the blocks that hold the source (or,
 * where those are many, the store scans for the source's values, which DuckDB tests
 * inside its scan), cheap for a source rare enough to leave its first window empty. A busy
 * source costs one narrow read; one that logs once an hour, two. (An hour first, with 24
 * windows after an empty one, measured p50 50 / p95 68 ms over 10 M events; this, 31 /
 * 53, and 20 / 39 with the word index's reads costed and rows stored by source.)
 */
export async function nearest(
  run: (span: { oldest: number; newest: number }) => Promise<{ events: StoredEvent[] }>,
  side: Side,
  at: number,
  span: { oldest: number; newest: number },
  n: number,
  first = FIRST_WINDOW_MS,
): Promise<StoredEvent[]> {
  let w = first;
  for (let tries = 0; tries < MAX_WINDOWS; tries++) {
    const { window, covers } = windowOf(side, at, w, span);
    const found = (await run(window)).events;
    if (found.length >= n || covers) return found;
    if (found.length === 0) break;
    w = Math.max(2 * w, Math.ceil((w * n * 1.5) / found.length));
  }
  return (await run(span)).events;
}
