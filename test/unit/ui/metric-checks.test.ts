import { describe, expect, it } from 'vitest';
import {
  type MetricFormValues,
  metricFormProblems,
} from '../../../ui/src/pages/log-metrics/metric-checks.js';

// The metric form's own checks (docs/api/log-metrics.md): "Save" waits while any field is wrong.
const good: MetricFormValues = {
  name: 'errors',
  kind: 'count',
  field: '',
  quantiles: '0.5, 0.9',
  labels: 'host, app',
  resolution: '60',
  retention: '400',
  maxSeries: '10000',
};

describe('the metric form’s checks', () => {
  it('find nothing in a good definition', () => {
    expect(metricFormProblems(good)).toEqual([]);
    expect(metricFormProblems({ ...good, kind: 'quantiles', field: 'duration' })).toEqual([]);
  });

  it('name each wrong field, in the form’s order', () => {
    const fields = (v: Partial<MetricFormValues>) => metricFormProblems({ ...good, ...v }).map(([f]) => f);
    expect(fields({ name: ' ' })).toEqual(['name']);
    expect(fields({ kind: 'sum' })).toEqual(['field']);
    expect(fields({ kind: 'quantiles', field: 'd', quantiles: '0.5, 1' })).toEqual(['quantiles']);
    expect(fields({ kind: 'quantiles', field: 'd', quantiles: '0.5, 0.5' })).toEqual(['quantiles']);
    expect(fields({ kind: 'quantiles', field: 'd', quantiles: '' })).toEqual(['quantiles']);
    expect(fields({ labels: 'a, b, c, d, e, f' })).toEqual(['labels']);
    for (const resolution of ['7', '70', '7200', '', '60.5', 'x'])
      expect(fields({ resolution }), resolution).toEqual(['resolution_seconds']);
    for (const resolution of ['10', '15', '900', '3600'])
      expect(fields({ resolution }), resolution).toEqual([]);
    expect(fields({ retention: '0' })).toEqual(['retention_days']);
    expect(fields({ retention: '3651' })).toEqual(['retention_days']);
    expect(fields({ maxSeries: '0' })).toEqual(['max_series']);
    expect(fields({ name: '', resolution: '7', maxSeries: '' })).toEqual([
      'name',
      'resolution_seconds',
      'max_series',
    ]);
  });
});
