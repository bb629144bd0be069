/**
 * Read-integrity probe (not part of the suite): the failing syslog test's pattern over
 * and over — a fresh store, one small append at a time (as separate ingest calls) with
 * reads polling concurrently on the reader connection (ORDER BY ev_id, as
 * test/helpers/events.ts reads), every string checked exactly.
 *
 *   node_modules/.bin/tsx bench/read-integrity-probe.ts [seconds=60] [memory|disk]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { emptyEvent, type NormalisedEvent } from '../src/core/event.js';
import { newUlid } from '../src/core/ids.js';
import { DuckDbEventStore } from '../src/event-store/duckdb/duckdb-event-store.js';

const seconds = Number(process.argv[2] ?? 60);
const onDisk = process.argv[3] !== 'memory';

const msg = (n: number) =>
  ['udp 5424 hello', 'udp 3164 hello', 'tcp octet hello', 'tcp newline hello'][n % 4] as string;
const hostOf = (n: number) => `host-${n}-0123456789`;

function ev(n: number): NormalisedEvent {
  const now = Date.now();
  return emptyEvent({
    ev_id: newUlid(now),
    ts: now,
    received_at: now,
    host: hostOf(n),
    app: 'myapp',
    severity: 'warning',
    facility: 'auth',
    message: msg(n),
    src_ip: '127.0.0.1',
    bytes: n,
    intake: 'syslog:127.0.0.1',
    fields: { 'syslog.proc_id': String(n), 'sd.origin@32473.ip': '10.1.2.3' },
  });
}

let reads = 0;
let rows = 0;
let bad = 0;
let stores = 0;
const end = Date.now() + seconds * 1000;
while (Date.now() < end) {
  const dir = onDisk ? mkdtempSync(path.join(tmpdir(), 'ri-')) : ':memory:';
  const store = await DuckDbEventStore.open({
    dataDir: dir,
    memoryLimit: '512MB',
    checkpointThreshold: '256MB',
  });
  stores++;
  let appended = 0;
  let done = false;
  const poll = (async () => {
    while (!done) {
      const got = await store.runSql(
        process.env.PROBE_SQL ??
          `SELECT ev_id, message, host, app, severity, ts, received_at, fields, bytes FROM events WHERE message LIKE '% hello' AND app = 'myapp' ORDER BY ev_id`,
        [],
      );
      reads++;
      for (const r of got) {
        rows++;
        const n = Number(r.bytes);
        if (
          r.message !== msg(n) ||
          (r.host !== undefined && r.host !== hostOf(n)) ||
          (r.ok !== undefined && r.ok !== true)
        ) {
          bad++;
          console.log(
            'CORRUPT',
            JSON.stringify(r, (_k, v) => (typeof v === 'bigint' ? String(v) : v)),
          );
        }
      }
    }
  })();
  for (let i = 0; i < 8; i++) {
    await store.append([ev(appended++)]);
    await new Promise((r) => setImmediate(r));
  }
  done = true;
  await poll;
  await store.close();
  if (onDisk) rmSync(dir, { recursive: true, force: true });
}
console.log(
  `probe: ${stores} stores, ${reads} reads, ${rows} rows checked, ${bad} corrupt in ${seconds} s (${onDisk ? 'disk' : 'memory'})`,
);
