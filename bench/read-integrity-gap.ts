/**
 * Is a statement prepared before an append, and executed after it, what reads wrong?
 *   node_modules/.bin/tsx bench/read-integrity-gap.ts [gap|nogap] [rounds]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { emptyEvent } from '../src/core/event.js';
import { newUlid } from '../src/core/ids.js';
import { DuckDbEventStore } from '../src/event-store/duckdb/duckdb-event-store.js';

const mode = process.argv[2] ?? 'gap';
const rounds = Number(process.argv[3] ?? 100);
const sql = process.env.PROBE_SQL ?? `SELECT message, bytes FROM events ORDER BY ev_id`;
const msg = (n: number) =>
  ['udp 5424 hello', 'udp 3164 hello', 'tcp octet hello', 'tcp newline hello'][n % 4] as string;
let reads = 0,
  rows = 0,
  bad = 0;
for (let s = 0; s < rounds; s++) {
  const dir = mkdtempSync(path.join(tmpdir(), 'ri-'));
  const store = await DuckDbEventStore.open({
    dataDir: dir,
    memoryLimit: '512MB',
    checkpointThreshold: '256MB',
  });
  const conn = (store as unknown as { db: { reader: DuckDBConnection } }).db.reader;
  let n = 0;
  const append = () => {
    const now = Date.now();
    return store.append([
      emptyEvent({
        ev_id: newUlid(now),
        ts: now,
        received_at: now,
        host: 'h',
        app: 'myapp',
        severity: 'warning',
        message: msg(n),
        bytes: n++,
        intake: 'x',
      }),
    ]);
  };
  for (let i = 0; i < 8; i++) {
    const prepared = await conn.prepare(sql);
    if (mode === 'gap') await append();
    prepared.bind([]);
    let got: Record<string, unknown>[];
    if (mode === 'gap-after-start') {
      const pending = prepared.start();
      await append();
      got = (await pending.readAll()).getRowObjectsJS();
    } else if (mode === 'start-no-gap') {
      got = (await prepared.start().readAll()).getRowObjectsJS();
    } else got = (await prepared.runAndReadAll()).getRowObjectsJS();
    prepared.destroySync();
    if (mode === 'nogap' || mode === 'start-no-gap') await append();
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
  await store.close();
  rmSync(dir, { recursive: true, force: true });
}
console.log(`${mode}: ${reads} reads, ${rows} rows, ${bad} corrupt`);
