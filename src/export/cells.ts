import type { ColumnKind, ExportColumn } from './renderer.js';
import { formatTime } from './time-format.js';

// Date's own limit (±100,000,000 days), in seconds: beyond it a time has no calendar form.
const MAX_TIME_SECONDS = 8.64e12;

/** Whether `v` is a time value a calendar can show (Unix seconds within Date's range). */
export const isTimeValue = (v: unknown): v is number =>
  typeof v === 'number' && Number.isFinite(v) && Math.abs(v) <= MAX_TIME_SECONDS;

/**
 * The Unix seconds a cell stands for, if it is a time: a number in a `time` column, or a
 * Date anywhere (a row source may hand over driver Dates).
 */
export function timeOf(value: unknown, kind: ColumnKind): number | undefined {
  if (kind === 'time' && isTimeValue(value)) return value;
  if (value instanceof Date) {
    const seconds = value.getTime() / 1000;
    if (isTimeValue(seconds)) return seconds;
  }
  return undefined;
}

// Objects in log fields come from JSON, but a row source may hand over bigints (DuckDB
// BIGINT) and JSON.stringify throws on those.
const jsonReplacer = (_key: string, v: unknown) => (typeof v === 'bigint' ? v.toString() : v);

/** Compact JSON text of any value; circular or otherwise unserialisable values fall back to String(). */
export function jsonText(value: unknown): string {
  try {
    return JSON.stringify(value, jsonReplacer) ?? '';
  } catch {
    return String(value);
  }
}

/** A share (a fraction, 0.423) as a percentage with one decimal: "42.3 %". */
export function percentText(fraction: number): string {
  const pct = fraction * 100;
  // One decimal, and never "0.0 %" for a share that is there but tiny.
  if (pct > 0 && pct < 0.05) return '< 0.1 %';
  return `${pct.toFixed(1)} %`;
}

/**
 * A cell as text, for formats where every cell is text (csv, docx, pdf): times (and Dates) in `tz`,
 * shares as percentages, objects as compact JSON, strings as they are (also in `json`
 * columns, where quoting a plain string would only add noise), missing cells empty.
 */
export function cellText(value: unknown, kind: ColumnKind, tz: string): string {
  if (value === null || value === undefined) return '';
  const seconds = timeOf(value, kind);
  if (seconds !== undefined) return formatTime(seconds, tz);
  if (kind === 'percent' && typeof value === 'number' && Number.isFinite(value)) return percentText(value);
  if (typeof value === 'string') return value;
  if (typeof value !== 'object' || value instanceof Date) return String(value);
  return jsonText(value);
}

/** The cells of one row as text, in column order. */
export const rowTexts = (
  row: Record<string, unknown>,
  columns: readonly ExportColumn[],
  tz: string,
): string[] => columns.map((c) => cellText(row[c.key], c.kind, tz));

// XML 1.0 forbids C0 controls other than TAB, LF, CR (and U+FFFE/U+FFFF); log lines carry
// them (ANSI colour escapes, NULs), and one would make Word refuse the whole file.
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const XML_INVALID = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g;

/** `s` without the characters XML cannot hold. */
export const xmlSafe = (s: string): string => s.replace(XML_INVALID, '');

/** `s` cut to `max` UTF-16 units, the cut marked with an ellipsis. */
export function truncateText(s: string, max: number): string {
  if (s.length <= max) return s;
  let end = max - 1;
  // Never split a surrogate pair: half a pair is not a character in any encoding.
  const last = s.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  return `${s.slice(0, end)}…`;
}

/** `n` with thousands separators, for notes such as "…truncated at 10,000 rows". */
export const countText = (n: number): string => n.toLocaleString('en-US');

/** The visible note a capped table ends with. */
export const truncationNote = (cap: number): string => `…truncated at ${countText(cap)} rows`;
