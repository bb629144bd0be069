import { type Static, Type } from 'typebox';
import { IsoDateTime } from '../../core/resource-schema.js';

const SharedWith = Type.Object(
  {
    teams: Type.Array(Type.Integer(), { description: 'Ids of the teams it is shared with.' }),
    everyone: Type.Boolean({ description: 'Shared with every user.' }),
  },
  { additionalProperties: false },
);

const Kind = Type.Union(
  [
    Type.Literal('count'),
    Type.Literal('sum'),
    Type.Literal('avg'),
    Type.Literal('min'),
    Type.Literal('max'),
    Type.Literal('quantiles'),
  ],
  {
    description:
      'What is computed: the matching events (`count`), or the sum, average, least, greatest or quantiles of `field`.',
  },
);

/** A log metric as the API shows it: the one declaration of its shape. */
export const LogMetricSchema = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String({ description: 'Its name in the Prometheus exposition.' }),
    description: Type.String(),
    query: Type.String({
      description: 'The events it counts: query-language text without pipes or `stream:`.',
    }),
    kind: Kind,
    field: Type.Union([Type.String(), Type.Null()], {
      description: 'The numeric field aggregated (null for `count`).',
    }),
    quantiles: Type.Union([Type.Array(Type.Number()), Type.Null()], {
      description: 'For `quantiles`: the quantiles, ascending (null otherwise).',
    }),
    labels: Type.Array(Type.String(), { description: 'The fields whose values make its series (0-5).' }),
    resolution_seconds: Type.Integer({ description: 'Bucket length, dividing 3600.' }),
    retention_days: Type.Integer({
      description: 'How long buckets are kept, whatever becomes of the events.',
    }),
    max_series: Type.Integer({
      description: 'Most label tuples kept apart; the rest fold into `__other__`.',
    }),
    shared_with: SharedWith,
    owner: Type.Integer(),
    counting_since: IsoDateTime('When counting at ingest began: its creation or its last reset.'),
    backfilled: Type.Array(
      Type.Object(
        { from: Type.Integer(), to: Type.Integer() },
        { additionalProperties: false, description: 'Unix seconds, `[from, to)`.' },
      ),
      { description: 'The ranges backfills have covered since `counting_since`, merged.' },
    ),
    series_count: Type.Integer({ description: 'Label tuples with a series of their own.' }),
    dropped_series: Type.Integer({ description: 'Distinct label tuples folded into `__other__`.' }),
    created_at: IsoDateTime(),
    updated_at: IsoDateTime(),
  },
  { $id: 'LogMetric' },
);
export type LogMetric = Static<typeof LogMetricSchema>;

/**
 * What a caller writes. Shapes and ranges a reader can see in the schema are checked
 * here; the rules across fields (a field for every kind but `count`, quantiles for
 * `quantiles` only, Prometheus names) by the service, each a 400 naming its field.
 */
const writable = {
  name: Type.String({ minLength: 1, maxLength: 100 }),
  description: Type.Optional(Type.String({ maxLength: 1000 })),
  query: Type.Optional(Type.String({ maxLength: 10_000, description: 'Default "": every event.' })),
  kind: Type.Optional(Kind),
  field: Type.Optional(Type.Union([Type.String({ maxLength: 200 }), Type.Null()])),
  quantiles: Type.Optional(Type.Union([Type.Array(Type.Number(), { maxItems: 100 }), Type.Null()])),
  labels: Type.Optional(Type.Array(Type.String({ maxLength: 200 }), { maxItems: 100 })),
  resolution_seconds: Type.Optional(
    Type.Integer({ minimum: 10, maximum: 3600, description: 'Dividing 3600; default 60.' }),
  ),
  retention_days: Type.Optional(Type.Integer({ minimum: 1, maximum: 3650, description: 'Default 400.' })),
  max_series: Type.Optional(
    Type.Integer({ minimum: 1, description: 'At most the setting logMetricMaxSeries; default 10,000.' }),
  ),
  shared_with: Type.Optional(
    Type.Object(
      {
        teams: Type.Optional(Type.Array(Type.Integer({ minimum: 1 }), { maxItems: 1000 })),
        everyone: Type.Optional(Type.Boolean()),
      },
      { additionalProperties: false },
    ),
  ),
};

/** What a log metric computes over the matching events (docs/api/log-metrics.md). */
export const KindSchema = Kind;
export type LogMetricKind = Static<typeof Kind>;

export const LogMetricCreateSchema = Type.Object(writable, { additionalProperties: false });
export type LogMetricInput = Static<typeof LogMetricCreateSchema>;
/** What a PATCH gives changes; nothing is filled in for what it leaves out. */
export const LogMetricPatchSchema = Type.Partial(Type.Object(writable), { additionalProperties: false });
export type LogMetricPatch = Static<typeof LogMetricPatchSchema>;
