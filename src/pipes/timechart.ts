import { autoInterval } from '../core/time.js';
import { AppError } from '../errors/errors.js';
import { MAX_TIMECHART_BUCKETS } from './program.js';

/**
 * The buckets of a `timechart` over a range: from the range's start rounded down to the
 * span, `count` of them up to its end. Without a span, Timeline's `auto` choice. A span
 * that would make more than MAX_TIMECHART_BUCKETS is a 400.
 */
export function timechartBuckets(
  range: { fromMs: number; toMs: number },
  span: number | undefined,
): { fromMs: number; spanMs: number; count: number } {
  const spanMs = span ?? autoInterval(range).ms;
  const fromMs = Math.floor(range.fromMs / spanMs) * spanMs;
  const count = Math.max(1, Math.ceil((range.toMs - fromMs) / spanMs));
  if (!(count <= MAX_TIMECHART_BUCKETS))
    throw new AppError(
      400,
      'invalid_query',
      `The timechart span makes more than ${MAX_TIMECHART_BUCKETS.toLocaleString('en-US')} buckets over this time range: choose a longer span or a shorter range.`,
      { 'params.query': ['The timechart span is too short for this time range.'] },
    );
  return { fromMs, spanMs, count };
}
