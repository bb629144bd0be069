import { DuckDbEventStore } from '../src/event-store/duckdb/duckdb-event-store.js';
import { flag, fmt, percentile, startServer } from './lib.js';
import { dataSet } from './query.js';

/**
 * An event in its context (docs/api/events.md): `GET /api/events/{id}/context?before=50&after=50` for
 * anchors spread over the data set of `npm run bench -- query` (demo-like events over 24 h;
 * a source is a host and an app), beside the raw engine's straight query for the same
 * answer: the 50 events of the source before and after the anchor, by (ts, stored_at,
 * ev_id), run on DuckDB directly. Besides the sampled anchors, every fifth anchor is on a
 * source that logs once an hour (the data set's `sparse-N` hosts), whose context spans
 * the whole day. Flags: --events 1,000,000, --anchors 100.
 */
export async function main(argv: string[]) {
  const total = flag(argv, 'events', 1_000_000);
  const anchors = flag(argv, 'anchors', 100);
  const { dir } = await dataSet(total);

  // --- raw engine: the anchors, and the best plain SQL for each context
  const store = await DuckDbEventStore.open({
    dataDir: dir,
    memoryLimit: '1GB',
    checkpointThreshold: '256MB',
  });
  const sparseCount = Math.max(1, Math.floor(anchors / 5));
  const picked = [
    ...(await store.runSql(
      `SELECT ev_id, host, app, ts, stored_at FROM events USING SAMPLE ${Math.floor(anchors - sparseCount)} ROWS`,
    )),
    ...(await store.runSql(
      `SELECT ev_id, host, app, ts, stored_at FROM events WHERE host LIKE 'sparse-%' ORDER BY hash(ev_id) LIMIT ${sparseCount}`,
    )),
  ];
  const isSparse = (a: Record<string, unknown>) => String(a.host).startsWith('sparse-');
  const side = (cmp: '<' | '>', dir: 'ASC' | 'DESC') =>
    `SELECT * FROM events WHERE host = $1 AND app = $2 AND (ts, stored_at, ev_id) ${cmp} ($3::TIMESTAMP, $4::TIMESTAMP, $5) ORDER BY ts ${dir}, stored_at ${dir}, ev_id ${dir} LIMIT 50`;
  const raw: number[] = [];
  const rawSparse: number[] = [];
  for (let round = 0; round < 2; round++) {
    for (const a of picked) {
      const time = (v: unknown) => (v as Date).toISOString().replace('T', ' ').replace('Z', '');
      const params = [a.host, a.app, time(a.ts), time(a.stored_at), a.ev_id] as never[];
      const t0 = performance.now();
      await Promise.all([store.runSql(side('<', 'DESC'), params), store.runSql(side('>', 'ASC'), params)]);
      if (round === 1) (isSparse(a) ? rawSparse : raw).push(performance.now() - t0);
    }
  }
  await store.close();

  // --- through the API: a server on the same files
  const server = await startServer({ LOGSCOPE_DATA_DIR: dir, LOGSCOPE_DUCKDB_MEMORY_LIMIT: '1GB' });
  const api: number[] = [];
  const apiSparse: number[] = [];
  try {
    for (let round = 0; round < 2; round++) {
      for (const a of picked) {
        const t0 = performance.now();
        const res = await fetch(`${server.url}/api/events/${a.ev_id}/context?before=50&after=50`, {
          headers: { authorization: `token ${server.token}` },
        });
        const body = (await res.json()) as { before?: unknown[]; after?: unknown[] };
        if (!res.ok || !body.before)
          throw new Error(`context ${a.ev_id}: ${res.status} ${JSON.stringify(body).slice(0, 200)}`);
        if (round === 1) (isSparse(a) ? apiSparse : api).push(performance.now() - t0);
      }
    }
  } finally {
    await server.stop();
  }
  const s = (xs: number[]) => [...xs].sort((x, y) => x - y);
  const [a, r] = [s([...api, ...apiSparse]), s([...raw, ...rawSparse])];
  const [as, rs] = [s(apiSparse), s(rawSparse)];
  console.log('');
  console.log(
    `context ± 50 of ${fmt(picked.length)} anchors (${fmt(apiSparse.length)} on sources logging once an hour) over ${fmt(total)} events (ms)`,
  );
  console.log(`API  p50 ${fmt(percentile(a, 50), 1)}  p95 ${fmt(percentile(a, 95), 1)}  (goal p95 ≤ 50)`);
  console.log(`raw  p50 ${fmt(percentile(r, 50), 1)}  p95 ${fmt(percentile(r, 95), 1)}`);
  console.log(`API / raw at p95: ${fmt(percentile(a, 95) / percentile(r, 95), 2)}×`);
  console.log(
    `sparse sources only: API p50 ${fmt(percentile(as, 50), 1)}  p95 ${fmt(percentile(as, 95), 1)}; raw p50 ${fmt(percentile(rs, 50), 1)}  p95 ${fmt(percentile(rs, 95), 1)}`,
  );
}
