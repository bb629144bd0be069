import { rmSync } from 'node:fs';
import { demoGenerator } from '../src/cli/demo-generator.js';
import { EVENT_COLUMNS } from '../src/core/event.js';
import { DuckDbEventStore } from '../src/event-store/duckdb/duckdb-event-store.js';
import { type BenchServer, flag, fmt, percentile, startServer } from './lib.js';

/**
 * The field list (`GET /api/fields`, docs/api/events.md): the fields of the newest 10,000
 * events a query matches, with their types and top values. N demo events (default
 * 200,000) spread over the last 24 h are ingested through the API (NDJSON, 4 requests at
 * a time) into a fresh server; then each case is asked `--runs` times (after 2 warm-ups):
 * the last hour (about N/24 events, all of them looked at), the last 24 hours (the newest
 * 10,000 of N), and the last 24 hours of one app (`app:nginx`, the newest 10,000 of 60 %).
 *
 * The raw engine: after the server stops, DuckDB on the same files runs SQL written by
 * hand for the same answer (the newest 10,000 matches by `ts`, `ev_id`, their count, and
 * per field its count and its 5 most common values, ties kept), and, to show what the
 * list once cost, the same 10,000 rows read whole as row objects (`SELECT *`).
 *
 * Flags: --events 200000, --runs 15.
 */
export async function main(argv: string[]) {
  const events = flag(argv, 'events', 200_000);
  const runs = flag(argv, 'runs', 15);
  const server = await startServer();
  const to = Date.now() - 60_000;
  const cases = [
    { name: 'last hour', preset: 'last_hour', query: '', fromMs: Date.now() - 3_600_000 },
    { name: 'last 24 h', preset: 'last_24_hours', query: '', fromMs: Date.now() - 86_400_000 },
    {
      name: 'last 24 h, app:nginx',
      preset: 'last_24_hours',
      query: 'app:nginx',
      fromMs: Date.now() - 86_400_000,
    },
  ];
  const api = new Map<string, number[]>();
  const answers = new Map<string, { total: number; events: number; fields: number; bytes: number }>();
  try {
    const seconds = await loadDemo(server, events, to);
    console.log(`\n${fmt(events)} demo events through the API in ${fmt(seconds, 1)} s`);
    for (const c of cases) {
      const url = `${server.url}/api/fields?${new URLSearchParams({ preset: c.preset, ...(c.query ? { query: c.query } : {}) })}`;
      const times: number[] = [];
      for (let i = 0; i < runs + 2; i++) {
        const t0 = performance.now();
        const res = await fetch(url, { headers: { authorization: `token ${server.token}` } });
        const text = await res.text();
        if (!res.ok) throw new Error(`fields ${c.name}: ${res.status} ${text.slice(0, 300)}`);
        if (i >= 2) times.push(performance.now() - t0);
        const body = JSON.parse(text) as { total: number; events: number; fields: unknown[] };
        answers.set(c.name, {
          total: body.total,
          events: body.events,
          fields: body.fields.length,
          bytes: text.length,
        });
      }
      api.set(
        c.name,
        times.sort((a, b) => a - b),
      );
    }
  } finally {
    await server.stop();
  }

  // --- raw engine: DuckDB on the same files, SQL written by hand
  const store = await DuckDbEventStore.open({
    dataDir: server.dataDir,
    memoryLimit: '512MB',
    checkpointThreshold: '256MB',
  });
  const raw = new Map<string, { same: number[]; rows: number[] }>();
  try {
    const extras = (await store.runSql('SELECT key, col FROM field_columns', [])).map(
      (r) => [String(r.key), String(r.col)] as const,
    );
    for (const c of cases) {
      const same: number[] = [];
      const rows: number[] = [];
      const where = `ts >= epoch_ms(${Math.round(c.fromMs)}) AND ts < epoch_ms(${to + 60_000})${c.query ? ` AND app = 'nginx'` : ''}`;
      for (let i = 0; i < runs + 2; i++) {
        let t0 = performance.now();
        await Promise.all([
          store.runSql(sameWorkSql(where, extras), []),
          store.runSql(`SELECT count(*) AS n FROM events WHERE ${where}`, []),
        ]);
        if (i >= 2) same.push(performance.now() - t0);
        t0 = performance.now();
        await store.runSql(
          `SELECT * FROM events WHERE ${where} ORDER BY ts DESC, ev_id DESC LIMIT 10000`,
          [],
        );
        if (i >= 2) rows.push(performance.now() - t0);
      }
      raw.set(c.name, { same: same.sort((a, b) => a - b), rows: rows.sort((a, b) => a - b) });
    }
  } finally {
    await store.close();
    rmSync(server.dataDir, { recursive: true, force: true });
  }

  console.log(`\nGET /api/fields over ${fmt(events)} events, ${runs} runs each (ms)`);
  for (const c of cases) {
    const a = api.get(c.name) as number[];
    const r = raw.get(c.name) as { same: number[]; rows: number[] };
    const answer = answers.get(c.name);
    console.log(
      `${c.name.padEnd(22)} API p50 ${fmt(percentile(a, 50), 1)}  p95 ${fmt(percentile(a, 95), 1)}` +
        `   raw p50 ${fmt(percentile(r.same, 50), 1)}: ${fmt(percentile(a, 50) / percentile(r.same, 50), 2)}×` +
        `   (10,000 rows read whole: p50 ${fmt(percentile(r.rows, 50), 1)})` +
        `   ${fmt(answer?.events ?? 0)} of ${fmt(answer?.total ?? 0)} events, ${answer?.fields} fields, ${fmt((answer?.bytes ?? 0) / 1024, 1)} KiB`,
    );
  }
  console.log('goal: the last hour well under 200 ms');
}

