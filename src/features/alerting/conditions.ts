/**
 * What a trigger fires on. Its own file because both the engine that evaluates a condition
 * and the notification that reports it name it (neither imports the other for it).
 */
import type { ThresholdCondition } from './threshold.js';

/** Fires once per pattern whose first event came after the warm-up (docs/api/alerting.md). */
export interface NewPatternCondition {
  type: 'new_pattern';
  warmup_seconds: number;
}

/** A kind of message surges or disappears (pattern-rate.ts; docs/api/alerting.md). */
export interface PatternRateCondition {
  type: 'pattern_rate';
  window_seconds: number;
  baseline: 'previous' | 'same_time_last_week' | 'rolling_24h';
  direction: 'up' | 'down' | 'both';
  min_ratio: number;
  min_count: number;
  steady_windows: number;
}

export type Condition = { type: 'match' } | ThresholdCondition | NewPatternCondition | PatternRateCondition;
