/**
 * "What changed" on the search page (docs/api/explain.md) as pure functions: the focus and
 * baseline the address holds (`explain=<from>-<to>&baseline=previous|same_time_last_week|<from>-<to>`,
 * Unix seconds), the Explain query's params and results, and how a change is written.
 */
import { barSpan } from './timeline-scale.js';

/** A window of whole Unix seconds, `[from, to)`. */
export interface Span {
  from: number;
  to: number;
}

export type BaselinePreset = 'previous' | 'same_time_last_week';
export type Baseline = BaselinePreset | Span;

export const DEFAULT_BASELINE: Baseline = 'previous';

/** The baseline control's choices, as the panel names them. */
export const BASELINE_CHOICES: { value: BaselinePreset | 'custom'; label: string }[] = [
  { value: 'previous', label: 'Previous period' },
  { value: 'same_time_last_week', label: 'Same time last week' },
  { value: 'custom', label: 'Custom' },
];

/** The longest window Explain takes (31 days). */
export const MAX_WINDOW_S = 2_678_400;

/** `<from>-<to>` in Unix seconds, from < to; null when it is not one. */
export function parseSpan(raw: string | null): Span | null {
  const m = raw === null ? null : /^(\d{1,12})-(\d{1,12})$/.exec(raw);
  if (!m) return null;
  const from = Number(m[1]);
  const to = Number(m[2]);
  return from < to ? { from, to } : null;
}

export const spanParam = (s: Span) => `${s.from}-${s.to}`;

/** The baseline an address names; what is missing or malformed is the previous period. */
export function parseBaseline(raw: string | null): Baseline {
  if (raw === 'previous' || raw === 'same_time_last_week') return raw;
  return parseSpan(raw) ?? DEFAULT_BASELINE;
}

export const baselineParam = (b: Baseline) => (typeof b === 'string' ? b : spanParam(b));

/** The Explain query's `baseline` param. */
export const baselineBody = (b: Baseline) =>
  typeof b === 'string' ? { preset: b } : { ts_from: b.from, ts_to: b.to };

/** A span as the panel writes it: `2026-11-27 10:05 – 10:15` (seconds when it has them). */
export const spanText = (s: Span) => barSpan({ start: s.from, end: s.to });

/** A length of time in words: `10 min`, `1 h 30 min`, `2 d`. */
export function durationText(seconds: number): string {
  const s = Math.round(seconds);
  if (s < 60) return `${s} s`;
  if (s < 3600) return s % 60 === 0 ? `${s / 60} min` : `${Math.floor(s / 60)} min ${s % 60} s`;
  if (s < 86_400) {
    const m = Math.round((s % 3600) / 60);
    return m === 0 ? `${Math.floor(s / 3600)} h` : `${Math.floor(s / 3600)} h ${m} min`;
  }
  const h = Math.round((s % 86_400) / 3600);
  return h === 0 ? `${Math.floor(s / 86_400)} d` : `${Math.floor(s / 86_400)} d ${h} h`;
}

export type Direction = 'new' | 'up' | 'down' | 'gone';

export const DIRECTION_LABEL: Record<Direction, string> = {
  new: 'New',
  up: 'Up',
  down: 'Down',
  gone: 'Gone',
};

/** One change of an Explain query's results. */
export interface Change {
  kind: 'pattern' | 'field';
  term: string;
  focus_count: number;
  baseline_count: number;
  focus_rate: number;
  baseline_rate: number;
  ratio: number | null;
  direction: Direction;
  score: number;
  pattern_id?: string;
  template?: string;
  samples?: { ev_id: string; ts: number; message?: string | null }[];
  field?: string;
  value?: string | number;
}

/** An Explain query's results. */
export interface ExplainResults {
  focus: { ts_from: number; ts_to: number };
  baseline: { ts_from: number; ts_to: number };
  focus_total: number;
  baseline_total: number;
  fields: string[];
  tested: number;
  min_score: number;
  changes: Change[];
}

/** `×10.2` (one decimal under 100, none above); empty when there is no ratio (nothing before). */
export function ratioText(ratio: number | null): string {
  if (ratio === null || !Number.isFinite(ratio)) return '';
  if (ratio >= 100) return `×${Math.round(ratio).toLocaleString('en-US')}`;
  if (ratio >= 0.1) return `×${ratio.toFixed(1)}`;
  return `×${ratio.toPrecision(1)}`;
}

/** A field change as the list writes it: `host = web-3`. */
export const fieldText = (c: Change) => `${c.field ?? ''} = ${String(c.value ?? '')}`;

/** What a change is, in words (its row's name): the template or `field = value`. */
export const changeName = (c: Change) =>
  c.kind === 'pattern' ? `pattern ${c.template || c.pattern_id || ''}` : fieldText(c);

/**
 * The window a change's term is searched over when it is filtered in: a gone one has no
 * event in the focus, so its baseline; others the range the page shows (null).
 */
export function filterWindow(c: Change, r: ExplainResults): Span | null {
  if (c.direction !== 'gone') return null;
  return { from: Math.floor(r.baseline.ts_from), to: Math.ceil(r.baseline.ts_to) };
}