/**
 * The answer's work as one statement written by hand: the sample, every value in it as
 * (field, text), its count per field and its top 5 per field (ties kept).
 */
function sameWorkSql(where: string, extras: ReadonlyArray<readonly [string, string]>): string {
  const skipped = new Set(['ev_id', 'received_at', 'stored_at', 'ts']);
  const columns = EVENT_COLUMNS.filter((c) => !skipped.has(c)).map(
    (c) => `SELECT '${c}' AS name, CAST("${c}" AS VARCHAR) AS v FROM s WHERE "${c}" IS NOT NULL`,
  );
  const own = extras.map(
    ([key, col]) =>
      `SELECT '${key.replaceAll("'", "''")}' AS name, "${col}" AS v FROM s WHERE "${col}" IS NOT NULL`,
  );
  return `WITH s AS MATERIALIZED (SELECT * FROM events WHERE ${where} ORDER BY ts DESC, ev_id DESC LIMIT 10000),
    kv AS (${[...columns, ...own, 'SELECT unnest(map_keys(fields)) AS name, unnest(map_values(fields)) AS v FROM s'].join(' UNION ALL ')}),
    g AS (SELECT name, v, count(*) AS c FROM kv GROUP BY ALL)
    SELECT name, v, c, sum(c) OVER (PARTITION BY name) AS total FROM g
    QUALIFY rank() OVER (PARTITION BY name ORDER BY c DESC) <= 5`;
}

async function ingest(server: BenchServer, records: object[]): Promise<void> {
  const res = await fetch(`${server.url}/api/ingest`, {
    method: 'POST',
    headers: { authorization: `token ${server.token}`, 'content-type': 'application/x-ndjson' },
    body: `${records.map((r) => JSON.stringify(r)).join('\n')}\n`,
  });
  const json = (await res.json()) as { accepted?: number };
  if (!res.ok || json.accepted !== records.length)
    throw new Error(`ingest: ${res.status} ${JSON.stringify(json).slice(0, 300)}`);
}

/** `count` demo events evenly over the 24 h before `to`, 4 requests at a time; seconds taken. */
export async function loadDemo(server: BenchServer, count: number, to: number): Promise<number> {
  const gen = demoGenerator(7);
  const from = to - 24 * 3_600_000 + 120_000;
  const batch = 5000;
  let next = 0;
  let done = 0;
  const worker = async () => {
    while (next < count) {
      const first = next;
      next += batch;
      const n = Math.min(batch, count - first);
      const records = Array.from({ length: n }, (_, k) =>
        gen.next(Math.round(from + ((to - from) * (first + k)) / count)),
      );
      await ingest(server, records);
      done += n;
      process.stderr.write(`\r  ingest: ${fmt(done)} events`);
    }
  };
  const t0 = performance.now();
  await Promise.all([worker(), worker(), worker(), worker()]);
  return (performance.now() - t0) / 1000;
}
