import { describe, expect, it } from 'vitest';
import { formatTs } from '../../../ui/src/format.js';
import { formatAbout, formatBytes, tierLines } from '../../../ui/src/pages/settings/stream-tiers.js';

// A stream's tier figures as Settings → Streams shows them (ui/src/pages/settings/stream-tiers.ts).

describe('bytes and counts at a glance', () => {
  it('gives bytes in binary units, one decimal below 10', () => {
    expect(formatBytes(0)).toBe('0 B');
    expect(formatBytes(1023)).toBe('1,023 B');
    expect(formatBytes(1024)).toBe('1.0 KB');
    expect(formatBytes(9.5 * 1024)).toBe('9.5 KB');
    expect(formatBytes(210 * 1024 ** 2)).toBe('210 MB');
    expect(formatBytes(1.1 * 1024 ** 3)).toBe('1.1 GB');
    // Never "1024 KB" nor "10.0 GB".
    expect(formatBytes(1024 ** 2 - 10)).toBe('1.0 MB');
    expect(formatBytes(9.97 * 1024 ** 3)).toBe('10 GB');
    expect(formatBytes(3 * 1024 ** 5)).toBe('3.0 PB');
  });

  it('gives counts exactly below 100,000 and rounded above', () => {
    expect(formatAbout(0)).toBe('0');
    expect(formatAbout(99_999)).toBe('99,999');
    expect(formatAbout(123_456)).toBe('123 K');
    expect(formatAbout(999_600)).toBe('1.0 M');
    expect(formatAbout(1_234_567)).toBe('1.2 M');
    expect(formatAbout(8_400_000_000)).toBe('8.4 B');
  });
});

describe('a stream’s tier lines', () => {
  const asOf = '2026-11-28T00:53:00.000Z';
  const day = (ts: number) => formatTs(ts).slice(0, 10);

  it('gives each tier’s events and bytes, the cold files and the days they hold', () => {
    const oldest = Date.UTC(2026, 7, 1, 12) / 1000;
    const newest = Date.UTC(2026, 10, 20, 12) / 1000;
    const lines = tierLines({
      hot: { events: 1_234_567, bytes: 210 * 1024 ** 2 },
      cold: { events: 8_400_000, bytes: 1.1 * 1024 ** 3, files: 42, oldest_ts: oldest, newest_ts: newest },
      as_of: asOf,
    });
    expect(lines.hot).toBe('Hot 1.2 M events · 210 MB');
    expect(lines.cold).toBe('Cold 8.4 M events · 1.1 GB in 42 files');
    expect(lines.days).toBe(`${day(oldest)} → ${day(newest)}`);
    expect(lines.asOf).toMatch(/^as of \d{4}-\d\d-\d\d \d\d:\d\d$/);
  });

  it('says “none” without cold files, and one day once', () => {
    const empty = tierLines({
      hot: { events: 1, bytes: 300 },
      cold: { events: 0, bytes: 0, files: 0, oldest_ts: null, newest_ts: null },
      as_of: asOf,
    });
    expect(empty).toMatchObject({ hot: 'Hot 1 event · 300 B', cold: 'Cold: none', days: null });
    const ts = Date.UTC(2026, 9, 3, 12) / 1000;
    const one = tierLines({
      hot: { events: 0, bytes: 0 },
      cold: { events: 5, bytes: 4096, files: 1, oldest_ts: ts, newest_ts: ts + 60 },
      as_of: asOf,
    });
    expect(one).toMatchObject({
      hot: 'Hot 0 events · 0 B',
      cold: 'Cold 5 events · 4.0 KB in 1 file',
      days: day(ts),
    });
  });
});
