import { Type } from 'typebox';
import { autoInterval, INTERVAL_UNITS } from '../../core/time.js';
import { fieldError } from '../../errors/errors.js';
import type { TimelineResult, TimeWindow } from '../../event-store/query-plan.js';
import { fieldValue } from '../../filter/evaluate.js';
import { type CommonParamValues, FieldName, type QueryTypeDef, withCommon } from './query-type.js';

export interface TimelineParams extends CommonParamValues {
  interval: string;
  split_by?: string;
}

export const SERIES = 5;

export function intervalMs(interval: string): number {
  const m = /^([1-9][0-9]{0,4})([smhd])$/.exec(interval);
  const ms = m ? Number(m[1]) * (INTERVAL_UNITS[m[2] as string] as number) : Number.NaN;
  if (!(ms >= 1000 && ms <= 86_400_000)) {
    throw fieldError(
      'params.interval',
      `"${interval}" is not auto or an interval from 1s to 1d (e.g. 30s, 5m, 1h).`,
    );
  }
  return ms;
}

/** The interval for a window: the named one, or for `auto` the finest rung within the bucket cap. */
export function chooseInterval(interval: string, w: TimeWindow): { ms: number; label: string } {
  if (interval !== 'auto') {
    const ms = intervalMs(interval);
    if ((w.toMs - w.fromMs) / ms > 50_000) {
      throw fieldError(
        'params.interval',
        `"${interval}" would make more than 50,000 buckets for this time range.`,
      );
    }
    return { ms, label: interval };
  }
  return autoInterval(w);
}

export const Timeline: QueryTypeDef<TimelineParams, TimelineResult> = {
  name: 'Timeline',
  description: `Event counts per time bucket (empty buckets are 0). With split_by, the top ${SERIES} values of that field as series plus \`other\`.`,
  params: withCommon({
    interval: Type.String({ default: 'auto', description: 'auto, or 1s..1d such as 30s, 1m, 5m, 1h' }),
    split_by: Type.Optional(FieldName('A field whose top values become series')),
  }),
  results: Type.Object({
    interval: Type.String(),
    buckets: Type.Array(
      Type.Object({
        ts: Type.Integer(),
        count: Type.Integer(),
        series: Type.Optional(Type.Record(Type.String(), Type.Integer())),
      }),
    ),
  }),
  // Every slice buckets at the interval of the whole range, the one `present` reads by.
  plan: (p, filter, range, whole) => ({
    kind: 'timeline',
    filter,
    range,
    intervalMs: chooseInterval(p.interval, whole ?? range).ms,
    ...(p.split_by ? { splitBy: p.split_by } : {}),
    series: SERIES,
  }),
  // Series are the top values over the whole range, so split timelines run as one statement.
  slicing: (p) => (p.split_by ? null : 'newest-first'),
  merge: (acc, part) => ({ ...acc, buckets: [...part.buckets, ...acc.buckets] }),
  align: (p, w) => chooseInterval(p.interval, w).ms,
  /**
   * Bucket counts fold exactly. With split_by, a value that is a series counts in it; a
   * new value becomes a series while there are fewer than the series cap, otherwise it
   * counts in `other` until the next full evaluation ranks the series again.
   */
  fold: {
    accepts: () => true,
    apply: (r, events, p, w) => {
      const { ms } = chooseInterval(p.interval, w);
      const buckets = new Map(
        r.buckets.map((b) => [b.startMs, { ...b, ...(b.series ? { series: { ...b.series } } : {}) }]),
      );
      const names = new Set<string>();
      if (p.split_by) for (const b of r.buckets) for (const k of Object.keys(b.series ?? {})) names.add(k);
      names.delete('other');
      for (const e of events) {
        if (typeof e.ts !== 'number') continue;
        const startMs = Math.floor(e.ts / ms) * ms;
        let b = buckets.get(startMs);
        if (!b) {
          b = { startMs, count: 0, ...(p.split_by ? { series: {} } : {}) };
          buckets.set(startMs, b);
        }
        b.count++;
        if (!p.split_by || !b.series) continue;
        const v = fieldValue(e, p.split_by);
        let key = v === null || v === undefined ? 'other' : String(v);
        if (key !== 'other' && !names.has(key)) {
          if (names.size < SERIES) names.add(key);
          else key = 'other';
        }
        b.series[key] = (b.series[key] ?? 0) + 1;
      }
      return { buckets: [...buckets.values()].sort((a, b) => a.startMs - b.startMs) };
    },
  },
  present: (r, p, { window: w }) => {
    const { ms, label } = chooseInterval(p.interval, w);
    const byStart = new Map(r.buckets.map((b) => [b.startMs, b]));
    const seriesNames = new Set<string>();
    for (const b of r.buckets) for (const k of Object.keys(b.series ?? {})) seriesNames.add(k);
    const buckets = [];
    for (let t = Math.floor(w.fromMs / ms) * ms; t < w.toMs; t += ms) {
      const b = byStart.get(t);
      const entry: { ts: number; count: number; series?: Record<string, number> } = {
        ts: t / 1000,
        count: b?.count ?? 0,
      };
      if (p.split_by) {
        entry.series = Object.fromEntries([...seriesNames].map((s) => [s, b?.series?.[s] ?? 0]));
      }
      buckets.push(entry);
    }
    return { interval: label, buckets };
  },
};
