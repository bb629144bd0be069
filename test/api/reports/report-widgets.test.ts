import { describe, expect, it } from 'vitest';
import {
  chartFor,
  chartStep,
  MAX_CHART_BUCKETS,
  timelineChart,
} from '../../../src/features/reports/report-charts.js';
import {
  periodLabel,
  timeRangeText,
  widgetNotes,
  widgetTable,
} from '../../../src/features/reports/report-widgets.js';

const MIN = 60;
const HOUR = 3600;
/** 2026-11-20 00:00 UTC (05:30 in Kolkata). */
const T0 = Date.UTC(2026, 10, 20) / 1000;

/** Buckets of `step` seconds from `from` (s) for `count` buckets, `perBucket` events each. */
function buckets(from: number, step: number, count: number, perBucket = 3, series?: Record<string, number>) {
  return Array.from({ length: count }, (_, i) => ({
    ts: from + i * step,
    count: perBucket,
    ...(series ? { series } : {}),
  }));
}

describe('a timeline in a report', () => {
  it('adds fine buckets up to at most MAX_CHART_BUCKETS clock-round ones', () => {
    expect(chartStep(60, 24 * HOUR)).toBe(15 * MIN);
    expect(chartStep(60, HOUR)).toBe(60);
    expect(chartStep(300, 7 * 86_400)).toBe(2 * HOUR);
    expect(chartStep(7, 7 * 1000)).toBe(7 * Math.ceil(1000 / MAX_CHART_BUCKETS));
  });

  it('leaves out the buckets the time range covers only in part, and says so', () => {
    // The last 24 hours at 10:00:30: 1,440 one-minute buckets, the first and last partly outside.
    const from = T0 + 10 * HOUR + 30;
    const window = { fromMs: from * 1000, toMs: (from + 24 * HOUR) * 1000 };
    const r = { interval: '1m', buckets: buckets(T0 + 10 * HOUR, MIN, 1441) };
    const c = timelineChart(r, 'Event rate', 'line', { timezone: 'UTC', window });
    expect(c).not.toBeNull();
    const points = c?.chart.points ?? [];
    // 96 quarter-hours, less the first and the last (each holds a partial minute).
    expect(points).toHaveLength(95);
    expect(points[0]?.x).toBe(T0 + 10 * HOUR + 15 * MIN);
    expect(points.every((p) => p.y === 45)).toBe(true);
    expect(c?.chart).toMatchObject({ step: 900, yTitle: 'events per 15 min', timezone: 'UTC', kind: 'line' });
    expect(c?.notes.join(' ')).toContain('adds the minute buckets up to 15 min buckets');
    expect(c?.notes.join(' ')).toContain('leaves out the buckets at the ends');

    // Aligned on both ends: every bucket is whole, none is left out.
    const aligned = timelineChart({ interval: '1m', buckets: buckets(T0, MIN, 1440) }, 'Event rate', 'bar', {
      timezone: 'UTC',
      window: { fromMs: T0 * 1000, toMs: (T0 + 24 * HOUR) * 1000 },
    });
    expect(aligned?.chart.points).toHaveLength(96);
    expect(aligned?.notes.join(' ')).not.toContain('leaves out');
  });

  it('aligns its buckets on the wall clock of the report zone', () => {
    // Five days of minutes: hour buckets, on the hour in Kolkata (half past in UTC).
    const window = { fromMs: T0 * 1000, toMs: (T0 + 5 * 86_400) * 1000 };
    const c = timelineChart({ interval: '1m', buckets: buckets(T0, MIN, 5 * 1440) }, 'x', 'area', {
      timezone: 'Asia/Kolkata',
      window,
    });
    const points = c?.chart.points ?? [];
    expect(c?.chart.step).toBe(HOUR);
    expect(points.length).toBeGreaterThan(100);
    expect(points.every((p) => (Number(p.x) - T0) % HOUR === 30 * MIN)).toBe(true);
    expect(points.every((p) => p.y === 180)).toBe(true);
  });

  it('keeps series apart', () => {
    const window = { fromMs: T0 * 1000, toMs: (T0 + HOUR) * 1000 };
    const c = chartFor(
      'Timeline',
      { interval: '1m', buckets: buckets(T0, MIN, 60, 5, { '200': 4, '500': 1 }) },
      'Requests by status',
      'area',
      { timezone: 'UTC', window },
    );
    expect(c?.chart.points).toHaveLength(120);
    expect(new Set(c?.chart.points.map((p) => p.series))).toEqual(new Set(['200', '500']));
  });

  it('is a table of a few rows: all events and each series, with shares', () => {
    const r = {
      interval: '1m',
      buckets: [
        { ts: T0, count: 10, series: { error: 2, info: 8 } },
        { ts: T0 + MIN, count: 30, series: { error: 20, info: 10 } },
      ],
    };
    const t = widgetTable('Timeline', r, { split_by: 'severity' });
    expect(t?.columns.map((c) => [c.title, c.kind])).toEqual([
      ['severity', 'string'],
      ['events', 'number'],
      ['share', 'percent'],
      ['busiest minute', 'time'],
      ['events in the busiest minute', 'number'],
      ['average per minute', 'number'],
    ]);
    expect(t?.rows).toEqual([
      { name: 'all events', events: 40, share: 1, peak_at: T0 + MIN, peak: 30, average: 20 },
      { name: 'error', events: 22, share: 0.55, peak_at: T0 + MIN, peak: 20, average: 11 },
      { name: 'info', events: 18, share: 0.45, peak_at: T0 + MIN, peak: 10, average: 9 },
    ]);
  });
});

