import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { resolveTimeRange } from '../../../src/query/time-range.js';
import { DEFAULT_PRESET, TIME_PRESETS } from '../../../src/shared/time-presets.js';
import { isPreset, pinPreset } from '../../../ui/src/format.js';
import {
  DEFAULT_RANGE,
  fromRangeTime,
  intervalSeconds,
  parseCustomRange,
  rangeFromParams,
  rangeToParams,
  sameRange,
  toRangeTime,
  windowOf,
  zoomOut,
} from '../../../ui/src/pages/search/time-range.js';

// The search page's time range: the address ↔ range, ISO wall-clock times in the local
// zone, and the timeline's bucket positions ↔ times for zooming.

const params = (s: string) => new URLSearchParams(s);

describe('range in the address', () => {
  it('reads a preset, an absolute window, and falls back to the default', () => {
    expect(rangeFromParams(params('range=last_24_hours'))).toEqual({
      kind: 'preset',
      preset: 'last_24_hours',
    });
    expect(rangeFromParams(params('from=100&to=200&range=last_24_hours'))).toEqual({
      kind: 'absolute',
      from: 100,
      to: 200,
    });
    expect(rangeFromParams(params(''))).toEqual(DEFAULT_RANGE);
    expect(rangeFromParams(params('range=forever'))).toEqual(DEFAULT_RANGE);
    // From not before To, missing or not numbers: ignored.
    expect(rangeFromParams(params('from=200&to=100&range=today'))).toEqual({
      kind: 'preset',
      preset: 'today',
    });
    expect(rangeFromParams(params('from=100'))).toEqual(DEFAULT_RANGE);
    expect(rangeFromParams(params('from=1e3&to=2e3'))).toEqual(DEFAULT_RANGE);
    expect(rangeFromParams(params('from=-5&to=20'))).toEqual(DEFAULT_RANGE);
  });

  it('writes a range, replacing the one there and leaving the rest', () => {
    const p = params('q=error&from=1&to=2');
    rangeToParams({ kind: 'preset', preset: 'last_7_days' }, p);
    expect(p.toString()).toBe('q=error&range=last_7_days');
    rangeToParams({ kind: 'absolute', from: 1_700_000_000, to: 1_700_003_600 }, p);
    expect(p.toString()).toBe('q=error&from=1700000000&to=1700003600');
    rangeToParams(DEFAULT_RANGE, p);
    expect(p.toString()).toBe('q=error');
  });

  it('round-trips', () => {
    for (const r of [
      { kind: 'preset', preset: 'yesterday' },
      { kind: 'absolute', from: 5, to: 6 },
      DEFAULT_RANGE,
    ] as const) {
      expect(sameRange(rangeFromParams(rangeToParams(r, params(''))), r)).toBe(true);
    }
    expect(sameRange({ kind: 'absolute', from: 1, to: 2 }, { kind: 'absolute', from: 1, to: 3 })).toBe(false);
    expect(sameRange({ kind: 'preset', preset: 'today' }, { kind: 'absolute', from: 1, to: 3 })).toBe(false);
  });

  it('pins presets to a window and keeps absolute ones', () => {
    const now = Date.UTC(2026, 0, 2, 12, 0, 0);
    expect(windowOf({ kind: 'absolute', from: 10, to: 20 }, now)).toEqual({ ts_from: 10, ts_to: 20 });
    const w = windowOf({ kind: 'preset', preset: 'last_hour' }, now);
    expect(w.ts_to - w.ts_from).toBe(3600);
    expect(w.ts_to).toBe(now / 1000 + 1);
  });
});

describe("the time picker's times", () => {
  it('are local wall-clock times, ISO and 24-hour; seconds optional, T or a space', () => {
    const ts = new Date(2026, 2, 4, 17, 6, 0).getTime() / 1000;
    expect(toRangeTime(ts)).toBe('2026-03-04 17:06:00');
    expect(fromRangeTime('2026-03-04 17:06:00')).toBe(ts);
    expect(fromRangeTime('2026-03-04 17:06')).toBe(ts);
    expect(fromRangeTime('2026-03-04T17:06')).toBe(ts);
    expect(toRangeTime(ts + 7)).toBe('2026-03-04 17:06:07');
    expect(fromRangeTime(' 2026-03-04 17:06:07 ')).toBe(ts + 7);
    expect(fromRangeTime('2026-03-04T17:06:07.250')).toBe(ts + 7);
  });

  it('round-trip', () => {
    for (const ts of [0, 1_700_000_000, 1_700_000_059, 1_800_000_000]) {
      expect(fromRangeTime(toRangeTime(ts))).toBe(ts);
    }
  });

  it('refuse what is not a date and time', () => {
    for (const bad of [
      '',
      '2026-03-04',
      '2026-02-30T10:00',
      '2026-13-01T00:00',
      'yesterday',
      '2026-03-04T25:00',
      '2026-03-04 10:60',
      '2026-03-04 10:00:60',
      '03/04/2026, 05:06:00 PM',
      '2026-03-04 5:06 PM',
    ])
      expect(fromRangeTime(bad), bad).toBeNull();
  });

  it('make a custom range only when From is before To', () => {
    expect(parseCustomRange('2026-03-04T05:00', '2026-03-04T06:00')).toEqual({
      ok: true,
      range: {
        kind: 'absolute',
        from: fromRangeTime('2026-03-04T05:00'),
        to: fromRangeTime('2026-03-04T06:00'),
      },
    });
    expect(parseCustomRange('2026-03-04T06:00', '2026-03-04T05:00')).toEqual({
      ok: false,
      error: 'From must be before To.',
    });
    expect(parseCustomRange('2026-03-04T06:00', '2026-03-04T06:00')).toMatchObject({ ok: false });
    expect(parseCustomRange('', '2026-03-04T06:00')).toEqual({
      ok: false,
      error: 'Enter a From date and time.',
    });
    expect(parseCustomRange('2026-03-04T06:00', '')).toEqual({
      ok: false,
      error: 'Enter a To date and time.',
    });
  });
});

