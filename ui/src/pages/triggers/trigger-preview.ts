import { tokenize } from '../search/query.js';

/**
 * How often a threshold trigger would have fired over the last 24 h: the matches of its
 * query per time bucket (one Timeline query), replayed second by second as the alert
 * engine judges them (src/features/alerting/threshold.ts and alert-engine.ts; a unit test
 * holds the two equal): the window at second `s` holds the seconds `(s - window, s]`, a
 * crossing fires when the condition starts to hold and again only after it stopped, `lt`
 * and `lte` only once a whole window was watched, and a firing within the cooldown of the
 * last notified one is held back (pure, for that test). History is judged by the events' `ts`; the engine counts
 * an event when it is committed, which for events shipped as they happen is the same.
 */

export type Op = 'gt' | 'gte' | 'lt' | 'lte';

export interface PreviewCondition {
  op: Op;
  value: number;
  window_seconds: number;
  cooldown_seconds: number;
}

/** The matches of a query over `[from, to)` (Unix s): `[second, count]` of the busy seconds. */
export interface History {
  from: number;
  to: number;
  counts: ReadonlyArray<readonly [number, number]>;
}

export interface Preview {
  /** The firings a notification would have gone out for, oldest first. */
  fired: { at: number; count: number }[];
  /** Crossings within the cooldown of the firing before: not notified. */
  heldBack: number;
  /**
   * The window counts along the span, one per column: the most of the column's seconds (for
   * `lt`/`lte` the fewest), null before a whole window was watched.
   */
  columns: (number | null)[];
  /** The most (for `lt`/`lte` the fewest) matches in one window, null when none was judged. */
  extreme: number | null;
}

export const HISTORY_SECONDS = 86_400;
/** The Timeline's bucket: the finest whose 24 h stay within its 50,000 buckets. */
export const RESOLUTION_SECONDS = 2;

export const holds = (op: Op, count: number, value: number): boolean =>
  op === 'gt' ? count > value : op === 'gte' ? count >= value : op === 'lt' ? count < value : count <= value;

/** Replays `history` through the condition, as a trigger made at its start would have judged it. */
export function previewThreshold(history: History, c: PreviewCondition, columnCount = 240): Preview {
  const span = Math.max(0, history.to - history.from);
  const perSecond = new Float64Array(span);
  for (const [s, n] of history.counts) {
    const i = s - history.from;
    if (i >= 0 && i < span) perSecond[i] = (perSecond[i] ?? 0) + n;
  }
  const silence = c.op === 'lt' || c.op === 'lte';
  const w = c.window_seconds;
  const fired: Preview['fired'] = [];
  const columns: (number | null)[] = new Array(columnCount).fill(null);
  let heldBack = 0;
  let count = 0;
  let firing = false;
  let lastNotified: number | null = null;
  let extreme: number | null = null;
  for (let i = 0; i < span; i++) {
    count += perSecond[i] ?? 0;
    if (i >= w) count -= perSecond[i - w] ?? 0;
    // Silence is told only of a window watched whole (the engine's `since`: the trigger's start).
    const watched = !silence || i >= w;
    const now = watched && holds(c.op, count, c.value);
    const at = history.from + i;
    if (now && !firing) {
      firing = true;
      if (lastNotified === null || at - lastNotified >= c.cooldown_seconds) {
        lastNotified = at;
        fired.push({ at, count });
      } else heldBack++;
    } else if (!now && firing) firing = false;
    if (!watched) continue;
    const col = Math.min(columnCount - 1, Math.floor((i * columnCount) / span));
    const prev = columns[col] ?? null;
    columns[col] = prev === null ? count : silence ? Math.min(prev, count) : Math.max(prev, count);
    extreme = extreme === null ? count : silence ? Math.min(extreme, count) : Math.max(extreme, count);
  }
  return { fired, heldBack, columns, extreme };
}

/** The search part of a query (before its first pipe): what a trigger matches. */
export function searchPart(query: string): string {
  const pipe = tokenize(query).find((t) => t.text === '|' && t.type === 'operator');
  return (pipe ? query.slice(0, pipe.from) : query).trim();
}
