/**
 * What changed between two windows (docs/api/explain.md): the G-test score of two Poisson counts
 * with the windows' lengths as exposure, and the change's direction, rates and ratio.
 * Pure, shared by the Explain query type and the `pattern_rate` trigger condition.
 */

/** `x·ln(x/e)`, 0 for a zero count (its limit). */
const term = (x: number, e: number) => (x === 0 ? 0 : x * Math.log(x / e));

/**
 * The G-test statistic of `f` events in `tf` seconds against `b` in `tb`: under "the same
 * rate" it is χ² with one degree of freedom (20 ≈ p 7.7·10⁻⁶). Never negative.
 */
export function changeScore(f: number, b: number, tf: number, tb: number): number {
  const n = f + b;
  if (n === 0 || tf <= 0 || tb <= 0) return 0;
  const ef = (n * tf) / (tf + tb);
  const eb = (n * tb) / (tf + tb);
  return Math.max(0, 2 * (term(f, ef) + term(b, eb)));
}

export type ChangeDirection = 'new' | 'gone' | 'up' | 'down';

/** `new` when there was none before, `gone` when there is none now, else by the rates. */
export function changeDirection(f: number, b: number, tf: number, tb: number): ChangeDirection {
  if (b === 0) return 'new';
  if (f === 0) return 'gone';
  return f / tf >= b / tb ? 'up' : 'down';
}

/** Events per minute of a count over `seconds`. */
export const perMinute = (count: number, seconds: number) => (count * 60) / seconds;

/** A number rounded to 3 decimals (scores, rates and ratios as answers give them). */
export const round3 = (x: number) => Math.round(x * 1000) / 1000;

/** Fields examined by default first (when the focus window's events have them), in this order. */
export const FIRST_EXAMINED = ['host', 'app', 'severity', 'src_ip', 'user', 'status'] as const;
/** Fields examined at most. */
export const MAX_EXAMINED = 20;
/** Share of the focus window's events a further field must be in to be examined by default. */
export const EXAMINED_SHARE = 0.01;
const NEVER_EXAMINED = new Set(['ev_id', 'ts', 'received_at', 'stored_at', 'message', 'raw', 'pattern_id']);

/** Whether a field may be examined (times, ids, the message, the pattern and internal names never). */
export const examinable = (field: string) =>
  !NEVER_EXAMINED.has(field) && !field.startsWith('_') && !field.startsWith('orig.');
