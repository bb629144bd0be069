import { Type } from 'typebox';
import type { LastNResult, TopNResult } from '../../event-store/query-plan.js';
import { fieldValue } from '../../filter/evaluate.js';
import { compareGroupValues } from './group-values.js';
import { type CommonParamValues, FieldName, type QueryTypeDef, withCommon } from './query-type.js';

export interface TopNParams extends CommonParamValues {
  field: string;
  n: number;
}

const Value = Type.Union([Type.String(), Type.Number(), Type.Null()]);

/** Read-time GeoIP of an item (src/enrich/geoip.ts); not part of the stored results. */
const Geo = Type.Optional(
  Type.Object(
    {
      country_code: Type.Optional(Type.String()),
      country: Type.Optional(Type.String()),
      city: Type.Optional(Type.String()),
      lat: Type.Optional(Type.Number()),
      lon: Type.Optional(Type.Number()),
      asn: Type.Optional(Type.Integer()),
    },
    { description: 'With add_geoip_data=true, on IP values the database places; keys absent when unknown.' },
  ),
);

/** Time-valued groups come back from the store in ms; the API speaks seconds. */
const outValue = (field: string, v: string | number) =>
  typeof v === 'number' && (field === 'ts' || field === 'received_at' || field === 'stored_at')
    ? v / 1000
    : v;

export const TopN: QueryTypeDef<TopNParams, TopNResult> = {
  name: 'TopN',
  description:
    'The most frequent values of a field among matching events. `total` counts matching events that have the field; `other` those whose value is not in the top n.',
  params: withCommon({
    field: FieldName('The field to count values of'),
    n: Type.Integer({ minimum: 1, maximum: 1000, default: 10 }),
  }),
  results: Type.Object({
    total: Type.Integer(),
    items: Type.Array(Type.Object({ value: Value, count: Type.Integer(), share: Type.Number(), geo: Geo })),
    other: Type.Integer(),
  }),
  plan: (p, filter, range) => ({ kind: 'topn', filter, range, field: p.field, n: p.n }),
  slicing: () => null,
  merge: (_acc, part) => part,
  /**
   * Counts of listed values and the total are exact. A value not listed joins the list
   * when the list held every value; otherwise it counts in `other` until the next full
   * evaluation, which also finds one that has overtaken a listed value.
   */
  fold: {
    accepts: () => true,
    apply: (r, events, p) => {
      const complete = r.items.reduce((s, i) => s + i.count, 0) === r.total;
      const items = new Map(r.items.map((i) => [i.value, { ...i }]));
      let total = r.total;
      for (const e of events) {
        const v = fieldValue(e, p.field);
        if (v === null || v === undefined) continue;
        total++;
        const item = items.get(v as string);
        if (item) item.count++;
        else if (complete && items.size < p.n) items.set(v as string, { value: v as string, count: 1 });
      }
      const sorted = [...items.values()].sort(
        (a, b) => b.count - a.count || compareGroupValues(a.value, b.value),
      );
      return { total, items: sorted };
    },
  },
  present: (r, p) => {
    const top = r.items.reduce((s, i) => s + i.count, 0);
    return {
      total: r.total,
      items: r.items.map((i) => ({
        value: outValue(p.field, i.value),
        count: i.count,
        share: r.total ? i.count / r.total : 0,
      })),
      other: r.total - top,
    };
  },
};

export const LastN: QueryTypeDef<TopNParams, LastNResult> = {
  name: 'LastN',
  description: 'The n most recently seen distinct values of a field, newest first.',
  params: withCommon({
    field: FieldName('The field whose values to list'),
    n: Type.Integer({ minimum: 1, maximum: 1000, default: 10 }),
  }),
  results: Type.Object({
    items: Type.Array(
      Type.Object({
        value: Value,
        last_seen: Type.Number(),
        first_seen: Type.Number(),
        count: Type.Integer(),
        geo: Geo,
      }),
    ),
  }),
  plan: (p, filter, range) => ({ kind: 'lastn', filter, range, field: p.field, n: p.n }),
  slicing: () => null,
  merge: (_acc, part) => part,
  /**
   * Exact while the list holds every value. Once it is full, a value seen again that was
   * not listed enters it with this sighting's time as first seen and a count of 1 until
   * the next full evaluation reads its history.
   */
  fold: {
    accepts: () => true,
    apply: (r, events, p) => {
      const items = new Map(r.items.map((i) => [i.value, { ...i }]));
      for (const e of events) {
        const v = fieldValue(e, p.field);
        if (v === null || v === undefined || typeof e.ts !== 'number') continue;
        const item = items.get(v as string);
        if (item) {
          item.count++;
          item.lastSeen = Math.max(item.lastSeen, e.ts);
          item.firstSeen = Math.min(item.firstSeen, e.ts);
        } else items.set(v as string, { value: v as string, lastSeen: e.ts, firstSeen: e.ts, count: 1 });
      }
      const sorted = [...items.values()].sort(
        (a, b) => b.lastSeen - a.lastSeen || compareGroupValues(a.value, b.value),
      );
      return { items: sorted.slice(0, p.n) };
    },
  },
  present: (r, p) => ({
    items: r.items.map((i) => ({
      value: outValue(p.field, i.value),
      last_seen: i.lastSeen / 1000,
      first_seen: i.firstSeen / 1000,
      count: i.count,
    })),
  }),
};
