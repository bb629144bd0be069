/**
 * What a report says about one widget (or the query of a query report): the lines that
 * state its query and time range, and the table of what the widget shows, built from the
 * query's presented results. A Search's rows come from the event store instead (see
 * reports-service.ts); everything here is pure, so it is tested without a store.
 */

import { metricKey } from '../../event-store/query-plan.js';
import { countText, jsonText, percentText } from '../../export/cells.js';
import type { ExportColumn } from '../../export/renderer.js';
import { zonedTime } from '../../export/time-format.js';
import { presetNamed } from '../../shared/time-presets.js';
import { intervalSeconds, stepText } from './report-charts.js';
import { metricShows, metricTable } from './report-metric.js';

/** A time range as a query's params hold it. */
type TimeRange = { ts_from: number; ts_to: number } | { preset: string };

/** Params every query type has, with the type-specific ones a report reads. */
export interface ReportParams {
  time_range?: TimeRange;
  query?: string;
  filter?: unknown[];
  sort?: string[];
  page_size?: number;
  fields?: string[];
  field?: string;
  n?: number;
  group_by?: string[];
  metrics?: Array<{ op: string; field?: string }>;
  interval?: string;
  split_by?: string;
}

export interface Window {
  fromMs: number;
  toMs: number;
}

/** A table of a widget held in memory: it is never more than a few hundred rows. */
export interface WidgetTable {
  columns: ExportColumn[];
  rows: Array<Record<string, unknown>>;
  footnotes: string[];
}

const pad = (n: number) => String(n).padStart(2, '0');

