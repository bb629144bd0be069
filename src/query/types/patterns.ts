import { Type } from 'typebox';
import type { PatternsResult } from '../../event-store/query-plan.js';
import { OptionalTimeRangeSchema, resolveTimeRange, type TimeRangeParam } from '../time-range.js';
import { type CommonParamValues, type QueryTypeDef, withCommon } from './query-type.js';

export interface PatternsParams extends CommonParamValues {
  n: number;
  compare_to?: TimeRangeParam;
}

/** Buckets of each pattern's series over the range (docs/api/patterns.md). */
export const PATTERN_BUCKETS = 20;
/** Apps named on a pattern's row (features/patterns/grouped-patterns.ts), the most common first; the rest are counted. */
export const APPS_NAMED = 5;

const seconds = (ms: number) => ms / 1000;

/**
 * Patterns (docs/api/patterns.md): the most common message templates among matching events, each with
 * its count and share, first and last event, a series over the range, samples, and with
 * `compare_to` whether it is new since that earlier range. The template text comes with
 * the results from the store the runner reads (features/patterns/with-templates.ts).
 */
export const Patterns: QueryTypeDef<PatternsParams, PatternsResult> = {
  name: 'Patterns',
  description:
    'The most common message templates (`pattern_id`) among matching events, with counts, share, first and last seen, a 20-bucket series, up to 3 samples; with `compare_to`, which are new since that earlier range and their count there.',
  params: withCommon({
    n: Type.Integer({ minimum: 1, maximum: 1000, default: 50 }),
    compare_to: Type.Optional(OptionalTimeRangeSchema),
  }),
  results: Type.Object({
    total: Type.Integer({ description: 'Matching events that have a pattern.' }),
    patterns: Type.Array(
      Type.Object({
        pattern_id: Type.String(),
        template: Type.String({ description: 'Variables are `<*>`.' }),
        count: Type.Integer(),
        share: Type.Number(),
        first_seen: Type.Number(),
        last_seen: Type.Number(),
        samples: Type.Array(
          Type.Object({
            ev_id: Type.String(),
            ts: Type.Number(),
            message: Type.Union([Type.String(), Type.Null()]),
          }),
        ),
        series: Type.Array(Type.Integer(), {
          description: `Counts in ${PATTERN_BUCKETS} equal slices of the range.`,
        }),
        pattern_ids: Type.Array(Type.String(), {
          description:
            'Every pattern id of this template text (one per app it was mined in), most common first; `pattern_id` is the first.',
        }),
        apps: Type.Array(Type.Object({ app: Type.String(), count: Type.Integer() }), {
          description: `The apps its events came from, most events first (at most ${APPS_NAMED}).`,
        }),
        apps_other: Type.Integer({ description: 'Further apps it came from, not listed in `apps`.' }),
        new: Type.Boolean({
          description:
            'With compare_to: no event in that range. Without: no matching event before the range (first seen inside it).',
        }),
        previous_count: Type.Union([Type.Integer(), Type.Null()], {
          description: 'Its count in the compare_to range; null without compare_to.',
        }),
      }),
    ),
    other: Type.Integer({ description: 'Events of patterns not listed.' }),
  }),
  plan: (p, filter, range) => ({
    kind: 'patterns',
    filter,
    range,
    n: p.n,
    buckets: PATTERN_BUCKETS,
    // A preset names the earlier range just before this evaluation's window (last_7_days:
    // the week before it), so what is new since then can be new; overlapping the window, no
    // pattern of it could be.
    ...(p.compare_to ? { compareTo: resolveTimeRange(p.compare_to, range.fromMs) } : {}),
  }),
  slicing: () => null,
  merge: (_acc, part) => part,
  present: (r, p) => {
    const listed = r.items.reduce((s, i) => s + i.count, 0);
    return {
      total: r.total,
      patterns: r.items.map((i) => ({
        pattern_id: i.patternId,
        template: i.template ?? '',
        count: i.count,
        share: r.total ? i.count / r.total : 0,
        first_seen: seconds(i.firstSeen),
        last_seen: seconds(i.lastSeen),
        samples: i.samples.map((s) => ({ ev_id: s.evId, ts: seconds(s.ts), message: s.message })),
        series: i.series,
        pattern_ids: i.patternIds ?? [i.patternId],
        apps: i.apps ?? [],
        apps_other: i.appsOther ?? 0,
        new: p.compare_to !== undefined ? (i.previousCount ?? 0) === 0 : (i.firstInRange ?? false),
        previous_count: p.compare_to !== undefined ? (i.previousCount ?? 0) : null,
      })),
      other: r.total - listed,
    };
  },
};
