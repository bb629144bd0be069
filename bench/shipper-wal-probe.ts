import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import type { NormalisedEvent } from '../src/core/event.js';
import { newEventId } from '../src/core/ids.js';
import { DuckDbEventStore } from '../src/event-store/duckdb/duckdb-event-store.js';
import { tsValue } from '../src/event-store/duckdb/duckdb-schema.js';
import { normaliseRecord } from '../src/ingest/normalise.js';
import { requestReader, requestRecords, writeShipperFile } from './shipper-events.js';

/**
 * A probe run by hand (`node_modules/.bin/tsx bench/shipper-wal-probe.ts [events]`, default
 * 100,000): the write-ahead log each event leaves, with no checkpoint, for the shippers
 * bench's events (bench/shipper-events.ts) appended straight to the store in appends of
 * 1,000 (a shipper's request), 8,192 (a word-index block) and 50,000, and to a plain DuckDB
 * table of the events' own fields flushed every 1,000; the store's appends per second and
 * its word-index rows beside.
 */
const total = Number(process.argv[2] ?? 100_000);
const work = mkdtempSync(path.join(tmpdir(), 'logscope-wal-probe-'));
try {
  const file = writeShipperFile(path.join(work, 'events.ndjson'), total, 1000, false, Date.now());
  const reader = requestReader(file);
  const events: NormalisedEvent[] = [];
  for (let r = 0; r < file.offsets.length - 1; r++)
    for (const record of requestRecords(file, reader.body(r))) {
      const now = Date.now();
      const n = normaliseRecord(record, { receivedAt: now, intake: 'bench', newId: () => newEventId(now) });
      if (!n.ok) throw new Error(n.detail);
      events.push(n.event);
    }
  reader.close();
  const wal = (file: string) => (existsSync(`${file}.wal`) ? statSync(`${file}.wal`).size : 0);
  for (const size of [1000, 8192, 50_000]) {
    const dir = path.join(work, `store-${size}`);
    const store = await DuckDbEventStore.open({
      dataDir: dir,
      memoryLimit: '512MB',
      checkpointThreshold: '10GB',
    });
    const t0 = performance.now();
    for (let i = 0; i < events.length; i += size) await store.append(events.slice(i, i + size));
    const seconds = (performance.now() - t0) / 1000;
    const bytes = wal(path.join(dir, 'events.duckdb'));
    const [blocks] = await store.runSql(
      'SELECT count(*) AS rows, count(DISTINCT id) AS blocks, sum(octet_length(bloom)) AS bloom FROM word_blocks',
    );
    console.log(
      `store, appends of ${size}: WAL ${(bytes / total).toFixed(1)} B/event (${(bytes / 1048576).toFixed(1)} MiB), ` +
        `${(total / seconds).toFixed(0)} events/s; word_blocks ${Number(blocks?.rows)} rows of ${Number(blocks?.blocks)} blocks, ` +
        `${Number(blocks?.bloom)} bytes of bloom`,
    );
    await store.close();
  }
  const rawFile = path.join(work, 'raw.duckdb');
  const instance = await DuckDBInstance.create(rawFile, { checkpoint_threshold: '10GB' });
  const conn = await instance.connect();
  await conn.run(`CREATE TABLE events (ts TIMESTAMP NOT NULL, host VARCHAR, app VARCHAR, severity VARCHAR,
    message VARCHAR, "user" VARCHAR, status INTEGER, bytes BIGINT, trace_id VARCHAR)`);
  const appender = await conn.createAppender('events');
  for (const [i, e] of events.entries()) {
    appender.appendTimestamp(tsValue(e.ts));
    for (const v of [e.host, e.app, e.severity, e.message, e.user]) appender.appendVarchar(v ?? '');
    appender.appendInteger(e.status ?? 0);
    appender.appendBigInt(BigInt(e.bytes ?? 0));
    appender.appendVarchar(e.fields.trace_id ?? '');
    appender.endRow();
    if ((i + 1) % 1000 === 0) appender.flushSync();
  }
  appender.flushSync();
  console.log(`plain table, flushes of 1,000: WAL ${(wal(rawFile) / total).toFixed(1)} B/event`);
  appender.closeSync();
  conn.closeSync();
  instance.closeSync();
} finally {
  rmSync(work, { recursive: true, force: true });
}
