import {
  bucketWidth,
  type LastNResult,
  metricKey,
  type PatternsPlan,
  type PatternsResult,
  type SummaryPlan,
  type SummaryResult,
  type TablePlan,
  type TableResult,
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

/** The top patterns (count, first and last seen, series) from their rows per bucket, most common first. */
export function shapePatternCounts(plan: PatternsPlan, { rows }: StatementRows): PatternsResult {
  const byId = new Map<string, PatternsResult['items'][number]>();
  for (const r of rows) {
    const id = String(r.v);
    let item = byId.get(id);
    if (!item) {
      item = {
        patternId: id,
        count: 0,
        firstSeen: Number.POSITIVE_INFINITY,
        lastSeen: Number.NEGATIVE_INFINITY,
        series: new Array<number>(plan.buckets).fill(0),
        samples: [],
      };
      byId.set(id, item);
    }
    const c = Number(r.c);
    const b = Math.min(plan.buckets - 1, Math.max(0, Number(r.b)));
    item.count += c;
    item.series[b] = (item.series[b] ?? 0) + c;
    item.firstSeen = Math.min(item.firstSeen, Number(r.first_seen));
    item.lastSeen = Math.max(item.lastSeen, Number(r.last_seen));
  }
  const items = [...byId.values()].sort(
    (a, b) => b.count - a.count || (a.patternId < b.patternId ? -1 : a.patternId > b.patternId ? 1 : 0),
  );
  return { total: Number(rows[0]?.total ?? 0), items };
}

/** Samples per pattern (the newest, by time then id). */
const SAMPLES = 3;

/**
 * Where the newest samples of every listed pattern begin: for each, the start of the
 * latest bucket from which on it has `SAMPLES` events (or all it has); the earliest of
 * those. Its newest events, ties on their time included, are all at or after it.
 */
export function samplesFrom(plan: PatternsPlan, counts: PatternsResult): number {
  const width = bucketWidth(plan);
  let from = plan.range.toMs;
  for (const item of counts.items) {
    let seen = 0;
    let b = item.series.length - 1;
    for (; b > 0; b--) {
      seen += item.series[b] ?? 0;
      if (seen >= SAMPLES) break;
    }
    from = Math.min(from, plan.range.fromMs + b * width);
  }
  return from;
}

/** The counts with each pattern's samples and (when compared) earlier count. */
export function shapePatternDetails(
  counts: PatternsResult,
  samples: readonly ResultRow[],
  previous: readonly ResultRow[] | null,
): PatternsResult {
  const byId = new Map(counts.items.map((i) => [i.patternId, { ...i }]));
  for (const r of samples) {
    const item = byId.get(String(r.v));
    if (item && item.samples.length < SAMPLES)
      item.samples = [
        ...item.samples,
        { evId: String(r.ev_id), ts: Number(r.ts), message: r.message == null ? null : String(r.message) },
      ];
  }
  if (previous) {
    const before = new Map(previous.map((r) => [String(r.v), Number(r.c)]));
    for (const item of byId.values()) item.previousCount = before.get(item.patternId) ?? 0;
  }
  return { total: counts.total, items: [...byId.values()] };
}

/** A Table's rows `{ c0, c1, … }` as cells of each column's type (numbers from bigints or numeric strings). */
export function shapeTable(plan: TablePlan, rows: readonly ResultRow[], totalRows: number): TableResult {
  const columns = plan.program.columns.map((c) => ({ name: c.name, type: c.type }));
  const numeric = columns.map((c) => c.type === 'number' || c.type === 'time');
  return {
    columns,
    rows: rows.map((r) =>
      columns.map((_, i) => {
        const v = r[`c${i}`];
        if (v === null || v === undefined) return null;
        if (numeric[i]) {
          const n = Number(typeof v === 'object' ? String(v) : v);
          return Number.isFinite(n) ? n : null;
        }
        return String(v);
      }),
    ),
    totalRows,
  };
}