describe('a TopN, LastN or Summary in a report', () => {
  const topn = {
    total: 1000,
    other: 100,
    items: [
      { value: 'web-1', count: 423, share: 0.423 },
      { value: 'web-2', count: 377, share: 0.377 },
      { value: null, count: 100, share: 0.1 },
    ],
  };

  it('TopN: its n rows, shares as percentages, what the rest adds up to', () => {
    const t = widgetTable('TopN', topn, { field: 'host', n: 3 });
    expect(t?.rows).toHaveLength(3);
    expect(t?.columns.map((c) => c.kind)).toEqual(['string', 'number', 'percent']);
    expect(t?.rows[2]?.value).toBe('(none)');
    expect(t?.footnotes).toEqual([
      '1,000 events have a value of host; the values not listed account for 100 (10.0 %).',
    ]);
  });

  it('TopN as a pie: the values not listed are a slice of their own', () => {
    const pie = chartFor('TopN', topn, 'Hosts', 'pie');
    expect(pie?.chart.points.at(-1)).toEqual({ x: 'other', y: 100, share: 0.1 });
    const bars = chartFor('TopN', topn, 'Hosts', 'bar');
    expect(bars?.chart.points.map((p) => p.x)).toEqual(['web-1', 'web-2', 'null']);
    expect(chartFor('TopN', topn, 'Hosts', 'table')).toBeNull();
  });

  it('Summary: a row per group with its share, the totals under it; without groups one row', () => {
    const r = {
      totals: { count: 200, avg_bytes: 1234.5678 },
      details: [
        { group: { severity: 'info' }, count: 150, avg_bytes: 1000.123 },
        { group: { severity: 'error' }, count: 50, avg_bytes: 2000 },
      ],
    };
    const p = { group_by: ['severity'], metrics: [{ op: 'count' }, { op: 'avg', field: 'bytes' }] };
    const t = widgetTable('Summary', r, p);
    expect(t?.columns.map((c) => c.title)).toEqual(['severity', 'events', 'average of bytes', 'share']);
    expect(t?.rows).toEqual([
      { 'group.severity': 'info', count: 150, avg_bytes: 1000.12, share: 0.75 },
      { 'group.severity': 'error', count: 50, avg_bytes: 2000, share: 0.25 },
    ]);
    expect(t?.footnotes).toEqual(['In all: events 200, average of bytes 1,234.57.']);
    const flat = widgetTable(
      'Summary',
      { totals: { count: 7, sum_bytes: 99 }, details: [] },
      {
        metrics: [{ op: 'count' }, { op: 'sum', field: 'bytes' }],
      },
    );
    expect(flat?.rows).toEqual([{ count: 7, sum_bytes: 99 }]);
  });

  it('LastN: its n rows with their times', () => {
    const r = { items: [{ value: 'alice', last_seen: T0, first_seen: T0 - 60, count: 2 }] };
    const t = widgetTable('LastN', r, { field: 'user', n: 1 });
    expect(t?.rows).toHaveLength(1);
    expect(t?.columns.filter((c) => c.kind === 'time').map((c) => c.key)).toEqual([
      'last_seen',
      'first_seen',
    ]);
  });
});

