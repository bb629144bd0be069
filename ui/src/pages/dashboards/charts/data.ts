/**
 * A widget's query result (GenericQuery of Search, TopN, LastN, Timeline, Summary, Patterns
 * or Table) in the shapes the charts draw: category/value points, rows and columns, and a
 * Table's results recast for the kind chosen. Shared by the chart kinds of this folder.
 */

import { formatCount, formatTs } from '../../../format';
import { asBuckets, asItems, asTotals, isTableResults } from '../table-data';

export interface QueryData {
  query_id?: string;
  type?: string;
  status?: string;
  error?: string | null;
  results?: Record<string, unknown>;
}

export interface Point {
  label: string;
  value: number;
  /** The field values the point counts (its events, for a link to Search). */
  filter?: Record<string, unknown>;
}

export interface Bucket {
  ts: number;
  count: number;
  series?: Record<string, number>;
}

export interface Table {
  columns: string[];
  rows: unknown[][];
  /** The field each column's values are of (null: none, as a count or a time): for links to Search. */
  fieldOf?: Array<string | null>;
  /** The values as they are, where `rows` shows them formatted. */
  raw?: unknown[][];
}

export const asNumber = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

export const cellText = (v: unknown): string => {
  if (v === null || v === undefined) return '';
  if (typeof v === 'number') return Number.isInteger(v) ? formatCount(v) : String(Math.round(v * 100) / 100);
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
};

const label = (v: unknown) => (v === null || v === undefined || v === '' ? '(none)' : String(v));

/**
 * Category/value pairs: TopN and LastN items (of `field`), Summary groups, Timeline
 * buckets, Patterns.
 */
export function points(data: QueryData, field?: string): Point[] {
  const r = data.results ?? {};
  if (Array.isArray(r.patterns))
    return (r.patterns as Array<{ template: string; count: unknown }>).map((p) => ({
      label: p.template || '(empty)',
      value: asNumber(p.count),
    }));
  if (Array.isArray(r.items))
    return (r.items as Array<{ value: unknown; count: unknown }>).map((i) => ({
      label: label(i.value),
      value: asNumber(i.count),
      ...(field ? { filter: { [field]: i.value } } : {}),
    }));
  if (Array.isArray(r.details))
    return (r.details as Array<{ group?: Record<string, unknown>; count?: unknown }>).map((d) => ({
      label:
        Object.values(d.group ?? {})
          .map(label)
          .join(' · ') || 'all',
      value: asNumber(d.count),
      ...(d.group && Object.keys(d.group).length ? { filter: d.group } : {}),
    }));
  if (Array.isArray(r.buckets))
    return (r.buckets as Bucket[]).map((b) => ({ label: formatTs(b.ts).slice(0, 16), value: b.count }));
  return [];
}

/** Rows and columns of any result (`field`: the field of TopN and LastN items). */
export function table(data: QueryData, fields?: unknown, field?: string): Table {
  const r = data.results ?? {};
  if (isTableResults(r))
    return {
      columns: r.columns.map((c) => c.name),
      rows: r.rows.map((row) =>
        row.map((v, i) => (r.columns[i]?.type === 'time' && typeof v === 'number' ? formatTs(v) : v)),
      ),
    };
  if (Array.isArray(r.patterns)) {
    const patterns = r.patterns as Array<{ template: string; count: number; share: number; new: boolean }>;
    return {
      columns: ['pattern', 'count', 'share', 'new'],
      rows: patterns.map((p) => [
        p.template || '(empty)',
        p.count,
        `${(asNumber(p.share) * 100).toFixed(1)} %`,
        p.new ? 'new' : '',
      ]),
    };
  }
  if (Array.isArray(r.events)) {
    const events = r.events as Array<Record<string, unknown>>;
    const cols =
      Array.isArray(fields) && fields.length
        ? (fields as string[])
        : ['ts', ...Object.keys(events[0] ?? {}).filter((k) => k !== 'ts' && k !== 'ev_id')].slice(0, 6);
    return {
      columns: cols,
      rows: events.map((e) => cols.map((c) => (c === 'ts' ? formatTs(e.ts) : e[c]))),
      fieldOf: cols.map((c) => (c === 'ts' ? null : c)),
      raw: events.map((e) => cols.map((c) => e[c])),
    };
  }
  if (Array.isArray(r.details) && (r.details as unknown[]).length) {
    const details = r.details as Array<Record<string, unknown> & { group?: Record<string, unknown> }>;
    const groupCols = Object.keys(details[0]?.group ?? {});
    const metricCols = Object.keys(details[0] ?? {}).filter((k) => k !== 'group');
    return {
      columns: [...groupCols, ...metricCols],
      rows: details.map((d) => [...groupCols.map((g) => d.group?.[g]), ...metricCols.map((m) => d[m])]),
      fieldOf: [...groupCols, ...metricCols.map(() => null)],
    };
  }
  if (r.totals && typeof r.totals === 'object') {
    const totals = r.totals as Record<string, unknown>;
    return { columns: ['metric', 'value'], rows: Object.entries(totals).map(([k, v]) => [k, v]) };
  }
  if (Array.isArray(r.buckets)) {
    const buckets = r.buckets as Bucket[];
    return { columns: ['time', 'count'], rows: buckets.map((b) => [formatTs(b.ts).slice(0, 16), b.count]) };
  }
  if (Array.isArray(r.items)) {
    const items = r.items as Array<Record<string, unknown>>;
    const hasShare = items.some((i) => typeof i.share === 'number');
    return {
      columns: hasShare ? ['value', 'count', 'share'] : ['value', 'count'],
      rows: items.map((i) =>
        hasShare
          ? [label(i.value), i.count, `${(asNumber(i.share) * 100).toFixed(1)} %`]
          : [label(i.value), i.count],
      ),
      fieldOf: [field ?? null, null, null],
      raw: items.map((i) => [i.value]),
    };
  }
  return { columns: [], rows: [] };
}

/**
 * A Table's results (a query with pipes) as the results a visualization of `kind` reads:
 * a time series, category values or totals, over the `value` column (table-data.ts).
 */
export function fromTable(data: QueryData, kind: string, value: unknown): QueryData {
  const t = data.results;
  if (!isTableResults(t)) return data;
  const buckets = kind === 'line' || kind === 'area' || kind === 'bar' ? asBuckets(t, value) : null;
  if (buckets) return { ...data, results: { buckets } };
  if (kind === 'number') return { ...data, results: { totals: asTotals(t, value) } };
  if (kind === 'table') return data;
  return { ...data, results: { items: asItems(t, value) } };
}
