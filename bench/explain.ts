import { changeCountsSql, fieldPresenceSql } from '../src/event-store/duckdb/duckdb-changes.js';
import { DuckDbEventStore } from '../src/event-store/duckdb/duckdb-event-store.js';
import { groupSql } from '../src/event-store/duckdb/duckdb-plans.js';
import { SYSTEM_SCOPE } from '../src/event-store/read-scope.js';
import { SqlParams } from '../src/event-store/sql/sql-params.js';
import { TRUE } from '../src/filter/ast.js';
import { type BenchServer, flag, fmt, percentile, startServer } from './lib.js';
import { API_QUERY_ENV, dataSet } from './query.js';

/**
 * `npm run bench -- explain [--events N] [--runs R]`: an Explain (docs/api/explain.md) over
 * the query bench's data set (N demo-like events over 24 hours, default 1,000,000, built
 * once under .bench/), the last hour its focus and the hour before its baseline, with the
 * default fields, through the API; beside it, through the same server, a TopN of
 * `pattern_id` over each of the two windows (goal: Explain ≤ 2× the two), and the raw
 * engine's two GROUP BYs of `pattern_id` on the same files; beside the Explain, its two
 * statements on the raw engine (the focus window's fields, the counts) and the floor of
 * its counting: one plain GROUP BY a key and window, no cut to the most common.
 */
