import { Type } from 'typebox';
import { METRIC_OPS, type Metric, type SummaryResult } from '../../event-store/query-plan.js';
import { type CommonParamValues, FieldName, type QueryTypeDef, withCommon } from './query-type.js';

export interface SummaryParams extends CommonParamValues {
  group_by: string[];
  metrics: Metric[];
  n: number;
}

/** Metrics whose per-slice values combine exactly (sums of counts and sums, min of mins…). */
const MERGEABLE = new Set(['count', 'sum', 'min', 'max']);

export const Summary: QueryTypeDef<SummaryParams, SummaryResult> = {
  name: 'Summary',
  description:
    'Metrics over matching events, in total and per group. Metric keys are `count` or `<op>_<field>` (e.g. `avg_bytes`); non-numeric values are ignored by numeric metrics.',
  params: withCommon({
    group_by: Type.Array(FieldName('A field to group by'), { default: [], maxItems: 5 }),
    metrics: Type.Array(
      Type.Object(
        {
          op: Type.Union(METRIC_OPS.map((o) => Type.Literal(o))),
          field: Type.Optional(FieldName('The field the metric reads (required except for count)')),
        },
        { additionalProperties: false },
      ),
      { default: [{ op: 'count' }], minItems: 1, maxItems: 20 },
    ),
    n: Type.Integer({ minimum: 1, maximum: 10_000, default: 100 }),
  }),
  results: Type.Object({
    totals: Type.Record(Type.String(), Type.Union([Type.Number(), Type.Null()])),
    details: Type.Array(
      Type.Object({ group: Type.Record(Type.String(), Type.Unknown()), count: Type.Integer() }),
    ),
  }),
  plan: (p, filter, range) => ({
    kind: 'summary',
    filter,
    range,
    groupBy: p.group_by,
    metrics: p.metrics,
    n: p.n,
  }),
  slicing: (p) =>
    p.group_by.length === 0 && p.metrics.every((m) => MERGEABLE.has(m.op)) ? 'newest-first' : null,
  merge: (acc, part, p) => {
    const totals: Record<string, number | null> = {
      count: (acc.totals.count ?? 0) + (part.totals.count ?? 0),
    };
    for (const m of p.metrics) {
      const key = m.field ? `${m.op}_${m.field}` : m.op;
      const a = acc.totals[key] ?? null;
      const b = part.totals[key] ?? null;
      if (a === null || b === null) totals[key] = a ?? b;
      else if (m.op === 'min') totals[key] = Math.min(a, b);
      else if (m.op === 'max') totals[key] = Math.max(a, b);
      else totals[key] = a + b;
    }
    return { totals, details: [] };
  },
  present: (r) => ({
    totals: r.totals,
    details: r.details.map((d) => ({ group: d.group, ...d.metrics })),
  }),
};
