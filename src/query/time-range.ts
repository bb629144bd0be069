import { Type } from 'typebox';
import { own } from '../core/own.js';
import { fieldError } from '../errors/errors.js';
import type { TimeWindow } from '../event-store/query-plan.js';
import { DEFAULT_PRESET, TIME_PRESETS } from '../shared/time-presets.js';

/** `{ts_from, ts_to}` (Unix s, [from, to)) or `{preset}`. */
export type TimeRangeParam = { ts_from: number; ts_to: number } | { preset: string };

const TIME_RANGE_SHAPES = [
  Type.Object(
    {
      ts_from: Type.Integer({ description: 'Unix seconds, inclusive; years 0 to 9999' }),
      ts_to: Type.Integer({ description: 'Unix seconds, exclusive; up to 253402300800 (year 10000)' }),
    },
    { additionalProperties: false },
  ),
  Type.Object(
    {
      preset: Type.String({
        description: `${TIME_PRESETS.map((p) => p.value).join(', ')}, or last_<n>_<minutes|hours|days>`,
      }),
    },
    { additionalProperties: false },
  ),
] as const;

/** A query's time range: absolute, or a preset; the default preset when left out. */
export const TimeRangeSchema = Type.Union([...TIME_RANGE_SHAPES], { default: { preset: DEFAULT_PRESET } });

/** A time range with no default (an optional one, such as Patterns' `compare_to`). */
export const OptionalTimeRangeSchema = Type.Union([...TIME_RANGE_SHAPES]);

const UNIT_MS = { minutes: 60_000, hours: 3_600_000, days: 86_400_000 } as const;
/** The spans of the named `last_*` presets (shared/time-presets.ts). */
const NAMED: Record<string, number> = Object.fromEntries(
  TIME_PRESETS.filter((p) => p.ms > 0).map((p) => [p.value, p.ms]),
);
/** Ten years: beyond it a preset is more likely a typo than a wish. */
const MAX_RANGE_MS = 3650 * 86_400_000;

/**
 * Absolute ranges stay within the years 0000..9999 (ISO 8601's four-digit years, well
 * inside the event store's TIMESTAMP range): 0000-01-01T00:00:00Z up to 10000-01-01,
 * which `ts_to` (exclusive) may name.
 */
export const MIN_TS_SECONDS = -62_167_219_200;
export const MAX_TS_SECONDS = 253_402_300_800;

export const isRelative = (r: TimeRangeParam): r is { preset: string } => 'preset' in r;

/** Checks a time range without resolving it; throws a 400 naming `params.time_range`. */
export function validateTimeRange(r: TimeRangeParam): void {
  resolveTimeRange(r, Date.now());
}

/**
 * Resolves a range at a base time (Unix ms). `today` and `yesterday` are UTC calendar
 * days; `last_*` ranges end at the base time.
 */
export function resolveTimeRange(r: TimeRangeParam, baseMs: number): TimeWindow {
  if (!isRelative(r)) {
    for (const key of ['ts_from', 'ts_to'] as const) {
      const v = r[key];
      if (!Number.isSafeInteger(v) || v < MIN_TS_SECONDS || v > MAX_TS_SECONDS) {
        throw fieldError(
          `params.time_range.${key}`,
          `Must be Unix seconds from ${MIN_TS_SECONDS} (year 0) to ${MAX_TS_SECONDS} (year 10000).`,
        );
      }
    }
    if (r.ts_from >= r.ts_to) {
      throw fieldError('params.time_range', 'ts_from must be before ts_to.');
    }
    return { fromMs: r.ts_from * 1000, toMs: r.ts_to * 1000 };
  }
  const preset = r.preset;
  const startOfDay = Math.floor(baseMs / 86_400_000) * 86_400_000;
  if (preset === 'today') return { fromMs: startOfDay, toMs: baseMs + 1 };
  if (preset === 'yesterday') return { fromMs: startOfDay - 86_400_000, toMs: startOfDay };
  let span = own(NAMED, preset);
  if (span === undefined) {
    const m = /^last_([1-9][0-9]{0,6})_(minutes|hours|days)$/.exec(preset);
    if (m) span = Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS];
  }
  if (span === undefined || span > MAX_RANGE_MS) {
    throw fieldError(
      'params.time_range',
      `Unknown preset "${preset}": use ${Object.keys(NAMED).join(', ')}, today, yesterday or last_<n>_<minutes|hours|days> (up to 10 years).`,
    );
  }
  // +1 ms: an event stamped at the base time itself is inside "the last hour".
  return { fromMs: baseMs - span + 1, toMs: baseMs + 1 };
}
