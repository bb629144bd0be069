/**
 * How an MCP answer differs from the REST one (docs/mcp.md): times as ISO 8601 UTC with
 * milliseconds, events without `raw` and without null values, strings cut at
 * MAX_STRING characters (`cut_events` names the events holding one), and the whole
 * answer within MAX_ANSWER_BYTES of compact JSON, whole items left out from the end.
 */

/** Longest string value an answer holds; a longer one is cut to its first this many characters. */
export const MAX_STRING = 2000;
/** Most bytes of UTF-8 an answer's `structuredContent` takes as compact JSON. */
export const MAX_ANSWER_BYTES = 262_144;

/** The event fields the REST API gives as Unix seconds. */
const EVENT_TIMES = new Set(['ts', 'received_at', 'stored_at']);

/** Unix seconds (with milliseconds) → `"2026-11-27T05:53:18.782Z"`; anything else as it is. */
export function iso(seconds: unknown): unknown {
  if (typeof seconds !== 'number' || !Number.isFinite(seconds)) return seconds;
  const date = new Date(Math.round(seconds * 1000));
  return Number.isNaN(date.getTime()) ? seconds : date.toISOString();
}

/** Cuts what one answer holds, remembering whether anything was cut. */
export class Cutter {
  cut = false;

  /** A string cut to MAX_STRING characters, never splitting a surrogate pair. */
  text(value: string): string {
    if (value.length <= MAX_STRING) return value;
    this.cut = true;
    const end = /[\uD800-\uDBFF]/.test(value.charAt(MAX_STRING - 1)) ? MAX_STRING - 1 : MAX_STRING;
    return value.slice(0, end);
  }

  /** Every string inside a value (arrays and objects walked), cut. */
  deep(value: unknown): unknown {
    if (typeof value === 'string') return this.text(value);
    if (Array.isArray(value)) return value.map((v) => this.deep(v));
    if (value !== null && typeof value === 'object') {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value)) defineKey(out, k, this.deep(v));
      return out;
    }
    return value;
  }
}

/**
 * Sets a key as own data even when it is `__proto__` (an ingested field may be named so);
 * any other by assignment, which keeps the object in V8's fast mode (defining every key
 * made each event a dictionary, slower to read and to serialize).
 */
function defineKey(out: Record<string, unknown>, key: string, value: unknown) {
  if (key === '__proto__')
    Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  else out[key] = value;
}

/**
 * Shapes events: times ISO, `raw` and null values left out, strings cut. `cutEvents`
 * collects the ids of the events that had a value cut.
 */
export function shapeEvents(events: readonly Record<string, unknown>[], cutEvents: string[]) {
  return events.map((e) => shapeEvent(e, cutEvents));
}

export function shapeEvent(e: Record<string, unknown>, cutEvents: string[]): Record<string, unknown> {
  const cutter = new Cutter();
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(e)) {
    if (value === null || value === undefined || key === 'raw') continue;
    defineKey(out, key, EVENT_TIMES.has(key) ? iso(value) : cutter.deep(value));
  }
  if (cutter.cut && typeof e.ev_id === 'string' && !cutEvents.includes(e.ev_id)) cutEvents.push(e.ev_id);
  return out;
}

/** The size of a value as compact JSON in UTF-8. */
export const jsonBytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value), 'utf8');

/**
 * Leaves whole items out of an answer until it fits MAX_ANSWER_BYTES: `build(kept)` makes
 * the answer from the items kept (its counts and flags from them), `next(kept)` says which
 * item goes next (default the last). Returns the answer and whether anything was left out.
 */
export function fitToCap<T>(
  items: readonly T[],
  build: (kept: readonly T[], dropped: boolean) => Record<string, unknown>,
  next: (kept: readonly T[]) => number = (kept) => kept.length - 1,
): { answer: Record<string, unknown>; dropped: boolean } {
  let answer = build(items, false);
  let size = jsonBytes(answer);
  if (size <= MAX_ANSWER_BYTES) return { answer, dropped: false };
  const kept = [...items];
  // Each item's share of the JSON (with its comma), taken off until the rest fits; the
  // answer is then built again and measured, as its counts changed.
  const sizes = kept.map((item) => jsonBytes(item) + 1);
  while (kept.length > 0) {
    while (kept.length > 0 && size > MAX_ANSWER_BYTES) {
      const i = next(kept);
      size -= sizes[i] ?? 0;
      kept.splice(i, 1);
      sizes.splice(i, 1);
    }
    answer = build(kept, true);
    size = jsonBytes(answer);
    if (size <= MAX_ANSWER_BYTES) break;
  }
  return { answer, dropped: true };
}
