import { Type } from 'typebox';
import { METRIC_OPS, type Metric, type SummaryResult } from '../../event-store/query-plan.js';
import type { EventLike } from '../../filter/evaluate.js';
import { fieldValue } from '../../filter/evaluate.js';
import { compareGroupValues, metricValue } from './group-values.js';
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
  /**
   * Counts, sums, minima and maxima fold exactly (averages, distinct counts and
   * percentiles wait for the next full evaluation). A new group joins the details when
   * they held every group; otherwise only the totals count it until the next evaluation.
   */
  fold: {
    accepts: (p) => p.metrics.every((m) => MERGEABLE.has(m.op)),
    apply: (r, events, p) => {
      const totals = { ...r.totals };
      addTo(totals, events, p.metrics);
      if (!p.group_by.length) return { totals, details: [] };
      const complete = r.details.length < p.n;
      const keyOf = (g: Record<string, string | number | null>) =>
        JSON.stringify(p.group_by.map((f) => g[f]));
      const groups = new Map(
        r.details.map((d) => [keyOf(d.group), { group: d.group, metrics: { ...d.metrics } }]),
      );
      const byGroup = new Map<string, { group: Record<string, string | null>; events: EventLike[] }>();
      for (const e of events) {
        const group = Object.fromEntries(
          p.group_by.map((f) => [f, (fieldValue(e, f) ?? null) as string | null]),
        );
        const key = keyOf(group);
        const b = byGroup.get(key);
        if (b) b.events.push(e);
        else byGroup.set(key, { group, events: [e] });
      }
      for (const [key, b] of byGroup) {
        let g = groups.get(key);
        if (!g) {
          if (!complete) continue;
          g = { group: b.group, metrics: { count: 0 } };
          groups.set(key, g);
        }
        addTo(g.metrics, b.events, p.metrics);
      }
      const details = [...groups.values()]
        .sort((a, b) => {
          const byCount = (b.metrics.count ?? 0) - (a.metrics.count ?? 0);
          if (byCount) return byCount;
          for (const f of p.group_by) {
            const c = compareGroupValues(a.group[f] ?? null, b.group[f] ?? null);
            if (c) return c;
          }
          return 0;
        })
        .slice(0, p.n);
      return { totals, details };
    },
  },
  present: (r) => ({
    totals: r.totals,
    details: r.details.map((d) => ({ group: d.group, ...d.metrics })),
  }),
};

/** Adds events to metric values (count, sum, min, max) in place. */
function addTo(values: Record<string, number | null>, events: readonly EventLike[], metrics: Metric[]) {
  values.count = (values.count ?? 0) + events.length;
  for (const m of metrics) {
    if (m.op === 'count' && !m.field) continue;
    const key = m.field ? `${m.op}_${m.field}` : m.op;
    let v = values[key] ?? null;
    for (const e of events) {
      if (m.op === 'count') {
        const x = fieldValue(e, m.field as string);
        if (x !== null && x !== undefined) v = (v ?? 0) + 1;
        continue;
      }
      const x = metricValue(e, m.field ?? 'bytes');
      if (x === null) continue;
      if (v === null) v = x;
      else if (m.op === 'sum') v += x;
      else if (m.op === 'min') v = Math.min(v, x);
      else if (m.op === 'max') v = Math.max(v, x);
    }
    values[key] = m.op === 'count' ? (v ?? 0) : v;
  }
}