/** `ms` as "YYYY-MM-DD HH:mm" on the wall clock of `tz` (24-hour). */
export function wallText(ms: number, tz: string): string {
  const d = new Date(zonedTime(ms / 1000, tz).wallMs);
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}`;
}

const presetWords = (preset: string) => preset.replace(/_/g, ' ');

/** "last 24 hours: 2026-11-21 19:10 to 2026-11-22 19:10 (Asia/Kolkata)". */
export function timeRangeText(range: TimeRange | undefined, w: Window, tz: string): string {
  const from = wallText(w.fromMs, tz);
  const to = wallText(w.toMs, tz);
  const span = `${from} to ${to.slice(0, 10) === from.slice(0, 10) ? to.slice(11) : to} (${tz})`;
  if (range && 'preset' in range) {
    const utcDay = range.preset === 'today' || range.preset === 'yesterday' ? ', a UTC day' : '';
    return `${presetWords(range.preset)}${utcDay}: ${span}`;
  }
  return span;
}

const UNIT_LETTER: Record<string, string> = { minutes: 'm', hours: 'h', days: 'd' };

/**
 * A few characters naming the time range, for xlsx sheet names (no `:` there): "24h",
 * "7d", "today", or the dates, "11-20 17.30-18.30" when within a day.
 */
export function periodLabel(range: TimeRange | undefined, w: Window, tz: string): string {
  if (range && 'preset' in range) {
    const named = presetNamed(range.preset);
    if (named) return named.short;
    const m = /^last_(\d+)_(minutes|hours|days)$/.exec(range.preset);
    if (m) return `${m[1]}${UNIT_LETTER[m[2] as string]}`;
    return presetWords(range.preset);
  }
  const from = wallText(w.fromMs, tz);
  const to = wallText(w.toMs, tz);
  const hm = (s: string) => s.slice(11).replace(':', '.');
  if (from.slice(0, 10) === to.slice(0, 10)) return `${from.slice(5, 10)} ${hm(from)}-${hm(to)}`;
  return `${from.slice(5, 10)} to ${to.slice(5, 10)}`;
}

/** The events a query looks at: its query string and filter conditions, or "all events". */
export function queryText(p: ReportParams): string {
  const parts: string[] = [];
  if (p.query?.trim()) parts.push(p.query.trim());
  if (p.filter?.length) parts.push(`filter ${jsonText(p.filter)}`);
  return parts.length ? parts.join(' AND ') : 'all events';
}

function sortText(sort: string[] | undefined): string {
  const s = sort ?? ['-ts'];
  if (s.length === 1 && s[0] === '-ts') return 'newest first';
  if (s.length === 1 && s[0] === 'ts') return 'oldest first';
  return `sorted by ${s.map((t) => (t.startsWith('-') ? `${t.slice(1)} (descending)` : t)).join(', ')}`;
}

const OP_TITLES: Record<string, string> = {
  count_distinct: 'distinct',
  avg: 'average',
  p50: 'median',
};

/** The column title of a Summary metric: "events", "sum of bytes", "average of bytes". */
export function metricTitle(m: { op: string; field?: string }): string {
  if (m.op === 'count' && !m.field) return 'events';
  const op = OP_TITLES[m.op] ?? m.op;
  return m.field ? `${op} of ${m.field}` : op;
}

/** What the widget shows, in a few words: "The 10 most frequent values of host". */
export function showsText(type: string, p: ReportParams, results?: unknown): string {
  switch (type) {
    case 'Search':
      return `Events${p.fields?.length ? ` (${p.fields.join(', ')})` : ''}, ${sortText(p.sort)}`;
    case 'TopN':
      return `The ${p.n ?? 10} most frequent values of ${p.field}`;
    case 'LastN':
      return `The ${p.n ?? 10} most recently seen values of ${p.field}`;
    case 'Summary': {
      const metrics = (p.metrics ?? [{ op: 'count' }]).map(metricTitle).join(', ');
      return `${metrics}${p.group_by?.length ? ` by ${p.group_by.join(', ')}` : ''}`;
    }
    case 'Timeline': {
      const label = (results as { interval?: string } | undefined)?.interval ?? p.interval ?? 'auto';
      const seconds = intervalSeconds(label);
      const per = Number.isNaN(seconds) ? label : stepText(seconds);
      const auto = p.interval === 'auto' ? ' (interval auto)' : '';
      return `Events per ${per}${auto}${p.split_by ? `, split by ${p.split_by}` : ''}`;
    }
    case 'Metric':
      return metricShows(results);
    default:
      return type;
  }
}

/** The lines under a widget's title: its query, its time range, what it shows. */
export function widgetNotes(
  type: string,
  p: ReportParams,
  w: Window,
  tz: string,
  results?: unknown,
): string[] {
  return [
    // A Metric query counts what its log metric's own query matches.
    `Query: ${type === 'Metric' ? "the log metric's query" : queryText(p)}`,
    `Time range: ${timeRangeText(p.time_range, w, tz)}`,
    `Shows: ${showsText(type, p, results)}`,
  ];
}

// Metrics such as averages come with a dozen decimals nobody reads.
const round = (v: unknown) =>
  typeof v === 'number' && Number.isFinite(v) && !Number.isInteger(v) ? Math.round(v * 100) / 100 : v;

const valueText = (v: unknown) => (v === null || v === undefined ? '(none)' : v);

type GeoItem = { geo?: { country?: string; country_code?: string } };

/**
 * The country column of items read with GeoIP (a map widget's): each value's country, or
 * "(none)" for one no country holds. Absent when no item carries GeoIP data.
 */
function countryColumn(items: readonly GeoItem[]): {
  columns: ExportColumn[];
  cell: (i: GeoItem) => Record<string, unknown>;
} {
  if (!items.some((i) => i.geo && typeof i.geo === 'object')) return { columns: [], cell: () => ({}) };
  return {
    columns: [{ key: 'country', title: 'country', kind: 'string' }],
    cell: (i) => ({ country: i.geo?.country ?? i.geo?.country_code ?? '(none)' }),
  };
}

function topnTable(r: Record<string, unknown>, p: ReportParams): WidgetTable {
  const items = (r.items ?? []) as Array<{ value: unknown; count: number; share: number } & GeoItem>;
  const total = Number(r.total ?? 0);
  const other = Number(r.other ?? 0);
  const footnotes = [
    `${countText(total)} events have a value of ${p.field}` +
      (other > 0
        ? `; the values not listed account for ${countText(other)} (${percentText(other / total)}).`
        : '.'),
  ];
  const country = countryColumn(items);
  return {
    columns: [
      { key: 'value', title: p.field ?? 'value', kind: 'string' },
      ...country.columns,
      { key: 'count', title: 'events', kind: 'number' },
      { key: 'share', title: 'share', kind: 'percent' },
    ],
    rows: items.map((i) => ({
      value: valueText(i.value),
      ...country.cell(i),
      count: i.count,
      share: i.share,
    })),
    footnotes,
  };
}

function lastnTable(r: Record<string, unknown>, p: ReportParams): WidgetTable {
  const items = (r.items ?? []) as Array<Record<string, unknown> & GeoItem>;
  const country = countryColumn(items);
  return {
    columns: [
      { key: 'value', title: p.field ?? 'value', kind: 'string' },
      ...country.columns,
      { key: 'last_seen', title: 'last seen', kind: 'time' },
      { key: 'first_seen', title: 'first seen', kind: 'time' },
      { key: 'count', title: 'events', kind: 'number' },
    ],
    rows: items.map((i) => ({ ...i, value: valueText(i.value), ...country.cell(i) })),
    footnotes: [],
  };
}

function patternsTable(r: Record<string, unknown>): WidgetTable {
  const patterns = (r.patterns ?? []) as Array<Record<string, unknown>>;
  return {
    columns: [
      { key: 'template', title: 'pattern', kind: 'string' },
      { key: 'count', title: 'events', kind: 'number' },
      { key: 'share', title: 'share', kind: 'number' },
      { key: 'last_seen', title: 'last seen', kind: 'time' },
      { key: 'new', title: 'new', kind: 'string' },
    ],
    rows: patterns.map((p) => ({ ...p, new: p.new ? 'new' : '' })),
    footnotes: [],
  };
}

/** Explain's changes: what changed (a template or `field = value`), its direction, counts and ratio. */
function explainTable(r: Record<string, unknown>): WidgetTable {
  const changes = (r.changes ?? []) as Array<Record<string, unknown>>;
  return {
    columns: [
      { key: 'what', title: 'change', kind: 'string' },
      { key: 'direction', title: 'direction', kind: 'string' },
      { key: 'focus_count', title: 'events', kind: 'number' },
      { key: 'baseline_count', title: 'before', kind: 'number' },
      { key: 'ratio', title: 'ratio', kind: 'number' },
      { key: 'score', title: 'score', kind: 'number' },
    ],
    rows: changes.map((c) => ({
      ...c,
      what: c.kind === 'pattern' ? c.template : `${String(c.field)} = ${String(c.value)}`,
    })),
    footnotes: r.changes && changes.length === 0 ? ['No significant change.'] : [],
  };
}

/** A Table's columns and rows as they came (times as times), and a note when rows were left out. */
function tableTable(r: Record<string, unknown>): WidgetTable {
  const columns = (r.columns ?? []) as Array<{ name: string; type: string }>;
  const rows = (r.rows ?? []) as unknown[][];
  const total = Number(r.total_rows ?? rows.length);
  return {
    columns: columns.map((c, i) => ({
      key: `c${i}`,
      title: c.name,
      kind: c.type === 'time' ? 'time' : c.type === 'number' ? 'number' : 'string',
    })),
    rows: rows.map((row) => Object.fromEntries(row.map((v, i) => [`c${i}`, v]))),
    footnotes: r.truncated ? [`The first ${countText(rows.length)} of ${countText(total)} rows.`] : [],
  };
}

function summaryTable(r: Record<string, unknown>, p: ReportParams): WidgetTable {
  const totals = (r.totals ?? {}) as Record<string, number | null>;
  const details = (r.details ?? []) as Array<Record<string, unknown> & { group: Record<string, unknown> }>;
  const groupBy = p.group_by ?? [];
  const metrics = p.metrics ?? [{ op: 'count' }];
  const count = Number(totals.count ?? 0);
  const share = groupBy.length > 0 && count > 0;
  const columns: ExportColumn[] = [
    ...groupBy.map((g) => ({ key: `group.${g}`, title: g, kind: 'string' as const })),
    ...metrics.map((m) => ({ key: metricKey(m), title: metricTitle(m), kind: 'number' as const })),
    ...(share ? [{ key: 'share', title: 'share', kind: 'percent' as const }] : []),
  ];
  const metricCells = (values: Record<string, unknown>) =>
    Object.fromEntries(metrics.map((m) => [metricKey(m), round(values[metricKey(m)])]));
  if (groupBy.length === 0) return { columns, rows: [metricCells(totals)], footnotes: [] };
  const rows = details.map((d) => ({
    ...Object.fromEntries(groupBy.map((g) => [`group.${g}`, valueText(d.group[g])])),
    ...metricCells(d),
    ...(share ? { share: Number(d.count ?? 0) / count } : {}),
  }));
  const all = metrics.map((m) => `${metricTitle(m)} ${countText(Number(round(totals[metricKey(m)] ?? 0)))}`);
  const onlyCount = metrics.length === 1 && metricKey(metrics[0] as { op: string }) === 'count';
  return {
    columns,
    rows,
    footnotes: [onlyCount ? `${countText(count)} matching events in all.` : `In all: ${all.join(', ')}.`],
  };
}

interface Bucket {
  ts: number;
  count: number;
  series?: Record<string, number>;
}

/**
 * A Timeline in a few rows: per series (or for all events) how many events, their share,
 * the busiest bucket and the average per bucket. The chart above shows the shape.
 */
function timelineTable(r: Record<string, unknown>, p: ReportParams): WidgetTable {
  const buckets = (r.buckets ?? []) as Bucket[];
  const seconds = intervalSeconds(String(r.interval ?? ''));
  const per = Number.isNaN(seconds) ? 'bucket' : stepText(seconds);
  const names = [...new Set(buckets.flatMap((b) => Object.keys(b.series ?? {})))];
  const line = (name: string, value: (b: Bucket) => number, all: number) => {
    let peak: Bucket | undefined;
    let total = 0;
    for (const b of buckets) {
      total += value(b);
      if (peak === undefined || value(b) > value(peak)) peak = b;
    }
    return {
      name,
      events: total,
      ...(names.length ? { share: all > 0 ? total / all : 0 } : {}),
      peak_at: peak && value(peak) > 0 ? peak.ts : null,
      peak: peak ? value(peak) : 0,
      average: buckets.length ? Math.round((total / buckets.length) * 10) / 10 : 0,
    };
  };
  const all = buckets.reduce((n, b) => n + b.count, 0);
  const rows = [line('all events', (b) => b.count, all)];
  const series = names
    .map((s) => line(s, (b) => b.series?.[s] ?? 0, all))
    .sort((a, b) => b.events - a.events);
  rows.push(...series);
  return {
    columns: [
      { key: 'name', title: p.split_by ?? 'series', kind: 'string' },
      { key: 'events', title: 'events', kind: 'number' },
      ...(names.length ? [{ key: 'share', title: 'share', kind: 'percent' as const }] : []),
      { key: 'peak_at', title: `busiest ${per}`, kind: 'time' },
      { key: 'peak', title: `events in the busiest ${per}`, kind: 'number' },
      { key: 'average', title: `average per ${per}`, kind: 'number' },
    ],
    rows,
    footnotes: [],
  };
}

/** The table of a widget other than a Search, from its presented results. */
export function widgetTable(type: string, results: unknown, p: ReportParams): WidgetTable | null {
  const r = (results ?? {}) as Record<string, unknown>;
  switch (type) {
    case 'TopN':
      return topnTable(r, p);
    case 'LastN':
      return lastnTable(r, p);
    case 'Summary':
      return summaryTable(r, p);
    case 'Timeline':
      return timelineTable(r, p);
    case 'Patterns':
      return patternsTable(r);
    case 'Table':
      return tableTable(r);
    case 'Explain':
      return explainTable(r);
    case 'Metric':
      return metricTable(r);
    default:
      return null;
  }
}
