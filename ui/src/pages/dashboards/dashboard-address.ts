/**
 * A dashboard's address and where its values lead: the time range the dashboard shows
 * (none: each widget its own; else a preset, `range=`, or `from`/`to` in Unix seconds as
 * on the search page, so a link keeps it), the range a widget's query is of, and the
 * search page's address of the events behind a value (the widget's query plus
 * `field:"value"`) or a time bucket. Pure functions.
 */
import { isPreset } from '../../format.js';
import { addTerm, fieldName, filterTerm, tokenize } from '../search/query.js';
import { EMPTY_VIEW, viewPath } from '../search/search-url.js';
import { DEFAULT_RANGE, type RangeSel, rangeFromParams } from '../search/time-range.js';

/** A query's `time_range` (docs/api/queries.md). */
export type TimeRange = { ts_from: number; ts_to: number } | { preset: string };

/** The range an address names for every widget, or null when it names none (each widget's own). */
export function rangeOfAddress(params: URLSearchParams): RangeSel | null {
  const range = rangeFromParams(params);
  if (range.kind === 'absolute') return range;
  return isPreset(params.get('range')) ? range : null;
}

/** The address of dashboard `id` showing `range` (null: each widget's own). */
export function dashboardPath(id: number, range: RangeSel | null): string {
  const params = new URLSearchParams();
  if (range?.kind === 'preset') params.set('range', range.preset);
  if (range?.kind === 'absolute') {
    params.set('from', String(range.from));
    params.set('to', String(range.to));
  }
  const qs = params.toString();
  return qs ? `/dashboards/${id}?${qs}` : `/dashboards/${id}`;
}

/** A range as a query's `time_range`. */
export const asTimeRange = (range: RangeSel): TimeRange =>
  range.kind === 'preset' ? { preset: range.preset } : { ts_from: range.from, ts_to: range.to };

const UNIT_S = { minutes: 60, hours: 3600, days: 86_400 } as const;

/**
 * A query's `time_range` as the search page's range: a preset it lists as that preset,
 * another (`last_90_minutes`) or a window as the absolute window it is now, whole seconds.
 */
export function rangeOfQuery(timeRange: unknown, nowMs: number): RangeSel {
  const t = (timeRange ?? {}) as { preset?: unknown; ts_from?: unknown; ts_to?: unknown };
  if (typeof t.ts_from === 'number' && typeof t.ts_to === 'number')
    return { kind: 'absolute', from: Math.floor(t.ts_from), to: Math.max(Math.ceil(t.ts_to), 1) };
  if (typeof t.preset !== 'string') return DEFAULT_RANGE;
  if (isPreset(t.preset)) return { kind: 'preset', preset: t.preset };
  const m = /^last_(\d{1,6})_(minutes|hours|days)$/.exec(t.preset);
  if (!m) return DEFAULT_RANGE;
  const to = Math.floor(nowMs / 1000) + 1;
  return { kind: 'absolute', from: to - Number(m[1]) * UNIT_S[m[2] as keyof typeof UNIT_S], to };
}

/** Where a widget's values lead: the search page's address of the events behind them. */
export interface Drill {
  /** The events with these field values (null, undefined or '': without the field). */
  values(filter: Readonly<Record<string, unknown>>): string;
  /** The events of `[from, to)` (Unix seconds; a time bucket). */
  span(from: number, to: number): string;
}

/** The term selecting events whose `field` is `value`; a missing value selects events without the field. */
export function valueTerm(field: string, value: unknown): string {
  if (value === null || value === undefined || value === '') return `-_exists_:${fieldName(field)}`;
  const text = typeof value === 'object' ? JSON.stringify(value) : String(value);
  return filterTerm(field, text, { numeric: typeof value === 'number' });
}

/**
 * `query` narrowed by `terms`: in the part before its pipes, so a query with pipes keeps
 * them (the search page shows it as a table, as the widget does).
 */
export function narrowed(query: string, terms: readonly string[]): string {
  const pipe = tokenize(query).find((t) => t.text === '|' && t.type === 'operator');
  const head = pipe ? query.slice(0, pipe.from) : query;
  const tail = pipe ? ` ${query.slice(pipe.from).trim()}` : '';
  return terms.reduce(addTerm, head.trim()) + tail;
}

/**
 * Where the values of a widget with query params `params` lead: its query text narrowed,
 * in the dashboard's range (`range`) or else the widget's own.
 */
export function drillOf(
  params: Readonly<Record<string, unknown>>,
  range: RangeSel | null,
  nowMs: number,
): Drill {
  const query = typeof params.query === 'string' ? params.query : '';
  const shown = range ?? rangeOfQuery(params.time_range, nowMs);
  return {
    values: (filter) =>
      viewPath({
        ...EMPTY_VIEW,
        query: narrowed(
          query,
          Object.entries(filter).map(([field, value]) => valueTerm(field, value)),
        ),
        range: shown,
      }),
    span: (from, to) =>
      viewPath({
        ...EMPTY_VIEW,
        query,
        range: { kind: 'absolute', from: Math.floor(from), to: Math.ceil(to) },
      }),
  };
}