describe('timeline zoom', () => {
  it('reads intervals', () => {
    expect(intervalSeconds('30s')).toBe(30);
    expect(intervalSeconds('5m')).toBe(300);
    expect(intervalSeconds('1h')).toBe(3600);
    expect(intervalSeconds('1d')).toBe(86_400);
    expect(intervalSeconds('auto')).toBeNull();
    expect(intervalSeconds('0m')).toBeNull();
  });

  it('zooms out to twice the range around its middle', () => {
    expect(zoomOut({ ts_from: 1000, ts_to: 2000 })).toEqual({ kind: 'absolute', from: 500, to: 2500 });
    expect(zoomOut({ ts_from: 1000, ts_to: 1001 })).toEqual({ kind: 'absolute', from: 999, to: 1002 });
    expect(zoomOut({ ts_from: 10, ts_to: 1000 })).toEqual({ kind: 'absolute', from: 0, to: 1495 });
  });
});

describe('presets', () => {
  it('are the server’s: each pins to the window it resolves, to the second', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 4_102_444_800_000 }), (nowMs) => {
        for (const p of TIME_PRESETS) {
          const ui = pinPreset(p.value, nowMs);
          const server = resolveTimeRange({ preset: p.value }, nowMs);
          // Whole seconds holding the server's last millisecond; the start a second at most later.
          expect(ui.ts_to * 1000).toBeGreaterThanOrEqual(server.toMs);
          expect(ui.ts_to * 1000 - server.toMs).toBeLessThan(1000);
          if (p.value === 'today' || p.value === 'yesterday') expect(ui.ts_from * 1000).toBe(server.fromMs);
          else {
            expect(ui.ts_from * 1000 - server.fromMs).toBeGreaterThanOrEqual(0);
            expect(ui.ts_from * 1000 - server.fromMs).toBeLessThan(1000);
            expect((ui.ts_to - ui.ts_from) * 1000).toBe(p.ms);
          }
        }
      }),
      { numRuns: 300 },
    );
  });

  it('are the only ranges the address accepts; the default among them', () => {
    expect(isPreset(DEFAULT_PRESET)).toBe(true);
    for (const p of TIME_PRESETS) {
      expect(isPreset(p.value)).toBe(true);
      expect(rangeFromParams(params(`range=${p.value}`))).toEqual({ kind: 'preset', preset: p.value });
    }
    expect(isPreset('last_2_hours')).toBe(false);
    expect(isPreset(null)).toBe(false);
  });
});

describe('the address, for any range', () => {
  const range = fc.oneof(
    fc.constantFrom(...TIME_PRESETS.map((p) => ({ kind: 'preset' as const, preset: p.value as string }))),
    fc
      .tuple(fc.integer({ min: 0, max: 999_999_999_999 }), fc.integer({ min: 1, max: 999_999_999_999 }))
      .filter(([from, span]) => from + span <= 999_999_999_999)
      .map(([from, span]) => ({ kind: 'absolute' as const, from, to: from + span })),
  );

  it('reads back what it wrote, leaving the other parameters', () => {
    fc.assert(
      fc.property(range, range, fc.string(), (r, before, q) => {
        const p = new URLSearchParams();
        if (q) p.set('q', q);
        rangeToParams(before, p);
        rangeToParams(r, p);
        const read = new URLSearchParams(p.toString());
        expect(rangeFromParams(read)).toEqual(r);
        expect(read.get('q')).toBe(q || null);
      }),
    );
  });
});

describe("the time picker's times in any zone", () => {
  const zone = process.env.TZ;
  afterEach(() => {
    if (zone === undefined) delete process.env.TZ;
    else process.env.TZ = zone;
  });

  it('round-trip, but for the repeated hour when clocks go back (shown the same, read as the first)', () => {
    for (const tz of ['UTC', 'America/New_York', 'Europe/Berlin', 'Asia/Kolkata', 'Australia/Lord_Howe']) {
      process.env.TZ = tz;
      fc.assert(
        fc.property(fc.integer({ min: 0, max: 4_102_444_800 }), (ts) => {
          const shown = toRangeTime(ts);
          const read = fromRangeTime(shown);
          expect(read, `${tz} ${ts}`).not.toBeNull();
          // Read back, it shows the same; it is the same instant unless the wall-clock time
          // happened twice (then the first of the two, at most an hour earlier).
          expect(toRangeTime(read ?? 0)).toBe(shown);
          expect([0, 1800, 3600], `${tz} ${ts}`).toContain(ts - (read ?? 0));
        }),
        { numRuns: 400 },
      );
    }
  });

  it('refuse a time that does not exist (the hour skipped when clocks go forward)', () => {
    process.env.TZ = 'America/New_York';
    expect(fromRangeTime('2026-03-08T02:30')).toBeNull();
    expect(fromRangeTime('2026-03-08T03:30')).toBe(Date.UTC(2026, 2, 8, 7, 30) / 1000);
    expect(parseCustomRange('2026-03-08T02:30', '2026-03-08T04:00')).toEqual({
      ok: false,
      error: 'Enter a From date and time.',
    });
  });
});
