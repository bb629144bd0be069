/**
 * The time ranges last applied from the time picker, newest first, kept in the reader's
 * browser (localStorage `logscope.recentRanges`) so the next search offers them again.
 */
import { relativeSpan } from './relative-range.js';
import { type RangeSel, sameRange } from './time-range.js';

const RECENT_KEY = 'logscope.recentRanges';

/** How many are kept. */
export const MAX_RECENT = 5;

const isSeconds = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;

/** A stored entry, if it is a range the page can apply; anything else (edited by hand, an older shape) is dropped. */
function asRange(v: unknown): RangeSel | null {
  if (typeof v !== 'object' || v === null) return null;
  const r = v as Record<string, unknown>;
  if (r.kind === 'preset' && typeof r.preset === 'string') {
    const known = r.preset === 'today' || r.preset === 'yesterday' || relativeSpan(r.preset) !== null;
    return known ? { kind: 'preset', preset: r.preset } : null;
  }
  if (r.kind === 'absolute' && isSeconds(r.from) && isSeconds(r.to) && r.from < r.to)
    return { kind: 'absolute', from: r.from, to: r.to };
  return null;
}

/** The stored list as it reads: valid entries, each once, at most MAX_RECENT. */
export function parseRecent(raw: string | null): RangeSel[] {
  let list: unknown;
  try {
    list = raw === null ? [] : JSON.parse(raw);
  } catch {
    return [];
  }
  if (!Array.isArray(list)) return [];
  const out: RangeSel[] = [];
  for (const item of list) {
    const r = asRange(item);
    if (r && !out.some((o) => sameRange(o, r))) out.push(r);
  }
  return out.slice(0, MAX_RECENT);
}

/** `range` first, then the others without it, at most MAX_RECENT. */
export const withRecent = (list: readonly RangeSel[], range: RangeSel): RangeSel[] =>
  [range, ...list.filter((r) => !sameRange(r, range))].slice(0, MAX_RECENT);

/** Where the list is kept: the browser's localStorage (reading it may throw). */
export interface KeptStrings {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
}

export function loadRecent(storage: () => KeptStrings): RangeSel[] {
  try {
    return parseRecent(storage().getItem(RECENT_KEY));
  } catch {
    return [];
  }
}

/** Records `range` as the last applied; the list as it now is. */
export function rememberRange(storage: () => KeptStrings, range: RangeSel): RangeSel[] {
  const next = withRecent(loadRecent(storage), range);
  try {
    storage().setItem(RECENT_KEY, JSON.stringify(next));
  } catch {
    // Storage may be unavailable: the list lasts as long as the page.
  }
  return next;
}
