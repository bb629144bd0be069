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

export type Condition = { type: 'match' } | ThresholdCondition | NewPatternCondition;
