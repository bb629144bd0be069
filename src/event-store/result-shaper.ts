import {
  type LastNResult,
  metricKey,
  type SummaryPlan,
  type SummaryResult,
  type TimelinePlan,
  type TimelineResult,
  type TopNResult,
} from './query-plan.js';

/**
 * The one result shaper: every store's aggregation statements return rows of the same
 * names (topn: v, c; lastn: v, last_seen, first_seen, c; summary: g0…, c, m0…; timeline:
 * b, s, c) and, for TopN and a grouped Summary, a grand-total row apart (plan-executor.ts),
 * and these turn them into the plan's result. Values may come as a driver gives them
 * (bigints, numeric strings).
 */
export type ResultRow = Record<string, unknown>;

/** What one statement returns, the same from every engine: its rows and its grand total, if it computes one. */
export interface StatementRows {
  rows: ResultRow[];
  totals?: ResultRow;
}

/** A grouped value as the API returns it: text or a number (times as epoch ms). */
function plain(v: unknown): string | number | null {
  if (v === null || v === undefined) return null;
  if (typeof v === 'bigint') return Number(v);
  if (typeof v === 'number' || typeof v === 'string') return v;
  return String(v);
}

function numOrNull(v: unknown): number | null {
  if (v === null || v === undefined) return null;
  const n = Number(typeof v === 'object' ? String(v) : v);
  return Number.isFinite(n) ? n : null;
}

export function shapeTopN({ rows, totals }: StatementRows): TopNResult {
  return {
    total: Number(totals?.c ?? 0),
    items: rows.map((r) => ({ value: plain(r.v) as string, count: Number(r.c) })),
  };
}

export function shapeLastN(rows: readonly ResultRow[]): LastNResult {
  return {
    items: rows.map((r) => ({
      value: plain(r.v) as string,
      lastSeen: Number(r.last_seen),
      firstSeen: Number(r.first_seen),
      count: Number(r.c),
    })),
  };
}

export function shapeSummary(plan: SummaryPlan, { rows, totals }: StatementRows): SummaryResult {
  const metricsOf = (r: ResultRow) =>
    Object.fromEntries(plan.metrics.map((m, i) => [metricKey(m), numOrNull(r[`m${i}`])]));
  // Without groups the one row is the total; a total the engine left out counts nothing.
  const totalRow = (plan.groupBy.length ? totals : rows[0]) ?? {};
  const details = plan.groupBy.length
    ? rows.map((r) => ({
        group: Object.fromEntries(plan.groupBy.map((f, i) => [f, plain(r[`g${i}`]) as string | null])),
        metrics: { count: Number(r.c), ...metricsOf(r) },
      }))
    : [];
  return {
    totals: { count: Number(totalRow.c ?? 0), ...metricsOf(totalRow) },
    details,
  };
}

export function shapeTimeline(plan: TimelinePlan, rows: readonly ResultRow[]): TimelineResult {
  const buckets = new Map<number, { startMs: number; count: number; series?: Record<string, number> }>();
  for (const r of rows) {
    const startMs = Number(r.b);
    let b = buckets.get(startMs);
    if (!b) {
      b = { startMs, count: 0, ...(plan.splitBy ? { series: {} } : {}) };
      buckets.set(startMs, b);
    }
    const c = Number(r.c);
    b.count += c;
    if (b.series) {
      const key = r.s === null || r.s === undefined ? 'other' : String(r.s);
      b.series[key] = (b.series[key] ?? 0) + c;
    }
  }
  return { buckets: [...buckets.values()] };
}
