import { Type } from 'typebox';
import type { TimeWindow } from '../../event-store/query-plan.js';
import type { ReadScope } from '../../event-store/read-scope.js';
import { type CommonParamValues, FieldName, type QueryTypeDef, withCommon } from './query-type.js';

export interface MetricParams extends CommonParamValues {
  metric_id: number;
  /** Seconds, or a duration (`5m`, `1h`, `1d`). */
  step?: number | string;
  labels?: string[];
  label_filter?: Record<string, string[]>;
  limit?: number;
}

/**
 * What answers Metric queries: the log-metrics feature (docs/api/log-metrics.md), given to
 * the runner and the queries service where the app is put together. A Metric query reads
 * its log metric's buckets, not the events, through the event store's metric read, which
 * sums only the stream sets the read's scope reads (rollups/metric-store.ts `setTest`).
 */
export interface MetricAnswers {
  /**
   * A Metric query's params checked for the user who begins it, before anything is
   * stored: a metric they may not see is a 400 on `params.metric_id`, the other refusals
   * 400s on `params.<name>`. `widget`: a dashboard widget's query, which on a deleted
   * metric is let begin so that it ends ERROR naming the metric (its dashboard's other
   * widgets still show); one that exists but the user may not see is still refused.
   */
  check(
    who: { readonly userId: number; readonly isAdmin: boolean },
    params: MetricParams,
    window: TimeWindow,
    widget?: boolean,
  ): Promise<void>;
  /**
   * The series answer over `window` in `scope` (the query's). A metric deleted since the
   * query began throws a public error naming it (the query ends ERROR).
   */
  answer(userId: number, scope: ReadScope, params: MetricParams, window: TimeWindow): Promise<unknown>;
}

const Figures = Type.Object(
  {
    events: Type.Integer(),
    count: Type.Optional(Type.Integer()),
    sum: Type.Optional(Type.Number()),
    min: Type.Optional(Type.Union([Type.Number(), Type.Null()])),
    max: Type.Optional(Type.Union([Type.Number(), Type.Null()])),
    avg: Type.Optional(Type.Union([Type.Number(), Type.Null()])),
    quantiles: Type.Optional(Type.Record(Type.String(), Type.Union([Type.Number(), Type.Null()]))),
    value: Type.Union([Type.Number(), Type.Null()]),
  },
  { additionalProperties: false },
);

export const Metric: QueryTypeDef<MetricParams> = {
  name: 'Metric',
  description:
    "A log metric's series, from the buckets it keeps at ingest (docs/api/log-metrics.md): the series answer of `GET /api/log-metrics/{id}/series` over `time_range` (of any length), summed over the streams the caller may read. `query` and `filter` stay empty: the metric's query decides what is counted.",
  answeredFrom: 'rollups',
  params: withCommon({
    metric_id: Type.Integer({ minimum: 1, description: 'The log metric (one you may see).' }),
    step: Type.Optional(
      Type.Union([Type.Integer({ minimum: 1 }), Type.String({ maxLength: 12 })], {
        description:
          "Seconds (300) or a duration (5m, 1h, 1d), a multiple of the metric's resolution; default: at most 1,000 points.",
      }),
    ),
    labels: Type.Optional(
      Type.Array(FieldName('A label of the metric to keep'), {
        maxItems: 5,
        description: 'The labels to keep (the others summed away); [] one series; default all.',
      }),
    ),
    label_filter: Type.Optional(
      Type.Record(
        Type.String({ maxLength: 256 }),
        Type.Array(Type.String({ maxLength: 1000 }), { maxItems: 1000 }),
        {
          description:
            'Only tuples whose label holds one of these values ({"host": ["web-1"]}; "__other__" the fold).',
        },
      ),
    ),
    limit: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 10_000, description: 'Most series (default 100).' }),
    ),
  }),
  results: Type.Object({
    metric: Type.Object({
      id: Type.Integer(),
      name: Type.String(),
      kind: Type.String(),
      field: Type.Union([Type.String(), Type.Null()]),
    }),
    from: Type.Integer(),
    to: Type.Integer(),
    step: Type.Integer(),
    labels: Type.Array(Type.String()),
    series: Type.Array(
      Type.Object({
        labels: Type.Record(Type.String(), Type.String()),
        total: Figures,
        points: Type.Array(Type.Intersect([Type.Object({ ts: Type.Integer() }), Figures])),
      }),
    ),
    dropped_series: Type.Integer(),
    truncated: Type.Boolean(),
    rebuilding: Type.Boolean(),
  }),
  plan: () => {
    throw new Error('A Metric query reads its metric’s buckets (MetricAnswers), not a store plan.');
  },
  slicing: () => null,
  merge: (_acc, part) => part,
  present: (results) => results,
};
