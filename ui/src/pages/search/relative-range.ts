/**
 * Relative ranges ("the last 2 hours") as the time picker reads them typed (`2h`,
 * `last 2h`, `now-2h`, `3 days`, `1w`) and as the address and the query API hold them: a
 * preset of the table (`last_hour`) when one spans the same, else
 * `last_<n>_<minutes|hours|days>`, which the API reads too (src/query/time-range.ts), so a
 * link stays relative. Pure functions.
 */
import { TIME_PRESETS } from '@shared/time-presets';

type Unit = 'minutes' | 'hours' | 'days';

const UNIT_S: Record<Unit, number> = { minutes: 60, hours: 3600, days: 86_400 };

/** What a typed unit means, in seconds. */
const TYPED_UNIT_S: Record<string, number> = {
  m: 60,
  min: 60,
  mins: 60,
  minute: 60,
  minutes: 60,
  h: 3600,
  hr: 3600,
  hrs: 3600,
  hour: 3600,
  hours: 3600,
  d: 86_400,
  day: 86_400,
  days: 86_400,
  w: 604_800,
  wk: 604_800,
  wks: 604_800,
  week: 604_800,
  weeks: 604_800,
};

/** Ten years, as the API allows: beyond it a range is more likely a typo than a wish. */
const MAX_SPAN_S = 3650 * 86_400;

const RELATIVE = /^last_([1-9]\d{0,6})_(minutes|hours|days)$/;
const TYPED = /^(?:last\s*|now\s*-\s*)?([1-9]\d{0,6})\s*([a-z]+)$/;

/** The span in seconds of a relative preset (`last_hour`, `last_90_minutes`); null for any other value. */
export function relativeSpan(preset: string): number | null {
  const named = TIME_PRESETS.find((p) => p.value === preset);
  if (named) return named.ms > 0 ? named.ms / 1000 : null;
  const m = RELATIVE.exec(preset);
  if (!m) return null;
  const span = Number(m[1]) * UNIT_S[m[2] as Unit];
  return span <= MAX_SPAN_S ? span : null;
}

/** The preset of a span: the table's when one is as long, else the largest whole unit. */
export function presetOfSpan(seconds: number): string {
  const named = TIME_PRESETS.find((p) => p.ms === seconds * 1000);
  if (named) return named.value;
  const unit: Unit = seconds % 86_400 === 0 ? 'days' : seconds % 3600 === 0 ? 'hours' : 'minutes';
  return `last_${seconds / UNIT_S[unit]}_${unit}`;
}

/** What a relative preset is called: the table's label, else "Last 90 minutes". */
export function relativeLabel(preset: string): string {
  const named = TIME_PRESETS.find((p) => p.value === preset);
  if (named) return named.label;
  const m = RELATIVE.exec(preset);
  if (!m) return preset;
  return `Last ${m[1]} ${m[1] === '1' ? m[2]?.slice(0, -1) : m[2]}`;
}

export const RELATIVE_HINT = 'For example 15m, 2h, 3d, 1w, last 2h or now-2h.';

/**
 * A range typed in the picker: `<n><unit>` (m, h, d, w, or the words), optionally after
 * `last` or `now-`, or a preset's name (`today`); a preset to apply, or why it is not one.
 */
export function parseRelative(text: string): { ok: true; preset: string } | { ok: false; error: string } {
  const value = text.trim().toLowerCase();
  if (value === '') return { ok: false, error: `Enter a range. ${RELATIVE_HINT}` };
  const named = TIME_PRESETS.find((p) => p.value === value || p.label.toLowerCase() === value);
  if (named) return { ok: true, preset: named.value };
  const m = TYPED.exec(value);
  const unit = m?.[2] !== undefined && Object.hasOwn(TYPED_UNIT_S, m[2]) ? TYPED_UNIT_S[m[2]] : undefined;
  if (!m || unit === undefined)
    return { ok: false, error: `“${text.trim()}” is not a range. ${RELATIVE_HINT}` };
  const span = Number(m[1]) * unit;
  if (span > MAX_SPAN_S) return { ok: false, error: 'A range reaches back 10 years at most.' };
  return { ok: true, preset: presetOfSpan(span) };
}
