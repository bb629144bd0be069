import { describe, expect, it } from 'vitest';
import { resolveTimeRange } from '../../../src/query/time-range.js';
import { MAX_RECENT, parseRecent, withRecent } from '../../../ui/src/pages/search/recent-ranges.js';
import {
  parseRelative,
  presetOfSpan,
  relativeLabel,
  relativeSpan,
} from '../../../ui/src/pages/search/relative-range.js';
import {
  DEFAULT_RANGE,
  type RangeSel,
  rangeFromParams,
  rangeLabel,
  rangeToParams,
  shiftWindow,
  windowOf,
} from '../../../ui/src/pages/search/time-range.js';

// The time picker's typed ranges (`2h`, `last 2h`, `now-2h`) as the presets the address
// and the API hold, shifting a window by its length, and the recent ranges' list.

const preset = (text: string) => {
  const r = parseRelative(text);
  return r.ok ? r.preset : `error: ${r.error}`;
};

describe('a typed relative range', () => {
  it('reads a number and a unit, after "last" or "now-", as the table’s preset when one spans it', () => {
    expect(preset('15m')).toBe('last_15_minutes');
    expect(preset('2h')).toBe('last_2_hours');
    expect(preset(' Last 2h ')).toBe('last_2_hours');
    expect(preset('now-2h')).toBe('last_2_hours');
    expect(preset('now - 2 hours')).toBe('last_2_hours');
    expect(preset('120 minutes')).toBe('last_2_hours');
    expect(preset('60m')).toBe('last_hour');
    expect(preset('1d')).toBe('last_24_hours');
    expect(preset('3d')).toBe('last_3_days');
    expect(preset('1w')).toBe('last_7_days');
    expect(preset('2 weeks')).toBe('last_14_days');
    expect(preset('90m')).toBe('last_90_minutes');
    expect(preset('36h')).toBe('last_36_hours');
    expect(preset('today')).toBe('today');
    expect(preset('Last 7 days')).toBe('last_7_days');
  });

  it('refuses anything else, saying what it takes', () => {
    for (const bad of [
      'banana',
      '',
      '0h',
      '2',
      'h',
      '2x',
      '2 h ago',
      '-2h',
      'now+2h',
      '1.5h',
      '11y',
      '2constructor',
    ])
      expect(preset(bad), bad).toMatch(/^error: .*(For example 15m, 2h, 3d, 1w|Enter a range)/);
    expect(preset('3651d')).toBe('error: A range reaches back 10 years at most.');
    expect(preset('banana')).toBe(
      'error: “banana” is not a range. For example 15m, 2h, 3d, 1w, last 2h or now-2h.',
    );
  });

  it('is a preset the API reads with the same span', () => {
    const now = Date.UTC(2026, 0, 2, 12);
    for (const text of ['5m', '90m', '2h', '36h', '3d', '2w', '3650d']) {
      const p = preset(text);
      const api = resolveTimeRange({ preset: p }, now);
      expect((api.toMs - api.fromMs) / 1000, text).toBe(relativeSpan(p));
      const w = windowOf({ kind: 'preset', preset: p }, now);
      expect(w.ts_to - w.ts_from, text).toBe(relativeSpan(p));
    }
  });

  it('is named as the table names its presets', () => {
    expect(relativeLabel('last_hour')).toBe('Last hour');
    expect(relativeLabel('last_2_hours')).toBe('Last 2 hours');
    expect(relativeLabel('last_1_minutes')).toBe('Last 1 minute');
    expect(presetOfSpan(86_400 * 2)).toBe('last_2_days');
  });

  it('is kept in the address as it is; a made-up one is not', () => {
    const params = rangeToParams({ kind: 'preset', preset: 'last_90_minutes' }, new URLSearchParams());
    expect(params.toString()).toBe('range=last_90_minutes');
    expect(rangeFromParams(params)).toEqual({ kind: 'preset', preset: 'last_90_minutes' });
    for (const bad of ['last_0_hours', 'last_2_weeks', 'last_99999999_days', 'last_3651_days'])
      expect(rangeFromParams(new URLSearchParams({ range: bad })), bad).toEqual(DEFAULT_RANGE);
  });
});

describe('shifting a window', () => {
  it('moves it by its own length, absolute', () => {
    // Not before 1970, the length kept.
    expect(shiftWindow({ ts_from: 1000, ts_to: 4600 }, -1)).toEqual({ kind: 'absolute', from: 0, to: 3600 });
    expect(shiftWindow({ ts_from: 10_000, ts_to: 17_200 }, -1)).toEqual({
      kind: 'absolute',
      from: 2800,
      to: 10_000,
    });
    expect(shiftWindow({ ts_from: 10_000, ts_to: 17_200 }, 1)).toEqual({
      kind: 'absolute',
      from: 17_200,
      to: 24_400,
    });
  });
});

describe('what the button names', () => {
  it('a preset by its label, an absolute window by its times (one date when both share it)', () => {
    expect(rangeLabel({ kind: 'preset', preset: 'last_24_hours' })).toBe('Last 24 hours');
    const at = (h: number, m = 0) => new Date(2026, 2, 4, h, m).getTime() / 1000;
    expect(rangeLabel({ kind: 'absolute', from: at(5, 6), to: at(17, 30) })).toBe(
      '2026-03-04 05:06:00 to 17:30:00',
    );
    expect(rangeLabel({ kind: 'absolute', from: at(5), to: at(29) })).toBe(
      '2026-03-04 05:00:00 to 2026-03-05 05:00:00',
    );
  });
});

describe('recent ranges', () => {
  const a: RangeSel = { kind: 'preset', preset: 'last_2_hours' };
  const b: RangeSel = { kind: 'absolute', from: 100, to: 200 };

  it('puts the last applied first, each once, at most five', () => {
    let list: RangeSel[] = [];
    list = withRecent(list, a);
    list = withRecent(list, b);
    list = withRecent(list, { ...a });
    expect(list).toEqual([a, b]);
    for (const p of ['last_5_minutes', 'last_hour', 'today', 'yesterday', 'last_7_days'])
      list = withRecent(list, { kind: 'preset', preset: p });
    expect(list).toHaveLength(MAX_RECENT);
    expect(list[0]).toEqual({ kind: 'preset', preset: 'last_7_days' });
  });

  it('reads back only what can be applied', () => {
    expect(parseRecent(JSON.stringify([a, b, a]))).toEqual([a, b]);
    expect(parseRecent('not json')).toEqual([]);
    expect(parseRecent('{"kind":"preset"}')).toEqual([]);
    expect(
      parseRecent(
        JSON.stringify([
          { kind: 'preset', preset: 'forever' },
          { kind: 'absolute', from: 5, to: 5 },
          { kind: 'absolute', from: '1', to: 2 },
          null,
          { kind: 'preset', preset: 'today' },
        ]),
      ),
    ).toEqual([{ kind: 'preset', preset: 'today' }]);
  });
});
