import { describe, expect, it } from 'vitest';
import {
  closestField,
  editDistance,
  fieldRefs,
  fixFields,
  rangeName,
  widerRanges,
} from '../../../ui/src/pages/search/empty-hints.js';

// What an empty search result offers (ui/src/pages/search/empty-hints.ts): the fields a
// query names, the close field a typo meant, and wider ranges.

const FIELDS = [
  { name: 'host', count: 900 },
  { name: 'hostname', count: 100 },
  { name: 'status', count: 600 },
  { name: 'http.method', count: 500 },
  { name: 'severity', count: 800 },
];

describe('fieldRefs', () => {
  it('lists field names with their places, the field of _exists_, never stream:, *: or a pipe’s', () => {
    const q = 'hots:web-1 AND (stauts:>=500 OR _exists_:usr) stream:3 *:* "a:b" | stats count() by hots';
    expect(fieldRefs(q).map((r) => [r.name, q.slice(r.from, r.to)])).toEqual([
      ['hots', 'hots'],
      ['stauts', 'stauts'],
      ['usr', 'usr'],
    ]);
  });

  it('reads escaped names and value groups', () => {
    expect(fieldRefs('a\\ b:1 host:(x OR y) -app:z').map((r) => r.name)).toEqual(['a b', 'host', 'app']);
  });
});

describe('closestField', () => {
  it('takes a transposition as one edit', () => {
    expect(editDistance('hots', 'host')).toBe(1);
    expect(editDistance('', 'abc')).toBe(3);
    expect(editDistance('kitten', 'sitting')).toBe(3);
    expect(closestField('hots', FIELDS)).toBe('host');
  });

  it('offers nothing for a field that exists or has no close name', () => {
    expect(closestField('host', FIELDS)).toBeNull();
    expect(closestField('zzzz', FIELDS)).toBeNull();
    expect(closestField('hots', [])).toBeNull();
  });

  it('ignores case, and reads a dotted prefix added or left out', () => {
    expect(closestField('Severity', FIELDS)).toBe('severity');
    expect(closestField('method', FIELDS)).toBe('http.method');
    expect(closestField('fields.status', FIELDS)).toBe('status');
  });

  it('among equally close names takes the most common', () => {
    expect(closestField('hosta', FIELDS)).toBe('host');
  });
});

describe('fixFields', () => {
  it('replaces every place of each unknown field, leaving the rest as written', () => {
    expect(fixFields('hots:web-1 OR (hots:web-2 AND stauts:500) status:200', FIELDS)).toEqual({
      fixes: [
        { from: 'hots', to: 'host' },
        { from: 'stauts', to: 'status' },
      ],
      query: 'host:web-1 OR (host:web-2 AND status:500) status:200',
    });
    expect(fixFields('NOT _exists_:hots', FIELDS)?.query).toBe('NOT _exists_:host');
  });

  it('is null when every field is known or none is close', () => {
    expect(fixFields('host:web-1 error', FIELDS)).toBeNull();
    expect(fixFields('nothing:here', FIELDS)).toBeNull();
  });
});

describe('widerRanges', () => {
  const now = Date.UTC(2026, 0, 10, 12, 0, 0);
  const nowS = now / 1000;

  it('offers the larger presets for a preset, then the largest zoomed out', () => {
    const w = { ts_from: nowS + 1 - 3600, ts_to: nowS + 1 };
    expect(widerRanges({ kind: 'preset', preset: 'last_hour' }, w, now)).toEqual([
      { kind: 'preset', preset: 'last_4_hours' },
      { kind: 'preset', preset: 'last_24_hours' },
      { kind: 'preset', preset: 'last_7_days' },
    ]);
    const month = { ts_from: nowS + 1 - 30 * 86_400, ts_to: nowS + 1 };
    const [next] = widerRanges({ kind: 'preset', preset: 'last_30_days' }, month, now);
    expect(next).toMatchObject({ kind: 'absolute' });
    expect(next).toEqual({ kind: 'absolute', from: nowS - 90 * 86_400, to: nowS });
  });

  it('widens an absolute window around its middle, never past now', () => {
    const w = { ts_from: 100_000, ts_to: 101_000 };
    const [a, b] = widerRanges({ kind: 'absolute', from: w.ts_from, to: w.ts_to }, w, now);
    expect(a).toEqual({ kind: 'absolute', from: 99_000, to: 102_000 });
    expect(b).toEqual({ kind: 'absolute', from: 96_000, to: 105_000 });
    const [recent] = widerRanges(
      { kind: 'absolute', from: nowS - 600, to: nowS },
      { ts_from: nowS - 600, ts_to: nowS },
      now,
    );
    expect(recent).toEqual({ kind: 'absolute', from: nowS - 1800, to: nowS });
  });

  it('names a preset in words', () => {
    expect(rangeName({ kind: 'preset', preset: 'last_24_hours' })).toBe('the last 24 hours');
  });
});
