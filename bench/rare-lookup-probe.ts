/**
 * Probe (issue 75): what finding a token in 5 events costs raw DuckDB by each way of
 * saying where the events are, on the shipper bench's events appended in arrival order
 * (2 % late by up to an hour) into a table shaped as the store's (ZSTD messages):
 *
 *   npx tsx bench/rare-lookup-probe.ts [--events 1000000] [--runs 15] [--block 8192]
 *
 * A scan; the ranges of the 8,192-event blocks that hold the events (with their late events,
 * as the index keeps them today, and without); their exact `ts`; their row ids (ranges and
 * exact). Prints the median of each, and its ratio to the scan.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { tsValue } from '../src/event-store/duckdb/duckdb-schema.js';
import { FIVE_TOKEN, requestReader, requestRecords, writeShipperFile } from './shipper-events.js';

const arg = (name: string, dflt: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? dflt : Number(process.argv[i + 1]);
};
const EVENTS = arg('events', 1_000_000);
const RUNS = arg('runs', 15);
const BLOCK = arg('block', 8192);

const dir = mkdtempSync(path.join(tmpdir(), 'rare-probe-'));
try {
  const file = writeShipperFile(path.join(dir, 'events.ndjson'), EVENTS, 1000, false, Date.now());
  const instance = await DuckDBInstance.create(path.join(dir, 'probe.duckdb'), { memory_limit: '2GB' });
  const conn = await instance.connect();
  await conn.run(`CREATE TABLE events (ts TIMESTAMP NOT NULL, ev_id VARCHAR, host VARCHAR, app VARCHAR,
    severity VARCHAR, message VARCHAR USING COMPRESSION zstd, trace_id VARCHAR)`);
  const appender = await conn.createAppender('events');
  const reader = requestReader(file);
  const times: number[] = [];
  let n = 0;
  for (let r = 0; r < file.offsets.length - 1; r++) {
    for (const e of requestRecords(file, reader.body(r)) as Array<Record<string, string>>) {
      const ms = Date.parse(e.timestamp as string);
      times.push(ms);
      appender.appendValue(tsValue(ms));
      appender.appendVarchar(`e${String(n++).padStart(9, '0')}`);
      appender.appendVarchar(e.host as string);
      appender.appendVarchar(e.app as string);
      appender.appendVarchar(e.severity as string);
      appender.appendVarchar(e.message as string);
      appender.appendVarchar(e.trace_id as string);
      appender.endRow();
    }
    if (r % 100 === 99) appender.flushSync();
  }
  appender.closeSync();
  reader.close();
  await conn.run('CHECKPOINT');
  // As the store's filter compiler tests a word (duckdb-filter-compiler.ts).
  const like = `contains(lower(message), '${FIVE_TOKEN}')`;
  const hits = (
    await conn.runAndReadAll(`SELECT rowid AS r, epoch_ms(ts) AS ms FROM events WHERE ${like} ORDER BY r`)
  ).getRowObjects() as Array<{ r: bigint; ms: bigint }>;
  const lit = (ms: number) => `make_timestamp(${ms * 1000})`;
  /** The block of arrival index `i`, its time range with or without its late events. */
  const blockRange = (i: number, withLate: boolean) => {
    const from = Math.floor(i / BLOCK) * BLOCK;
    const ts = times.slice(from, from + BLOCK);
    const sorted = [...ts].sort((a, b) => a - b);
    // Without the late: the 2nd to 98th percentile of the block's times.
    const lo = withLate ? sorted[0] : sorted[Math.floor(sorted.length * 0.03)];
    const hi = sorted[sorted.length - 1];
    return { lo: lo as number, hi: hi as number, from, to: from + ts.length - 1 };
  };
  const union = (parts: string[]) => `SELECT count(*) FROM (${parts.join(' UNION ALL ')})`;
  const cases: Array<[string, string]> = [
    ['scan', `SELECT count(*) FROM events WHERE ${like}`],
    [
      'block ranges by ts, late included (today)',
      union(
        hits.map((h) => {
          const b = blockRange(Number(h.r), true);
          return `SELECT 1 FROM events WHERE ts BETWEEN ${lit(b.lo)} AND ${lit(b.hi)} AND ${like}`;
        }),
      ),
    ],
    [
      'block ranges by ts, late apart',
      union(
        hits.map((h) => {
          const b = blockRange(Number(h.r), false);
          return `SELECT 1 FROM events WHERE ts BETWEEN ${lit(b.lo)} AND ${lit(b.hi)} AND ${like}`;
        }),
      ),
    ],
    ['exact ts', union(hits.map((h) => `SELECT 1 FROM events WHERE ts = ${lit(Number(h.ms))} AND ${like}`))],
    [
      'block ranges by rowid',
      union(
        hits.map((h) => {
          const b = blockRange(Number(h.r), true);
          return `SELECT 1 FROM events WHERE rowid BETWEEN ${b.from} AND ${b.to} AND ${like}`;
        }),
      ),
    ],
    ['exact rowid', union(hits.map((h) => `SELECT 1 FROM events WHERE rowid = ${h.r} AND ${like}`))],
    [
      'rowid IN',
      `SELECT count(*) FROM events WHERE rowid IN (${hits.map((h) => h.r).join(',')}) AND ${like}`,
    ],
  ];
  console.log(`${EVENTS} events, ${hits.length} hits, rows ${hits.map((h) => h.r).join(' ')}`);
  let scan = 0;
  for (const [name, sql] of cases) {
    const ms: number[] = [];
    let count = 0n;
    for (let i = 0; i < RUNS; i++) {
      const t0 = performance.now();
      count = (await conn.runAndReadAll(sql)).getRows()[0]?.[0] as bigint;
      ms.push(performance.now() - t0);
    }
    ms.sort((a, b) => a - b);
    const med = ms[Math.floor(ms.length / 2)] as number;
    if (name === 'scan') scan = med;
    console.log(
      `${name.padEnd(44)} ${med.toFixed(2).padStart(8)} ms  ${(med / scan).toFixed(3)}x  count ${count}`,
    );
  }
  conn.closeSync();
  instance.closeSync();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
