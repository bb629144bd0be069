/**
 * The search page's time range as pure functions: a preset or an absolute window, kept in
 * the address (`range=<preset>` or `from=`/`to=` Unix seconds), edited as ISO wall-clock
 * times (`YYYY-MM-DD HH:mm:ss`, 24-hour) in the browser's zone, the zone every time on the
 * page is shown in, and zoomed on the timeline (bucket index ↔ time).
 */
import { DEFAULT_PRESET } from '@shared/time-presets';
import { isPreset, pinPreset } from '../../format.js';
import { relativeLabel, relativeSpan } from './relative-range.js';

export interface Window {
  ts_from: number;
  ts_to: number;
}

export type RangeSel = { kind: 'preset'; preset: string } | { kind: 'absolute'; from: number; to: number };

export const DEFAULT_RANGE: RangeSel = { kind: 'preset', preset: DEFAULT_PRESET };

const seconds = (v: string | null): number | null => {
  if (v === null || !/^\d{1,12}$/.test(v)) return null;
  return Number(v);
};

/**
 * The range an address holds: `from`/`to` when both are valid and from < to, else `range`
 * (a preset of the table or a typed one, `last_90_minutes`), else the default.
 */
export function rangeFromParams(params: URLSearchParams): RangeSel {
  const from = seconds(params.get('from'));
  const to = seconds(params.get('to'));
  if (from !== null && to !== null && from < to) return { kind: 'absolute', from, to };
  const r = params.get('range');
  return isPreset(r) || (r !== null && relativeSpan(r) !== null)
    ? { kind: 'preset', preset: r }
    : DEFAULT_RANGE;
}

/** Writes a range into `params` (replacing any range there); the default preset is left out. */
export function rangeToParams(sel: RangeSel, params: URLSearchParams): URLSearchParams {
  params.delete('range');
  params.delete('from');
  params.delete('to');
  if (sel.kind === 'absolute') {
    params.set('from', String(sel.from));
    params.set('to', String(sel.to));
  } else if (sel.preset !== DEFAULT_PRESET) params.set('range', sel.preset);
  return params;
}

export const sameRange = (a: RangeSel, b: RangeSel) =>
  a.kind === 'preset'
    ? b.kind === 'preset' && a.preset === b.preset
    : b.kind === 'absolute' && a.from === b.from && a.to === b.to;

/** The absolute window `[ts_from, ts_to)` of a range at `nowMs`. */
export function windowOf(sel: RangeSel, nowMs: number): Window {
  if (sel.kind === 'absolute') return { ts_from: sel.from, ts_to: sel.to };
  const span = isPreset(sel.preset) ? null : relativeSpan(sel.preset);
  if (span === null) return pinPreset(sel.preset, nowMs);
  // As pinPreset pins the table's: ending a second after now.
  const to = Math.floor(nowMs / 1000) + 1;
  return { ts_from: to - span, ts_to: to };
}

/** The window moved by its own length, earlier (-1) or later (1): absolute, whole seconds. */
export function shiftWindow(window: Window, direction: -1 | 1): RangeSel & { kind: 'absolute' } {
  const span = Math.max(1, Math.round(window.ts_to - window.ts_from));
  const from = Math.max(0, Math.floor(window.ts_from) + direction * span);
  return { kind: 'absolute', from, to: from + span };
}

const pad = (n: number) => String(n).padStart(2, '0');

/** Unix seconds as the time picker shows them: `YYYY-MM-DD HH:mm:ss`, 24-hour, in the local zone. */
export function toRangeTime(ts: number): string {
  const d = new Date(ts * 1000);
  return (
    `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ` +
    `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`
  );
}

/**
 * What a range is called on the time picker's button: a preset's label, or an absolute
 * window's ISO times (the end's date left out when it is the start's).
 */
export function rangeLabel(sel: RangeSel): string {
  if (sel.kind === 'preset') return relativeLabel(sel.preset);
  const from = toRangeTime(sel.from);
  const to = toRangeTime(sel.to);
  return `${from} to ${from.slice(0, 10) === to.slice(0, 10) ? to.slice(11) : to}`;
}

/**
 * A time typed in the picker (local zone) as Unix seconds: `YYYY-MM-DD HH:mm:ss`, 24-hour,
 * the seconds optional (a fraction is dropped), `T` accepted for the space as ISO writes it;
 * null when it is not one, whatever the browser's locale.
 */
export function fromRangeTime(value: string): number | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?$/.exec(value.trim());
  if (!m) return null;
  const [y, mo, d, h, mi, s] = m.slice(1).map((x) => Number(x ?? 0)) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  if (mi > 59 || s > 59) return null;
  const date = new Date(y, mo - 1, d, h, mi, s);
  // new Date rolls over out-of-range parts (Feb 30 → Mar 2): refuse those.
  if (date.getFullYear() !== y || date.getMonth() !== mo - 1 || date.getDate() !== d || date.getHours() !== h)
    return null;
  return Math.floor(date.getTime() / 1000);
}

/** Validates the custom range form: both times given and From before To. */
export function parseCustomRange(
  fromValue: string,
  toValue: string,
): { ok: true; range: RangeSel & { kind: 'absolute' } } | { ok: false; error: string } {
  const from = fromRangeTime(fromValue);
  const to = fromRangeTime(toValue);
  if (from === null) return { ok: false, error: 'Enter a From date and time.' };
  if (to === null) return { ok: false, error: 'Enter a To date and time.' };
  if (from >= to) return { ok: false, error: 'From must be before To.' };
  return { ok: true, range: { kind: 'absolute', from, to } };
}

/** A timeline interval (`30s`, `5m`, `1h`, `1d`) in seconds; null when it is not one. */
export function intervalSeconds(interval: string): number | null {
  const m = /^([1-9]\d{0,4})([smhd])$/.exec(interval);
  if (!m) return null;
  const unit = { s: 1, m: 60, h: 3600, d: 86_400 }[m[2] as 's' | 'm' | 'h' | 'd'];
  return Number(m[1]) * unit;
}

/** Twice the window around its middle (whole seconds, not before 1970). */
export function zoomOut(window: Window): RangeSel & { kind: 'absolute' } {
  const span = Math.max(1, window.ts_to - window.ts_from);
  const mid = (window.ts_from + window.ts_to) / 2;
  return { kind: 'absolute', from: Math.max(0, Math.floor(mid - span)), to: Math.ceil(mid + span) };
}
