import { formatCount, formatIso, formatTs } from '../../format.js';

/**
 * A stream's events and bytes in each tier, as of the cold tier's last round (a stream's
 * `tiers`, docs/api/streams.md). Written out: unit tests import this module without the
 * DOM api.ts needs.
 */
export interface StreamTiers {
  hot: { events: number; bytes: number };
  cold: { events: number; bytes: number; files: number; oldest_ts: number | null; newest_ts: number | null };
  as_of: string;
}

/** One decimal below 10 ("9.5", not "9.46"), whole numbers above ("210"). */
const scaled = (v: number) => (v < 9.95 ? v.toFixed(1) : String(Math.round(v)));

/**
 * `n` in the first of `units` (each `step` times the one before) where it reads below
 * `step` once rounded: 1023.7 KB is "1.0 MB", not "1024 KB"; 999,600 is "1.0 M".
 */
function inUnits(n: number, step: number, units: readonly string[]): string {
  let v = n;
  let i = 0;
  while (Math.round(v) >= step && i < units.length - 1) {
    v /= step;
    i++;
  }
  return `${scaled(v)} ${units[i]}`;
}

/** Bytes in binary units: "512 B", "9.5 KB", "210 MB", "1.1 GB". */
export function formatBytes(bytes: number): string {
  return bytes < 1024
    ? `${formatCount(bytes)} B`
    : inUnits(bytes / 1024, 1024, ['KB', 'MB', 'GB', 'TB', 'PB']);
}

/** A count to read at a glance: exact below 100,000, then "123 K", "1.2 M", "3.4 B". */
export function formatAbout(n: number): string {
  return n < 100_000 ? formatCount(n) : inUnits(n / 1000, 1000, ['K', 'M', 'B', 'T']);
}

const events = (n: number) => `${formatAbout(n)} ${n === 1 ? 'event' : 'events'}`;
/** Unix seconds as the local day. */
const dayOf = (ts: number) => formatTs(ts).slice(0, 10);

/** The lines Settings → Streams shows for a stream's tiers. */
export interface TierLines {
  /** "Hot 1.2 M events · 210 MB" */
  hot: string;
  /** "Cold 8.4 M events · 1.1 GB in 42 files"; "Cold: none" without cold files. */
  cold: string;
  /** The days the cold files hold, "2026-08-01 → 2026-11-20"; null without cold files. */
  days: string | null;
  /** "as of 2026-11-28 00:53" (local time). */
  asOf: string;
}

export function tierLines(t: StreamTiers): TierLines {
  const { hot, cold } = t;
  const none = cold.files === 0;
  const first = cold.oldest_ts === null ? null : dayOf(cold.oldest_ts);
  const last = cold.newest_ts === null ? null : dayOf(cold.newest_ts);
  return {
    hot: `Hot ${events(hot.events)} · ${formatBytes(hot.bytes)}`,
    cold: none
      ? 'Cold: none'
      : `Cold ${events(cold.events)} · ${formatBytes(cold.bytes)} in ${formatCount(cold.files)} ${cold.files === 1 ? 'file' : 'files'}`,
    days: none || first === null ? null : last === null || last === first ? first : `${first} → ${last}`,
    asOf: `as of ${formatIso(t.as_of)}`,
  };
}
