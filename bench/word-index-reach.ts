import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { tsValue } from '../src/event-store/duckdb/duckdb-schema.js';
import { WordIndex } from '../src/event-store/duckdb/word-index.js';
import { cond } from '../src/filter/ast.js';
import { percentile } from './lib.js';

/**
 * What the word index (ADR 0004) makes of `message contains word` over a window in a
 * stopped server's data dir: its blocks (how many, how wide in time), the candidate
 * ranges it gives a query (as `scan` does, before the SQL) and the events inside them,
 * the share of the window's events a search of the word reads (1: a scan of the window).
 * The data dir is written to (the index's open tidies its rows): a copy the bench deletes.
 */
export async function wordIndexReach(dataDir: string, word: string, fromMs: number, toMs: number) {
  const instance = await DuckDBInstance.create(path.join(dataDir, 'events.duckdb'));
  const conn = await instance.connect();
  try {
    const index = await WordIndex.open(conn);
    const range = { fromMs, toMs };
    const ranges = index.scan(cond('message', 'contains', word), range) ?? [{ fromMs, toMs: toMs - 1 }];
    const count = async (where: string, values: Parameters<typeof conn.runAndReadAll>[1] = []) =>
      Number(
        (
          await conn.runAndReadAll(`SELECT count(*) AS n FROM events WHERE ${where}`, values)
        ).getRowObjects()[0]?.n,
      );
    const window = await count('ts >= $1 AND ts < $2', [tsValue(fromMs), tsValue(toMs)]);
    let inRanges = 0;
    for (const r of ranges)
      inRanges += await count('ts >= $1 AND ts <= $2 AND ts >= $3 AND ts < $4', [
        tsValue(r.fromMs),
        tsValue(r.toMs),
        tsValue(fromMs),
        tsValue(toMs),
      ]);
    const spans = (
      await conn.runAndReadAll(
        `SELECT DISTINCT ON (id) epoch_ms(max_ts) - epoch_ms(min_ts) AS span, events FROM word_blocks ORDER BY id, events DESC`,
      )
    )
      .getRowObjects()
      .map((r) => Number(r.span))
      .sort((a, b) => a - b);
    index.close();
    return {
      blocks: spans.length,
      /** A block's time span (ms): median and 90th percentile. */
      spanP50: percentile(spans, 50),
      spanP90: percentile(spans, 90),
      ranges: ranges.length,
      /** The share of the window's events inside the candidate ranges. */
      share: window > 0 ? inRanges / window : Number.NaN,
    };
  } finally {
    conn.closeSync();
    instance.closeSync();
  }
}
