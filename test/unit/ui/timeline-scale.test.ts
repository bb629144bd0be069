import { afterEach, describe, expect, it } from 'vitest';
import {
  barSeconds,
  barSpan,
  countTicks,
  joinSplits,
  rebucket,
  seriesOrder,
  timeTicks,
} from '../../../ui/src/pages/search/timeline-scale.js';

// The search page's histogram as pure functions: the bar width for a chart's pixels, the
// server's buckets summed into bars on the zone's wall clock, the two severity splits
// joined, and the time and count labels.

const zone = process.env.TZ;
afterEach(() => {
  if (zone === undefined) delete process.env.TZ;
  else process.env.TZ = zone;
});

const DAY = 86_400;

describe('bars', () => {
  it('are at most a quarter of the pixels, of a width that sums whole server buckets', () => {
    // 24 h of 1-minute buckets: 5 minutes at 1440 px (288 bars), 10 at 1024 (144), an hour on a phone.
    expect(barSeconds(DAY, 1400, 60)).toBe(300);
    expect(barSeconds(DAY, 990, 60)).toBe(600);
    expect(barSeconds(DAY, 340, 60)).toBe(1800);
    // The server's own buckets when they are already coarse enough; never finer than them.
    expect(barSeconds(3600, 1400, 5)).toBe(15);
    expect(barSeconds(7 * DAY, 1400, 600)).toBe(1800);
    // 15 minutes is no whole number of 10-minute buckets: 30.
    expect(barSeconds(DAY, 400, 600)).toBe(1800);
    for (const [span, width, server] of [
      [DAY, 1400, 60],
      [7 * DAY, 700, 600],
      [3600, 2560, 5],
      [30 * DAY, 1024, 1800],
    ] as const) {
      const bar = barSeconds(span, width, server);
      expect(bar % server).toBe(0);
      expect(span / bar).toBeLessThanOrEqual(width / 4);
    }
  });

  it('sum the buckets and their series, aligned to the zone’s midnight and cut to the window', () => {
    process.env.TZ = 'Asia/Kolkata';
    // Half-hour buckets over two days from a UTC midnight (05:30 in Kolkata).
    const from = Date.UTC(2024, 4, 1) / 1000;
    const buckets = Array.from({ length: 96 }, (_, i) => ({
      ts: from + i * 1800,
      count: 3,
      series: { error: 1, info: 2 },
    }));
    const bars = rebucket({ interval: '30m', buckets }, { ts_from: from, ts_to: from + 2 * DAY }, 3 * 3600);
    // Kolkata's 3-hour marks fall at UTC :30: the first bar is cut to the window's start.
    const local = (ts: number) => new Date(ts * 1000).getHours() + new Date(ts * 1000).getMinutes() / 60;
    for (const b of bars.slice(1)) expect(local(b.start) % 3).toBe(0);
    expect(bars[0]?.start).toBe(from);
    expect(bars.at(-1)?.end).toBe(from + 2 * DAY);
    expect(bars.reduce((s, b) => s + b.count, 0)).toBe(288);
    expect(bars.reduce((s, b) => s + (b.series?.error ?? 0), 0)).toBe(96);
    // An offset that is no whole number of the server's buckets (hours): UTC's marks.
    const coarse = rebucket(
      {
        interval: '1h',
        buckets: buckets.filter((_, i) => i % 2 === 0).map((b) => ({ ts: b.ts, count: 2 * b.count })),
      },
      { ts_from: from, ts_to: from + 2 * DAY },
      DAY,
    );
    expect(coarse.map((b) => [b.start, b.count])).toEqual([
      [from, 144],
      [from + DAY, 144],
    ]);
    expect(coarse[0]?.series).toBeNull();
  });

  it('join the two severity splits into one, only when both are there and alike', () => {
    const high = {
      interval: '1m',
      buckets: [
        { ts: 60, count: 2, series: { critical: 1, error: 1 } },
        { ts: 120, count: 0, series: { critical: 0, error: 0 } },
      ],
    };
    const low = {
      interval: '1m',
      buckets: [
        { ts: 60, count: 5, series: { info: 4, other: 1 } },
        { ts: 120, count: 3, series: { info: 3, other: 0 } },
      ],
    };
    expect(joinSplits([high, low])).toEqual({
      interval: '1m',
      buckets: [
        { ts: 60, count: 7, series: { critical: 1, error: 1, info: 4, other: 1 } },
        { ts: 120, count: 3, series: { critical: 0, error: 0, info: 3, other: 0 } },
      ],
    });
    expect(joinSplits([high, null])).toBeNull();
    expect(joinSplits([high, { ...low, interval: '5m' }])).toBeNull();
    expect(joinSplits([high, { ...low, buckets: low.buckets.slice(1) }])).toBeNull();
  });

  it('stack severities most severe first, other values by name, `other` last', () => {
    expect(seriesOrder(['info', 'other', 'error', 'custom', 'debug', 'emergency'])).toEqual([
      'emergency',
      'error',
      'info',
      'debug',
      'custom',
      'other',
    ]);
  });
});

describe('labels', () => {
  it('time ticks fall on the zone’s round times, 24-hour, the date at midnight', () => {
    process.env.TZ = 'Asia/Kolkata';
    const to = Date.UTC(2024, 4, 2, 12) / 1000;
    const ticks = timeTicks(to - DAY, to, 1400);
    expect(ticks.length).toBeGreaterThanOrEqual(8);
    expect(ticks.length).toBeLessThanOrEqual(1400 / 90);
    for (const t of ticks) expect(t.label).toMatch(/^([01]\d|2[0-3]):00$|^05-02$/);
    expect(ticks.filter((t) => t.major).map((t) => t.label)).toEqual(['05-02']);
    // Under a minute, seconds; over weeks, dates.
    expect(timeTicks(to - 60, to, 1400)[0]?.label).toMatch(/^\d\d:\d\d:\d\d$/);
    for (const t of timeTicks(to - 60 * DAY, to, 1400)) expect(t.label).toMatch(/^\d\d-\d\d$/);
    expect(timeTicks(to, to, 1400)).toEqual([]);
  });

  it('count ticks are round and reach the highest bar', () => {
    expect(countTicks(41, 3)).toEqual([0, 20, 40, 60]);
    expect(countTicks(5, 3)).toEqual([0, 2, 4, 6]);
    expect(countTicks(0, 3)).toEqual([0, 1]);
    expect(countTicks(12_345, 3)).toEqual([0, 5000, 10_000, 15_000]);
  });

  it('a bar’s span names the date once and seconds only when a bound has them', () => {
    process.env.TZ = 'UTC';
    const at = Date.UTC(2024, 4, 1, 10) / 1000;
    expect(barSpan({ start: at, end: at + 300 })).toBe('2024-05-01 10:00 – 10:05');
    expect(barSpan({ start: at + 7, end: at + 300 })).toBe('2024-05-01 10:00:07 – 10:05:00');
    expect(barSpan({ start: at + 13 * 3600, end: at + 14 * 3600 })).toBe(
      '2024-05-01 23:00 – 2024-05-02 00:00',
    );
  });
});
