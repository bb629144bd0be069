import { describe, expect, it } from 'vitest';
import {
  isMetricFigure,
  type MetricAnswer,
  mergedFigure,
  metricNumber,
} from '../../../src/shared/metric-figures.js';
import {
  MAX_METRIC_POINTS,
  metricBuckets,
  metricTable,
} from '../../../ui/src/pages/dashboards/metric-data.js';

// A Metric query's series answer as the widget visualizations and the API read it.

const point = (ts: number, count: number, sum: number, min: number | null, max: number | null) => ({
  ts,
  events: count,
  count,
  sum,
  min,
  max,
  avg: count ? sum / count : null,
  quantiles: { '0.99': max },
  value: count ? sum / count : null,
});

const avgAnswer: MetricAnswer = {
  metric: { id: 1, name: 'latency', kind: 'avg', field: 'ms' },
  from: 0,
  to: 180,
  step: 60,
  labels: ['host'],
  series: [
    {
      labels: { host: 'web-1' },
      total: {
        events: 3,
        count: 3,
        sum: 60,
        min: 10,
        max: 30,
        avg: 20,
        quantiles: { '0.99': 30 },
        value: 20,
      },
      points: [point(0, 2, 30, 10, 20), point(60, 1, 30, 30, 30), point(120, 0, 0, null, null)],
    },
    {
      labels: { host: 'web-2' },
      total: { events: 1, count: 1, sum: 5, min: 5, max: 5, avg: 5, quantiles: { '0.99': 5 }, value: 5 },
      points: [point(0, 0, 0, null, null), point(60, 1, 5, 5, 5), point(120, 0, 0, null, null)],
    },
  ],
  dropped_series: 0,
  truncated: false,
  rebuilding: false,
};

describe('Metric widget data', () => {
  it('takes the figures a point carries and quantile keys as JSON writes them', () => {
    for (const y of ['value', 'events', 'count', 'sum', 'min', 'max', 'avg', '0.5', '0.99', '0.999'])
      expect(isMetricFigure(y), y).toBe(true);
    for (const y of ['median', '0.990', '1', '0', '.5', 0.99, '', 'quantiles'])
      expect(isMetricFigure(y), String(y)).toBe(false);
  });

  it('draws a series per label tuple over its steps, of the figure chosen', () => {
    expect(metricBuckets(avgAnswer, 'events')).toEqual([
      { ts: 0, count: 2, series: { 'web-1': 2, 'web-2': 0 } },
      { ts: 60, count: 2, series: { 'web-1': 1, 'web-2': 1 } },
      { ts: 120, count: 0, series: { 'web-1': 0, 'web-2': 0 } },
    ]);
    expect(metricBuckets(avgAnswer, '0.99').map((b) => b.series)).toEqual([
      { 'web-1': 20, 'web-2': 0 },
      { 'web-1': 30, 'web-2': 5 },
      { 'web-1': 0, 'web-2': 0 },
    ]);
  });

  it('merges steps as the metric merges them: counts added, an average from sums and counts', () => {
    const pts = avgAnswer.series[0]!.points;
    expect(mergedFigure(pts, 'events', 'avg')).toBe(3);
    expect(mergedFigure(pts, 'value', 'avg')).toBe(20);
    expect(mergedFigure(pts, 'avg', 'avg')).toBe(20);
    expect(mergedFigure(pts, 'min', 'avg')).toBe(10);
    expect(mergedFigure(pts, 'max', 'avg')).toBe(30);
    expect(mergedFigure(pts.slice(2), 'min', 'avg')).toBeNull();
    // A quantile (a quantiles metric's value too) merges as the greatest of its steps.
    expect(mergedFigure(pts, '0.99', 'avg')).toBe(30);
    const q = pts.map((p) => ({ ...p, value: p.quantiles?.['0.99'] ?? null }));
    expect(mergedFigure(q, 'value', 'quantiles')).toBe(30);
    // A day of minutes is drawn in at most MAX_METRIC_POINTS steps, none lost.
    const day = Array.from({ length: 1440 }, (_, i) => ({ ts: i * 60, events: 1, value: 1 }));
    const long: MetricAnswer = {
      ...avgAnswer,
      metric: { id: 2, name: 'hits', kind: 'count', field: null },
      labels: [],
      series: [{ labels: {}, total: { events: 1440, value: 1440 }, points: day }],
    };
    const buckets = metricBuckets(long, 'value');
    expect(buckets.length).toBeLessThanOrEqual(MAX_METRIC_POINTS);
    expect(buckets.reduce((n, b) => n + b.count, 0)).toBe(1440);
    expect(Object.keys(buckets[0]!.series!)).toEqual(['hits']);
  });

  it('is a table of the series with their totals, and one number where it adds up', () => {
    expect(metricTable(avgAnswer)).toEqual({
      columns: ['host', 'events', 'count', 'sum', 'min', 'max', 'avg', 'p0.99'],
      rows: [
        ['web-1', 3, 3, 60, 10, 30, 20, 30],
        ['web-2', 1, 1, 5, 5, 5, 5, 5],
      ],
    });
    expect(metricNumber(avgAnswer, 'events')).toBe(4);
    expect(metricNumber(avgAnswer, 'sum')).toBe(65);
    // An average of two series has no one number; of one series it is its total.
    expect(metricNumber(avgAnswer, 'value')).toBeNull();
    expect(metricNumber({ ...avgAnswer, series: avgAnswer.series.slice(1) }, 'avg')).toBe(5);
  });
});
