import { statSync } from 'node:fs';
import path from 'node:path';
import { DuckDBDataChunk, DuckDBInstance, type DuckDBValue } from '@duckdb/node-api';
import { tsValue } from '../src/event-store/duckdb/duckdb-schema.js';
import { progressLine, walBytes } from './lib.js';
import { requestReader, requestRecords, type ShipperFile } from './shipper-events.js';

/** A query of `bench/shippers.ts` as SQL on the plain table (`w`: the window's condition). */
export interface RawCase {
  name: string;
  sql(w: string): string[];
}

/** The plain table the raw engine loads: the fields the events carry, nothing of the store's. */
const RAW_TABLE = `CREATE TABLE events (
  ts TIMESTAMP NOT NULL, host VARCHAR, app VARCHAR, severity VARCHAR, message VARCHAR,
  "user" VARCHAR, status INTEGER, bytes BIGINT, trace_id VARCHAR)`;

/**
 * The raw engine: the same events, request by request, into a plain DuckDB table through
 * its appender (a data chunk and a flush, which commits, per request of 1,000: the
 * appends a shipper's requests allow). Parsing the JSON and making the values is not
 * timed, appending is. Then the same queries in SQL on that table.
 */
export async function rawSide(
  file: ShipperFile,
  cases: readonly RawCase[],
  opts: {
    runs: number;
    fromMs: number;
    toMs: number;
    dir: string;
    memoryLimit: string;
    countSql(w: string): string;
  },
) {
  const { runs, dir } = opts;
  const dbFile = path.join(dir, 'raw.duckdb');
  const instance = await DuckDBInstance.create(dbFile, { memory_limit: opts.memoryLimit });
  const conn = await instance.connect();
  try {
    await conn.run(RAW_TABLE);
    const appender = await conn.createAppender('events');
    const types = Array.from({ length: appender.columnCount }, (_, i) => appender.columnType(i));
    const reader = requestReader(file);
    const requests = file.offsets.length - 1;
    let appendMs = 0;
    let done = 0;
    const progress = progressLine('raw appender', file.events, performance.now(), () => '');
    try {
      for (let r = 0; r < requests; r++) {
        const records = requestRecords(file, reader.body(r));
        const n = records.length;
        const cols: DuckDBValue[][] = types.map(() => new Array<DuckDBValue>(n));
        for (let i = 0; i < n; i++) {
          const e = records[i] as Record<string, string | number>;
          (cols[0] as DuckDBValue[])[i] = tsValue(Date.parse(e.timestamp as string));
          (cols[1] as DuckDBValue[])[i] = e.host as string;
          (cols[2] as DuckDBValue[])[i] = e.app as string;
          (cols[3] as DuckDBValue[])[i] = e.severity as string;
          (cols[4] as DuckDBValue[])[i] = e.message as string;
          (cols[5] as DuckDBValue[])[i] = e.user as string;
          (cols[6] as DuckDBValue[])[i] = e.status as number;
          (cols[7] as DuckDBValue[])[i] = BigInt(e.bytes as number);
          (cols[8] as DuckDBValue[])[i] = e.trace_id as string;
        }
        const t0 = performance.now();
        const chunk = DuckDBDataChunk.create(types, n);
        chunk.setColumns(cols);
        appender.appendDataChunk(chunk);
        appender.flushSync();
        appendMs += performance.now() - t0;
        done += n;
        progress(done);
      }
    } finally {
      reader.close();
      appender.closeSync();
    }
    const afterLoad = statSync(dbFile).size + walBytes(dir, 'raw.duckdb');
    const walAfterLoad = walBytes(dir, 'raw.duckdb');
    await conn.run('CHECKPOINT');
    const atRest = statSync(dbFile).size + walBytes(dir, 'raw.duckdb');
    const w = `ts >= epoch_ms(${opts.fromMs}) AND ts < epoch_ms(${opts.toMs})`;
    const times: Record<string, number[]> = {};
    const rareCount = Number(
      (await conn.runAndReadAll(opts.countSql(w))).getRowObjects()[0]?.n ?? Number.NaN,
    );
    const stored = Number(
      (await conn.runAndReadAll('SELECT count(*) AS n FROM events')).getRowObjects()[0]?.n,
    );
    process.stderr.write(`  raw queries (${runs} runs each)\n`);
    for (const c of cases) {
      const t: number[] = [];
      for (let i = 0; i < runs + 2; i++) {
        const t0 = performance.now();
        for (const sql of c.sql(w)) await conn.runAndReadAll(sql);
        if (i >= 2) t.push(performance.now() - t0);
      }
      times[c.name] = t;
    }
    return { rate: done / (appendMs / 1000), afterLoad, walAfterLoad, atRest, times, rareCount, stored };
  } finally {
    conn.closeSync();
    instance.closeSync();
  }
}
