import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { emptyEvent } from '../src/core/event.js';
import { newUlid } from '../src/core/ids.js';
import { DuckDbEventStore } from '../src/event-store/duckdb/duckdb-event-store.js';

const mode = process.argv[2] ?? 'readAll';
const seconds = Number(process.argv[3] ?? 15);
const sql = process.env.PROBE_SQL ?? `SELECT message, bytes FROM events ORDER BY ev_id`;
const msg = (n: number) =>
  ['udp 5424 hello', 'udp 3164 hello', 'tcp octet hello', 'tcp newline hello'][n % 4] as string;
let reads = 0,
  rows = 0,
  bad = 0,
  stores = 0;
const end = Date.now() + seconds * 1000;
let lock: Promise<unknown> = Promise.resolve();
function exclusive<T>(fn: () => Promise<T>): Promise<T> {
  if (!process.env.LOCK) return fn();
  const run = lock.then(fn);
  lock = run.catch(() => undefined);
  return run;
}
async function read(conn: DuckDBConnection): Promise<Record<string, unknown>[]> {
  if (mode === 'lock-exec') {
    const result = await exclusive(() => conn.run(sql, []));
    const names = result.deduplicatedColumnNames();
    const chunks = await result.fetchAllChunks();
    const out: Record<string, unknown>[] = [];
    for (const c of chunks)
      for (const row of c.getRows()) out.push(Object.fromEntries(names.map((n, i) => [n, row[i]])));
    return out;
  }
  if (mode === 'lock-fetch') {
    const result = await conn.run(sql, []);
    const names = result.deduplicatedColumnNames();
    return exclusive(async () => {
      const chunks = await result.fetchAllChunks();
      const out: Record<string, unknown>[] = [];
      for (const c of chunks)
        for (const row of c.getRows()) out.push(Object.fromEntries(names.map((n, i) => [n, row[i]])));
      return out;
    });
  }
  return exclusive(() => read0(conn));
}
async function read0(conn: DuckDBConnection): Promise<Record<string, unknown>[]> {
  if (mode === 'readAll') return (await conn.runAndReadAll(sql, [])).getRowObjectsJS();
  if (mode === 'eager') {
    const result = await conn.run(sql, []);
    const names = result.columnNames();
    const out: Record<string, unknown>[] = [];
    for (;;) {
      const chunk = await result.fetchChunk();
      if (!chunk || chunk.rowCount === 0) break;
      for (const row of chunk.getRows()) out.push(Object.fromEntries(names.map((n, i) => [n, row[i]])));
    }
    return out;
  }
  if (mode === 'keep-prepared') {
    const prepared = await conn.prepare(sql);
    try {
      prepared.bind([]);
      const reader = await prepared.runAndReadAll();
      return reader.getRowObjectsJS();
    } finally {
      prepared.destroySync();
    }
  }
  if (mode === 'nosql-params') return (await conn.runAndReadAll(sql)).getRowObjectsJS();
  throw new Error(mode);
}
while (Date.now() < end) {
  const dir = mkdtempSync(path.join(tmpdir(), 'ri-'));
  const store = await DuckDbEventStore.open({
    dataDir: dir,
    memoryLimit: '512MB',
    checkpointThreshold: '256MB',
  });
  const conn = (store as unknown as { db: { reader: DuckDBConnection } }).db.reader;
  stores++;
  let appended = 0,
    done = false;
  const poll = (async () => {
    while (!done) {
      const got = await read(conn);
      reads++;
      for (const r of got) {
        rows++;
        if (r.message !== msg(Number(r.bytes))) {
          bad++;
          if (bad < 4)
            console.log(
              'CORRUPT',
              JSON.stringify(r, (_k, v) => (typeof v === 'bigint' ? String(v) : v)),
            );
        }
      }
    }
  })();
  if (process.env.SEQ) {
    done = true;
    await poll;
  }
  for (let i = 0; i < 8; i++) {
    const now = Date.now();
    await exclusive(() =>
      store.append([
        emptyEvent({
          ev_id: newUlid(now),
          ts: now,
          received_at: now,
          host: 'h',
          app: 'myapp',
          severity: 'warning',
          message: msg(appended),
          bytes: appended++,
          intake: 'x',
        }),
      ]),
    );
    await new Promise((r) => setImmediate(r));
  }
  if (process.env.SEQ) {
    for (let k = 0; k < 20; k++) {
      const got = await read(conn);
      reads++;
      for (const r of got) {
        rows++;
        if (r.message !== msg(Number(r.bytes))) {
          bad++;
          if (bad < 4) console.log('CORRUPT-SEQ', JSON.stringify(r.message));
        }
      }
    }
  }
  done = true;
  await poll;
  await store.close();
  rmSync(dir, { recursive: true, force: true });
}
console.log(`${mode}: ${stores} stores, ${reads} reads, ${rows} rows, ${bad} corrupt`);
