import { describe, expect, it } from 'vitest';
import {
  dashboardPath,
  drillOf,
  narrowed,
  rangeOfAddress,
  rangeOfQuery,
  valueTerm,
} from '../../../ui/src/pages/dashboards/dashboard-address.js';

const NOW = 1_800_000_000_000;

/** A dashboard's time range in its address, and the search page's address of its values. */
describe('a dashboard address and the links from its values', () => {
  it('holds no range (each widget its own), a preset, or an absolute window', () => {
    const of = (qs: string) => rangeOfAddress(new URLSearchParams(qs));
    expect(of('')).toBeNull();
    expect(of('range=nonsense')).toBeNull();
    expect(of('range=last_hour')).toEqual({ kind: 'preset', preset: 'last_hour' });
    expect(of('from=100&to=200')).toEqual({ kind: 'absolute', from: 100, to: 200 });
    for (const range of [null, { kind: 'preset', preset: 'last_hour' } as const]) {
      const path = dashboardPath(7, range);
      expect(rangeOfAddress(new URL(path, 'http://x').searchParams)).toEqual(range);
    }
    expect(dashboardPath(7, null)).toBe('/dashboards/7');
    expect(dashboardPath(7, { kind: 'absolute', from: 100, to: 200 })).toBe('/dashboards/7?from=100&to=200');
  });

  it("reads a widget's own range as the search page's: listed presets as they are, others as windows", () => {
    expect(rangeOfQuery({ preset: 'last_24_hours' }, NOW)).toEqual({
      kind: 'preset',
      preset: 'last_24_hours',
    });
    const to = NOW / 1000 + 1;
    expect(rangeOfQuery({ preset: 'last_90_minutes' }, NOW)).toEqual({
      kind: 'absolute',
      from: to - 5400,
      to,
    });
    expect(rangeOfQuery({ ts_from: 10.4, ts_to: 20.2 }, NOW)).toEqual({ kind: 'absolute', from: 10, to: 21 });
    expect(rangeOfQuery(undefined, NOW)).toEqual({ kind: 'preset', preset: 'last_hour' });
  });

  it('selects a value exactly, numbers unquoted, a missing value as the field missing', () => {
    expect(valueTerm('host', 'web-1')).toBe('host:"web-1"');
    expect(valueTerm('status', 500)).toBe('status:500');
    expect(valueTerm('msg', 'say "hi"')).toBe('msg:"say \\"hi\\""');
    expect(valueTerm('user', null)).toBe('-_exists_:user');
    expect(valueTerm('user', '')).toBe('-_exists_:user');
  });

  it("adds the terms to the widget's query before its pipes", () => {
    expect(narrowed('', ['host:"a"'])).toBe('host:"a"');
    expect(narrowed('error OR warn', ['host:"a"'])).toBe('(error OR warn) host:"a"');
    expect(narrowed('error | stats count() by host', ['host:"a"'])).toBe(
      'error host:"a" | stats count() by host',
    );
    expect(narrowed('"a | b" x', ['host:"a"'])).toBe('"a | b" x host:"a"');
  });

  it('links a value to Search in the range shown, a time bucket to its own window', () => {
    const params = { query: 'app:nginx', time_range: { preset: 'last_24_hours' } };
    const own = drillOf(params, null, NOW);
    expect(own.values({ host: 'web-1' })).toBe(
      `/search?${new URLSearchParams({ q: 'app:nginx host:"web-1"', range: 'last_24_hours' })}`,
    );
    const hour = drillOf(params, { kind: 'preset', preset: 'last_4_hours' }, NOW);
    expect(new URL(hour.values({ severity: 'error', host: 'web-1' }), 'http://x').searchParams.get('q')).toBe(
      'app:nginx severity:"error" host:"web-1"',
    );
    expect(own.span(1000.5, 1060)).toBe('/search?q=app%3Anginx&from=1000&to=1060');
  });
});
