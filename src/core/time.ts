/**
 * The one reader of ISO 8601 text times, shared by ingest (event times) and the query
 * layer (time values in filters), so a time that a record may carry is a time a filter
 * may name, read the same way.
 */

const ISO_RE =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?\s*([Zz]|[+-]\d{2}(?::?\d{2})?)?)?$/;

/**
 * An ISO 8601 date or date-time as Unix ms: no zone means UTC (not the server's zone, so
 * answers do not depend on where the service runs); `Z`, `±HH`, `±HHMM` or `±HH:MM`;
 * a `,` or `.` fraction of any length, truncated to milliseconds; second 60 (a leap
 * second) carries into the next minute. Null for anything else or an impossible date.
 */
export function parseIsoMs(text: string): number | null {
  const m = ISO_RE.exec(text);
  if (!m) return null;
  const [, y, mo, d, h = '0', mi = '0', s = '0', frac = '', zone] = m;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const hour = Number(h);
  const minute = Number(mi);
  const second = Number(s);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  if (hour > 23 || minute > 59 || second > 60) return null;
  const millis = Number(frac.slice(0, 3).padEnd(3, '0'));
  let offsetMinutes = 0;
  if (zone && zone !== 'Z' && zone !== 'z') {
    const digits = zone.slice(1).replace(':', '');
    const oh = Number(digits.slice(0, 2));
    const om = digits.length > 2 ? Number(digits.slice(2, 4)) : 0;
    if (oh > 23 || om > 59) return null;
    offsetMinutes = (zone[0] === '-' ? -1 : 1) * (oh * 60 + om);
  }
  return utcMs(year, month, day, hour, minute, second, millis) - offsetMinutes * 60_000;
}

/** Date.UTC maps years 0–99 to 1900–1999; setUTCFullYear does not. Month is 1-based. */
export function utcMs(
  year: number,
  month: number,
  day: number,
  hour: number,
  minute: number,
  second: number,
  millis: number,
): number {
  if (year >= 100) return Date.UTC(year, month - 1, day, hour, minute, second, millis);
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, millis);
  return date.getTime();
}

/** Month is 1-based. */
export function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/** The instant, or null when the day does not exist in that month. Month is 1-based. */
export function checkedUtc(
  y: number,
  mo: number,
  d: number,
  h: number,
  mi: number,
  s: number,
  ms: number,
): number | null {
  return d <= daysInMonth(y, mo) ? utcMs(y, mo, d, h, mi, s, ms) : null;
}

const DAY_MS = 86_400_000;

/**
 * A time written without a year (syslog's `Mmm dd hh:mm:ss`): the latest year that keeps
 * it at most a day after `now` (December lines read in January land in the previous
 * year; a sender whose clock is a little ahead still lands in this one; Feb 29 skips to a
 * leap year). Null when no year of the last nine fits.
 */
export function inferYear(
  month: number,
  day: number,
  hour: number,
  minute: number,
  second: number,
  millis: number,
  now: number,
): number | null {
  const refYear = new Date(now).getUTCFullYear();
  for (let year = refYear + 1; year >= refYear - 8; year--) {
    const ms = checkedUtc(year, month, day, hour, minute, second, millis);
    if (ms !== null && ms <= now + DAY_MS) return ms;
  }
  return null;
}

export const INTERVAL_UNITS: Readonly<Record<string, number>> = {
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

/** `auto` picks the finest of these giving at most MAX_BUCKETS buckets. */
const LADDER: ReadonlyArray<readonly [string, number]> = [
  ['1s', 1000],
  ['5s', 5000],
  ['10s', 10_000],
  ['30s', 30_000],
  ['1m', 60_000],
  ['5m', 300_000],
  ['10m', 600_000],
  ['30m', 1_800_000],
  ['1h', 3_600_000],
  ['3h', 10_800_000],
  ['6h', 21_600_000],
  ['12h', 43_200_000],
  ['1d', 86_400_000],
];
export const MAX_BUCKETS = 1440;

/** Day counts `auto` picks from for ranges past a day a bucket (then whole years). */
const DAY_STEPS = [1, 2, 7, 14, 30, 91, 182, 365];

/** The bucket `auto` chooses for a window (Timeline, timechart): the finest rung within MAX_BUCKETS. */
export function autoInterval(w: { fromMs: number; toMs: number }): { ms: number; label: string } {
  for (const [label, ms] of LADDER) if ((w.toMs - w.fromMs) / ms <= MAX_BUCKETS) return { ms, label };
  // Past the ladder (a range of years): whole days, still at most MAX_BUCKETS buckets.
  // Falling back to 1d made millions of buckets for a range of centuries.
  const days = Math.ceil((w.toMs - w.fromMs) / 86_400_000 / MAX_BUCKETS);
  const step = DAY_STEPS.find((d) => d >= days) ?? Math.ceil(days / 365) * 365;
  return { ms: step * 86_400_000, label: `${step}d` };
}