describe('what a widget states about itself', () => {
  const window = { fromMs: (T0 + 3 * HOUR) * 1000, toMs: (T0 + 27 * HOUR) * 1000 };

  it('its query, its time range in the report zone, what it shows', () => {
    const notes = widgetNotes(
      'Search',
      {
        query: 'severity:error',
        time_range: { preset: 'last_24_hours' },
        sort: ['-ts'],
        fields: ['ts', 'host'],
      },
      window,
      'Asia/Kolkata',
    );
    expect(notes).toEqual([
      'Query: severity:error',
      'Time range: last 24 hours: 2026-11-20 08:30 to 2026-11-21 08:30 (Asia/Kolkata)',
      'Shows: Events (ts, host), newest first',
    ]);
    expect(widgetNotes('TopN', { field: 'host', n: 10 }, window, 'UTC')[0]).toBe('Query: all events');
  });

  it('a short name of the time range for sheet names', () => {
    expect(periodLabel({ preset: 'last_24_hours' }, window, 'UTC')).toBe('24h');
    expect(periodLabel({ preset: 'last_3_days' }, window, 'UTC')).toBe('3d');
    expect(periodLabel({ preset: 'today' }, window, 'UTC')).toBe('today');
    const hour = { fromMs: (T0 + 12 * HOUR) * 1000, toMs: (T0 + 13 * HOUR) * 1000 };
    const range = { ts_from: T0 + 12 * HOUR, ts_to: T0 + 13 * HOUR };
    expect(periodLabel(range, hour, 'Asia/Kolkata')).toBe('11-20 17.30-18.30');
    expect(timeRangeText(range, hour, 'Asia/Kolkata')).toBe('2026-11-20 17:30 to 18:30 (Asia/Kolkata)');
    expect(periodLabel(range, window, 'UTC')).toBe('11-20 to 11-21');
  });
});

describe('a Table (a query with pipes) in a report', () => {
  it('its columns as they came, times as times, and a note when rows were cut', () => {
    const t = widgetTable(
      'Table',
      {
        columns: [
          { name: '_time', type: 'time' },
          { name: 'host', type: 'string' },
          { name: 'count', type: 'number' },
        ],
        rows: [
          [T0, 'web-1', 3],
          [T0 + HOUR, null, 0],
        ],
        total_rows: 12_000,
        truncated: true,
      },
      { query: '* | timechart span=1h count() by host' },
    );
    expect(t?.columns).toEqual([
      { key: 'c0', title: '_time', kind: 'time' },
      { key: 'c1', title: 'host', kind: 'string' },
      { key: 'c2', title: 'count', kind: 'number' },
    ]);
    expect(t?.rows).toEqual([
      { c0: T0, c1: 'web-1', c2: 3 },
      { c0: T0 + HOUR, c1: null, c2: 0 },
    ]);
    expect(t?.footnotes).toEqual(['The first 2 of 12,000 rows.']);
  });
});
