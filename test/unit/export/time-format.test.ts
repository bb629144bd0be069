import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatTime, formatTimeIso, isValidTimeZone, zonedTime } from '../../../src/export/time-format.js';

const at = (iso: string) => Date.parse(iso) / 1000;

/** Intl's own rendering, part by part: the slow, obviously right way. */
const reference = (ms: number, tz: string) => {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-US', {
      timeZone: tz,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      fractionalSecondDigits: 3,
      timeZoneName: 'longOffset',
    })
      .formatToParts(ms)
      .map((p) => [p.type, p.value]),
  );
  const offset = parts.timeZoneName === 'GMT' ? '+00:00' : parts.timeZoneName?.slice(3);
  return `${parts.year}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute}:${parts.second}.${parts.fractionalSecond}${offset}`;
};

describe('isValidTimeZone', () => {
  it('accepts IANA names, in any case', () => {
    for (const tz of [
      'UTC',
      'Etc/UTC',
      'Europe/Paris',
      'europe/paris',
      'America/Argentina/Buenos_Aires',
      'Asia/Kathmandu',
    ]) {
      expect(isValidTimeZone(tz), tz).toBe(true);
    }
  });

  it('refuses what Intl does not know', () => {
    for (const tz of ['', 'Mars/Olympus_Mons', 'Europe/Pariss', 'Paris', 'GMT+25', 'UTC; DROP TABLE']) {
      expect(isValidTimeZone(tz), tz).toBe(false);
    }
  });
});

describe('formatTime', () => {
  it('shows wall-clock time with milliseconds and the offset', () => {
    expect(formatTime(at('2024-01-15T12:00:00.123Z'), 'UTC')).toBe('2024-01-15 12:00:00.123+00:00');
    expect(formatTime(at('2024-01-15T12:00:00.123Z'), 'Europe/Paris')).toBe('2024-01-15 13:00:00.123+01:00');
    expect(formatTime(at('2024-07-15T12:00:00.123Z'), 'Europe/Paris')).toBe('2024-07-15 14:00:00.123+02:00');
    expect(formatTime(at('2024-07-15T02:00:00.000Z'), 'America/New_York')).toBe(
      '2024-07-14 22:00:00.000-04:00',
    );
    expect(formatTime(at('2024-07-15T12:00:00.000Z'), 'Asia/Kolkata')).toBe('2024-07-15 17:30:00.000+05:30');
    expect(formatTime(at('2024-07-15T12:00:00.000Z'), 'Asia/Kathmandu')).toBe(
      '2024-07-15 17:45:00.000+05:45',
    );
    expect(formatTime(0, 'UTC')).toBe('1970-01-01 00:00:00.000+00:00');
  });

  it('is exact around daylight-saving transitions (Paris, 2024)', () => {
    // Spring forward at 01:00 UTC: 02:00 local does not exist.
    expect(formatTime(at('2024-03-31T00:59:59.999Z'), 'Europe/Paris')).toBe('2024-03-31 01:59:59.999+01:00');
    expect(formatTime(at('2024-03-31T01:00:00.000Z'), 'Europe/Paris')).toBe('2024-03-31 03:00:00.000+02:00');
    // Fall back at 01:00 UTC: 02:00–03:00 local happens twice, told apart by the offset.
    expect(formatTime(at('2024-10-27T00:30:00.000Z'), 'Europe/Paris')).toBe('2024-10-27 02:30:00.000+02:00');
    expect(formatTime(at('2024-10-27T00:59:59.999Z'), 'Europe/Paris')).toBe('2024-10-27 02:59:59.999+02:00');
    expect(formatTime(at('2024-10-27T01:00:00.000Z'), 'Europe/Paris')).toBe('2024-10-27 02:00:00.000+01:00');
    expect(formatTime(at('2024-10-27T01:30:00.000Z'), 'Europe/Paris')).toBe('2024-10-27 02:30:00.000+01:00');
  });

  it('rounds to the millisecond without drifting a second', () => {
    expect(formatTime(1_700_000_000.1234, 'UTC')).toBe('2023-11-14 22:13:20.123+00:00');
    expect(formatTime(1_700_000_000.9996, 'UTC')).toBe('2023-11-14 22:13:21.000+00:00');
    expect(formatTime(-0.5, 'UTC')).toBe('1969-12-31 23:59:59.500+00:00');
  });

  it('shows historic offsets with seconds as they were', () => {
    // Paris Mean Time, +00:09:21, until 1911.
    expect(formatTime(at('1900-01-01T00:00:00Z'), 'Europe/Paris')).toBe('1900-01-01 00:09:21.000+00:09:21');
  });

  it('agrees with Intl.DateTimeFormat at any instant, in any zone', () => {
    const zones = [
      'Europe/Paris',
      'America/New_York',
      'Australia/Lord_Howe',
      'Asia/Kathmandu',
      'Pacific/Apia',
      'UTC',
    ];
    fc.assert(
      fc.property(
        // 1980–2037, where every zone's offsets are whole minutes.
        fc.integer({ min: 315_532_800_000, max: 2_145_916_800_000 }),
        fc.constantFrom(...zones),
        (ms, tz) => formatTime(ms / 1000, tz) === reference(ms, tz),
      ),
      { numRuns: 3_000 },
    );
  });

  it('agrees with Intl minute by minute through a day either side of each 2024 transition', () => {
    const days: Array<[string, string]> = [
      ['Europe/Paris', '2024-03-31T00:00:00Z'],
      ['Europe/Paris', '2024-10-27T00:00:00Z'],
      ['Australia/Lord_Howe', '2024-04-06T12:00:00Z'], // half-hour shift
      ['Australia/Lord_Howe', '2024-10-05T12:00:00Z'],
    ];
    for (const [tz, centre] of days) {
      const mid = Date.parse(centre);
      for (let ms = mid - 86_400_000; ms <= mid + 86_400_000; ms += 60_000 + 7) {
        expect(formatTime(ms / 1000, tz), `${tz} ${new Date(ms).toISOString()}`).toBe(reference(ms, tz));
      }
    }
  });

  it('throws a RangeError for an unknown zone', () => {
    expect(() => formatTime(0, 'Mars/Olympus_Mons')).toThrow(RangeError);
  });
});

describe('formatTimeIso and zonedTime', () => {
  it('formatTimeIso is RFC 3339 and parses back to the same instant', () => {
    const t = at('2024-07-15T12:00:00.123Z');
    const iso = formatTimeIso(t, 'Europe/Paris');
    expect(iso).toBe('2024-07-15T14:00:00.123+02:00');
    expect(Date.parse(iso) / 1000).toBe(t);
  });

  it('zonedTime gives the wall clock as UTC milliseconds and the offset', () => {
    expect(zonedTime(at('2024-07-15T12:00:00.123Z'), 'Europe/Paris')).toEqual({
      wallMs: Date.parse('2024-07-15T14:00:00.123Z'),
      offsetMs: 7_200_000,
    });
  });
});
