/**
 * A trigger's condition as the server answers it (docs/api/alerting.md), in words for the
 * list, and the pattern-rate condition's form values and body (docs/api/alerting.md).
 */

export type Op = 'gt' | 'gte' | 'lt' | 'lte';

export type PatternRateBaseline = 'previous' | 'same_time_last_week' | 'rolling_24h';
export type PatternRateDirection = 'up' | 'down' | 'both';

export interface PatternRateCondition {
  type: 'pattern_rate';
  window_seconds: number;
  baseline: PatternRateBaseline;
  direction: PatternRateDirection;
  min_ratio: number;
  min_count: number;
  steady_windows: number;
}

/** A condition, `group_by` and `warmup_seconds` filled in as the server answers them. */
export type Condition =
  | { type: 'match' }
  | { type: 'threshold'; window_seconds: number; op: Op; value: number; group_by: string[] }
  | { type: 'new_pattern'; warmup_seconds: number }
  | PatternRateCondition;

const OP_TEXT: Record<Op, string> = { gt: 'more than', gte: 'at least', lt: 'fewer than', lte: 'at most' };

const seconds = (w: number) => (w % 3600 === 0 ? `${w / 3600} h` : w % 60 === 0 ? `${w / 60} min` : `${w} s`);

export const PATTERN_RATE_BASELINES: { value: PatternRateBaseline; label: string }[] = [
  { value: 'previous', label: 'The window before' },
  { value: 'same_time_last_week', label: 'Same time last week' },
  { value: 'rolling_24h', label: 'The 24 hours before' },
];

export const PATTERN_RATE_DIRECTIONS: { value: PatternRateDirection; label: string }[] = [
  { value: 'both', label: 'Up or down' },
  { value: 'up', label: 'Up (surges, new)' },
  { value: 'down', label: 'Down (drops, gone)' },
];

const BASELINE_TEXT: Record<PatternRateBaseline, string> = {
  previous: 'the window before',
  same_time_last_week: 'last week',
  rolling_24h: 'the 24 h before',
};
const DIRECTION_TEXT: Record<PatternRateDirection, string> = {
  both: 'surges or drops',
  up: 'surges',
  down: 'drops',
};

/** "more than 100 in 5 min per host", "every match", "a kind of message surges or drops ×3 …". */
export function describeCondition(c: Condition): string {
  if (c.type === 'match') return 'Every match';
  if (c.type === 'new_pattern')
    return `A new kind of message (after ${seconds(c.warmup_seconds)} of warm-up)`;
  if (c.type === 'pattern_rate')
    return `A kind of message ${DIRECTION_TEXT[c.direction]} ×${c.min_ratio} in ${seconds(c.window_seconds)} against ${BASELINE_TEXT[c.baseline]} (${c.min_count} events at least)`;
  const per = c.group_by.length ? ` per ${c.group_by.join(', ')}` : '';
  return `${OP_TEXT[c.op][0]?.toUpperCase()}${OP_TEXT[c.op].slice(1)} ${c.value} in ${seconds(c.window_seconds)}${per}`;
}

/** The pattern-rate fields of the trigger form, as typed (the API's defaults for a new one). */
export interface PatternRateValues {
  rateWindow: string;
  rateBaseline: string;
  rateDirection: string;
  rateRatio: string;
  rateCount: string;
  rateSteady: string;
}

export function patternRateValues(c: Condition | undefined): PatternRateValues {
  const p = c?.type === 'pattern_rate' ? c : null;
  return {
    rateWindow: String(p?.window_seconds ?? 300),
    rateBaseline: p?.baseline ?? 'previous',
    rateDirection: p?.direction ?? 'both',
    rateRatio: String(p?.min_ratio ?? 3),
    rateCount: String(p?.min_count ?? 20),
    rateSteady: String(p?.steady_windows ?? 3),
  };
}

/** A number typed, or the text itself (the API then says what is wrong with it at its key). */
const typed = (text: string): number | string => {
  const n = Number(text);
  return text.trim() !== '' && Number.isFinite(n) ? n : text;
};

/** The condition the form's pattern-rate fields make. */
export const patternRateBody = (v: PatternRateValues) => ({
  type: 'pattern_rate' as const,
  window_seconds: typed(v.rateWindow),
  baseline: v.rateBaseline,
  direction: v.rateDirection,
  min_ratio: typed(v.rateRatio),
  min_count: typed(v.rateCount),
  steady_windows: typed(v.rateSteady),
});
