/**
 * Everything the search page shows, as its address holds it (docs/web-ui.md): the query,
 * the time range (a preset, or `from`/`to` in Unix seconds, the same instant in every time
 * zone), the columns and the widths the reader gave them, the sort, the tab (events or
 * patterns), the open event and whether it shows its context, the saved search it came
 * from, and the window explained with its baseline (explain.ts). Reload, Back/Forward and a
 * pasted link restore the page from it. Pure functions.
 */
import { type ColumnWidths, parseWidths, widthsParam } from './columns.js';
import { type Baseline, baselineParam, parseBaseline, parseSpan, type Span, spanParam } from './explain.js';
import { DEFAULT_RANGE, type RangeSel, rangeFromParams, rangeToParams, windowOf } from './time-range.js';

export interface SearchView {
  query: string;
  range: RangeSel;
  /** The columns in order; null: the reader's own (kept in their browser). */
  columns: string[] | null;
  /** Widths of the columns the reader resized (`widths=host:180`); absent: the reader's own. */
  widths?: ColumnWidths;
  /** Sort terms (`-ts`, `host`), the API's. */
  sort: string[];
  /** The page's tab: the events, or their patterns. */
  tab: 'events' | 'patterns';
  /** The open event's id. */
  event: string | null;
  /** The open event shows its context. */
  context: boolean;
  /** The saved search the page was opened from. */
  saved: number | null;
  /** The focus the Explain panel explains (`explain=<from>-<to>`); absent: the panel is closed. */
  explain?: Span | null;
  /** The baseline it is explained against (`baseline=`), with `explain` only. */
  baseline?: Baseline;
}

/** The event field a column shows (`time` is `ts`), for sorting by it. */
const columnField = (column: string): string => (column === 'time' ? 'ts' : column);

export const DEFAULT_SORT: readonly string[] = ['-ts'];

export const EMPTY_VIEW: SearchView = {
  query: '',
  range: DEFAULT_RANGE,
  columns: null,
  sort: [...DEFAULT_SORT],
  tab: 'events',
  event: null,
  context: false,
  saved: null,
};

const NAME = /^[\p{L}\p{N}_.@-]{1,256}$/u;
const list = (raw: string | null, max: number) =>
  raw === null
    ? null
    : [...new Set(raw.split(',').map((s) => s.trim()))]
        .filter((s) => NAME.test(s.replace(/^-/, '')))
        .slice(0, max);

/** The view an address holds; what is missing or malformed is the default. */
export function viewFromParams(params: URLSearchParams): SearchView {
  const columns = list(params.get('cols'), 100);
  const sort = list(params.get('sort'), 10);
  const ev = params.get('ev');
  const event = ev && /^[\w-]{1,64}$/.test(ev) ? ev : null;
  const saved = Number(params.get('saved'));
  const widths = parseWidths(params.get('widths'));
  const explain = parseSpan(params.get('explain'));
  return {
    query: params.get('q') ?? '',
    range: rangeFromParams(params),
    columns: columns?.length ? columns : null,
    sort: sort?.length ? sort : [...DEFAULT_SORT],
    tab: params.get('tab') === 'patterns' ? 'patterns' : 'events',
    event,
    context: event !== null && params.get('context') === '1',
    saved: Number.isInteger(saved) && saved > 0 ? saved : null,
    ...(widths ? { widths } : {}),
    ...(explain ? { explain, baseline: parseBaseline(params.get('baseline')) } : {}),
  };
}

/** The address of a view (defaults left out, so a plain search stays `/search`). */
export function viewToParams(view: SearchView): URLSearchParams {
  const params = new URLSearchParams();
  if (view.query) params.set('q', view.query);
  rangeToParams(view.range, params);
  if (view.columns) params.set('cols', view.columns.join(','));
  if (view.widths && Object.keys(view.widths).length > 0) params.set('widths', widthsParam(view.widths));
  if (view.sort.join(',') !== DEFAULT_SORT.join(',')) params.set('sort', view.sort.join(','));
  if (view.saved !== null) params.set('saved', String(view.saved));
  if (view.tab === 'patterns') params.set('tab', 'patterns');
  if (view.event) {
    params.set('ev', view.event);
    if (view.context) params.set('context', '1');
  }
  if (view.explain) {
    params.set('explain', spanParam(view.explain));
    params.set('baseline', baselineParam(view.baseline ?? 'previous'));
  }
  return params;
}

/**
 * A view with the columns it shows: its own (a link's, as they are), else `own` (the
 * reader's, kept in their browser). The view names them unless they are the `defaults`
 * and so are the reader's: the address leaves them out then, and names a link's default
 * columns to a reader whose own differ (so a reload shows the same).
 */
export function withShownColumns(
  view: SearchView,
  own: readonly string[],
  defaults: readonly string[],
): { view: SearchView; columns: string[] } {
  const columns = [...(view.columns ?? own)];
  const isDefault = (list: readonly string[]) => list.join(',') === defaults.join(',');
  return { view: { ...view, columns: isDefault(columns) && isDefault(own) ? null : columns }, columns };
}

export const viewPath = (view: SearchView): string => {
  const qs = viewToParams(view).toString();
  return qs ? `/search?${qs}` : '/search';
};

/**
 * A link to hand to a colleague: the view as it is, with its range relative ("the last
 * hour" when they open it) or frozen to the absolute window it covers now, to the second.
 */
export function shareLink(view: SearchView, origin: string, frozen: boolean, nowMs: number): string {
  let range = view.range;
  if (frozen && range.kind === 'preset') {
    const w = windowOf(range, nowMs);
    range = { kind: 'absolute', from: Math.floor(w.ts_from), to: Math.ceil(w.ts_to) };
  }
  return `${origin}${viewPath({ ...view, range })}`;
}

/** The sort a click on a column's header asks for: its field, newest/highest first for time, then flipped. */
export function nextSort(current: readonly string[], column: string): string[] {
  const field = columnField(column);
  const now = current[0];
  if (now === field) return [`-${field}`];
  if (now === `-${field}`) return [field];
  return [field === 'ts' ? '-ts' : field];
}

/** How the results are sorted by a column: 'descending', 'ascending' or none. */
export function sortOf(sort: readonly string[], column: string): 'descending' | 'ascending' | undefined {
  const field = columnField(column);
  if (sort[0] === field) return 'ascending';
  if (sort[0] === `-${field}`) return 'descending';
  return undefined;
}
