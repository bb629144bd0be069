/**
 * Times in exported files: Unix seconds shown as wall-clock time in an IANA timezone,
 * with the UTC offset that applied at that instant.
 *
 * Intl.DateTimeFormat#formatToParts costs several microseconds, too slow for a million
 * rows of several time columns, so it is asked only for the offset at the two ends of each
 * UTC hour: when they agree the hour holds no transition (zones change offset at most once
 * an hour) and every instant in it is plain arithmetic.
 */

interface Zone {
  readonly formatter: Intl.DateTimeFormat;
  /** UTC hour number → offset (ms) valid for the whole hour, or null when it changes within */
  readonly hours: Map<number, number | null>;
}

const HOUR_MS = 3_600_000;
// Bounds only defend against pathological inputs (case variants of zone names, times
// spread over centuries); real exports touch a few zones and a few thousand hours.
const MAX_ZONES = 1_000;
const MAX_HOURS_PER_ZONE = 100_000;

const zones = new Map<string, Zone>();

function zone(timeZone: string): Zone {
  let z = zones.get(timeZone);
  if (z === undefined) {
    if (zones.size >= MAX_ZONES) zones.clear();
    z = {
      formatter: new Intl.DateTimeFormat('en-US', { timeZone, timeZoneName: 'longOffset' }),
      hours: new Map(),
    };
    zones.set(timeZone, z);
  }
  return z;
}

const OFFSET = /^GMT(?:([+-])(\d{2}):(\d{2})(?::(\d{2}))?)?$/;

function exactOffsetMs(z: Zone, ms: number): number {
  const name = z.formatter.formatToParts(ms).find((p) => p.type === 'timeZoneName')?.value ?? '';
  const m = OFFSET.exec(name);
  if (m === null) throw new Error(`unexpected UTC offset "${name}" from Intl.DateTimeFormat`);
  if (m[1] === undefined) return 0;
  const abs = (Number(m[2]) * 3600 + Number(m[3]) * 60 + Number(m[4] ?? 0)) * 1000;
  return m[1] === '-' ? -abs : abs;
}

function offsetMs(z: Zone, ms: number): number {
  const hour = Math.floor(ms / HOUR_MS);
  let known = z.hours.get(hour);
  if (known === undefined) {
    const start = exactOffsetMs(z, hour * HOUR_MS);
    known = start === exactOffsetMs(z, (hour + 1) * HOUR_MS - 1) ? start : null;
    if (z.hours.size >= MAX_HOURS_PER_ZONE) z.hours.clear();
    z.hours.set(hour, known);
  }
  return known ?? exactOffsetMs(z, ms);
}

/** Whether Intl knows `tz` as a time zone (names are matched case-insensitively). */
export function isValidTimeZone(tz: string): boolean {
  if (typeof tz !== 'string' || tz === '') return false;
  try {
    zone(tz);
    return true;
  } catch {
    return false;
  }
}

/** Wall-clock time and offset of an instant, both in milliseconds. */
export interface ZonedTime {
  /** local wall-clock time expressed as if it were UTC milliseconds (what spreadsheets store) */
  wallMs: number;
  offsetMs: number;
}

/** The wall-clock time of `seconds` (Unix) in `tz`; throws a RangeError for an unknown zone. */
export function zonedTime(seconds: number, tz: string): ZonedTime {
  const ms = Math.round(seconds * 1000);
  const off = offsetMs(zone(tz), ms);
  return { wallMs: ms + off, offsetMs: off };
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

function offsetText(off: number): string {
  const abs = Math.abs(off) / 1000;
  const h = Math.floor(abs / 3600);
  const m = Math.floor((abs % 3600) / 60);
  const s = abs % 60;
  return `${off < 0 ? '-' : '+'}${pad(h)}:${pad(m)}${s === 0 ? '' : `:${pad(s)}`}`;
}

function render(seconds: number, tz: string, separator: string): string {
  const { wallMs, offsetMs: off } = zonedTime(seconds, tz);
  const d = new Date(wallMs);
  return (
    `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}${separator}` +
    `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}.${pad(d.getUTCMilliseconds(), 3)}` +
    offsetText(off)
  );
}

/**
 * `seconds` (Unix, ms precision) as `YYYY-MM-DD HH:mm:ss.SSS+hh:mm` in `tz`: readable, and
 * still parsed by most date parsers since the offset keeps the instant exact.
 */
export function formatTime(seconds: number, tz: string): string {
  return render(seconds, tz, ' ');
}

/** Like `formatTime` but ISO 8601 / RFC 3339 (`T` between date and time), for machine-read formats. */
export function formatTimeIso(seconds: number, tz: string): string {
  return render(seconds, tz, 'T');
}