export async function main(argv: string[]) {
  const total = flag(argv, 'events', 1_000_000);
  const runs = flag(argv, 'runs', 15);
  const { dir, windowEnd } = await dataSet(total);
  const HOUR = 3_600_000;
  // Whole seconds, as a time range takes them.
  const end = Math.floor(windowEnd / 1000) * 1000;
  const focus = { fromMs: end - HOUR, toMs: end };
  const baseline = { fromMs: end - 2 * HOUR, toMs: end - HOUR };
  const seconds = (w: { fromMs: number; toMs: number }) => ({
    ts_from: w.fromMs / 1000,
    ts_to: w.toMs / 1000,
  });

  // --- through the API, on the same files
  const server = await startServer({
    LOGSCOPE_DATA_DIR: dir,
    LOGSCOPE_DUCKDB_MEMORY_LIMIT: '1GB',
    ...API_QUERY_ENV,
  });
  const explain: number[] = [];
  const patternsOnly: number[] = [];
  const topn: number[] = [];
  let answer: {
    focus_total: number;
    baseline_total: number;
    fields: string[];
    tested: number;
    changes: unknown[];
  };
  try {
    for (let i = 0; i < runs + 2; i++) {
      // Taking turns run by run, so what the machine does meanwhile falls on all alike.
      let t0 = performance.now();
      answer = (await query(server, 'Explain', { time_range: seconds(focus) })) as typeof answer;
      if (i >= 2) explain.push(performance.now() - t0);
      t0 = performance.now();
      await query(server, 'Explain', { time_range: seconds(focus), fields: [] });
      if (i >= 2) patternsOnly.push(performance.now() - t0);
      t0 = performance.now();
      await query(server, 'TopN', { time_range: seconds(focus), field: 'pattern_id', n: 1000 });
      await query(server, 'TopN', { time_range: seconds(baseline), field: 'pattern_id', n: 1000 });
      if (i >= 2) topn.push(performance.now() - t0);
    }
  } finally {
    await server.stop();
  }
  // --- the raw engine on the same files: one GROUP BY of pattern_id a window, and the
  // statement the service runs for the default fields' counts (the same work, straight)
  const raw: number[] = [];
  const rawCounts: number[] = [];
  const rawPresence: number[] = [];
  const floor: number[] = [];
  {
    const store = await DuckDbEventStore.open({
      dataDir: dir,
      memoryLimit: '1GB',
      checkpointThreshold: '256MB',
    });
    const within = (w: { fromMs: number; toMs: number }) =>
      `ts >= epoch_ms(${w.fromMs}) AND ts < epoch_ms(${w.toMs})`;
    const groupBy = (w: { fromMs: number; toMs: number }) =>
      `SELECT pattern_id, count(*) FROM events WHERE ${within(w)} AND pattern_id IS NOT NULL GROUP BY ALL`;
    const narrowing = { columnOf: store.extras.columnOf, extraColumns: store.extras.columns };
    const plan = {
      kind: 'changes' as const,
      filter: TRUE,
      range: focus,
      baseline,
      scope: SYSTEM_SCOPE,
      fields: answer!.fields,
      n: 20,
      minScore: 20,
    };
    const counts = changeCountsSql(plan, narrowing, narrowing);
    const presence = fieldPresenceSql(plan, narrowing);
    // The floor: every key's values counted in each window, one plain GROUP BY each (what
    // any exact answer reads and hashes), the groups only counted.
    const params = new SqlParams(undefined, store.extras.columnOf);
    const keys = ['pattern_id', ...answer!.fields.map((f) => groupSql(f, params))];
    const plain = keys
      .flatMap((k) =>
        [focus, baseline].map(
          (w) =>
            `SELECT count(*) FROM (SELECT ${k} AS v, count(*) FROM events WHERE ${within(w)} AND v IS NOT NULL GROUP BY v)`,
        ),
      )
      .join(' UNION ALL ');
    for (let i = 0; i < runs + 2; i++) {
      let t0 = performance.now();
      await store.runSql(groupBy(focus), []);
      await store.runSql(groupBy(baseline), []);
      if (i >= 2) raw.push(performance.now() - t0);
      t0 = performance.now();
      await store.runSql(presence.sql, presence.params.values as never);
      if (i >= 2) rawPresence.push(performance.now() - t0);
      t0 = performance.now();
      await store.runSql(counts.sql, counts.params.values as never);
      if (i >= 2) rawCounts.push(performance.now() - t0);
      t0 = performance.now();
      await store.runSql(plain, params.values as never);
      if (i >= 2) floor.push(performance.now() - t0);
    }
    await store.close();
  }
  const p50 = (xs: number[]) =>
    percentile(
      [...xs].sort((a, b) => a - b),
      50,
    );
  const e = p50(explain);
  const t = p50(topn);
  const r = p50(raw);
  const rc = p50(rawCounts);
  const rp = p50(rawPresence);
  const fl = p50(floor);
  const a = answer!;
  console.log(
    `\nExplain over ${fmt(total)} events (24 h), focus the last hour, baseline the hour before: ${fmt(a.focus_total)} / ${fmt(a.baseline_total)} events, ${a.fields.length} fields examined (${a.fields.join(', ')}), ${fmt(a.tested)} candidates, ${a.changes.length} listed`,
  );
  console.log('| measure (ms p50) | service | raw DuckDB | ratio to raw | goal |');
  console.log('|---|---|---|---|---|');
  console.log(
    `| Explain (default fields) | ${fmt(e, 1)} | ${fmt(rp + rc, 1)} (its statements: fields ${fmt(rp, 1)}, counts ${fmt(rc, 1)}) | ${fmt(e / (rp + rc), 2)}× | ≤ 2× the two TopN: ${fmt(e / t, 2)}× ${e <= 2 * t ? '✓' : '✗'} |`,
  );
  console.log(
    `| its counting's floor: a plain GROUP BY a key and window (${a.fields.length + 1} × 2) | | ${fmt(fl, 1)} | | ${fmt(fl / r, 2)}× the two GROUP BYs of \`pattern_id\` |`,
  );
  const o = p50(patternsOnly);
  console.log(
    `| Explain, patterns only (\`fields: []\`) | ${fmt(o, 1)} | ${fmt(r, 1)} | ${fmt(o / r, 2)}× | ≤ 2× the two TopN: ${fmt(o / t, 2)}× ${o <= 2 * t ? '✓' : '✗'} |`,
  );
  console.log(
    `| TopN pattern_id, both windows | ${fmt(t, 1)} | ${fmt(r, 1)} (two GROUP BYs) | ${fmt(t / r, 2)}× | |`,
  );
}

async function query(server: BenchServer, type: string, params: Record<string, unknown>): Promise<unknown> {
  const headers = { authorization: `token ${server.token}`, 'content-type': 'application/json' };
  let res = await fetch(`${server.url}/api/query`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ type, params }),
  });
  let json = (await res.json()) as { status?: string; query_id?: string; results?: unknown };
  while (res.status === 202 && (json.status === 'PENDING' || json.status === 'IN_PROGRESS')) {
    await new Promise((ok) => setTimeout(ok, 10));
    res = await fetch(`${server.url}/api/query/${json.query_id}`, { headers });
    json = (await res.json()) as typeof json;
  }
  if (!res.ok || json.status !== 'SUCCESS')
    throw new Error(`${type}: ${res.status} ${JSON.stringify(json).slice(0, 300)}`);
  return json.results;
}
