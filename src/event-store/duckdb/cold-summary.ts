import type { DuckDBConnection } from '@duckdb/node-api';
import type { FilterNode } from '../../filter/ast.js';
import { type BuiltBlock, blockOf, mergeBlocks, type WordEvent } from './word-blocks.js';
import type { Lowering } from './word-lowering.js';
import type { BlockTest, IndexedBlock } from './word-queries.js';

/** A file's `pattern_id`s are kept in its summary when it holds at most this many. */
export const SUMMARY_PATTERNS = 4_096;

/** Rows read back from a new file at a time to build its summary. */
const SUMMARY_CHUNK_ROWS = 65_536;

/**
 * What lets a query skip a cold file without opening it (ADR 0031): a bloom of the byte
 * trigrams of its lower-cased messages and of its `host`/`app` source keys, built as the
 * word index's blocks are (ADR 0004: 10 bits a distinct trigram, 7 probes), so the index's
 * own test reads it; and its `pattern_id`s when it holds at most `SUMMARY_PATTERNS`.
 */
export interface ColdSummary {
  readonly lowering: number;
  readonly probes: number;
  readonly bloom: Uint8Array;
  /** Null: more than SUMMARY_PATTERNS (or none kept): any pattern may be there. */
  readonly patterns: readonly string[] | null;
}

export const summaryBytes = (s: ColdSummary | null): number =>
  s ? s.bloom.length + (s.patterns ?? []).reduce((n, p) => n + p.length + 1, 0) : 0;

/** Builds the summary of a Parquet file, reading its messages back a chunk at a time. */
export async function buildSummary(conn: DuckDBConnection, file: string, l: Lowering): Promise<ColdSummary> {
  const src = `read_parquet('${file.replaceAll("'", "''")}', file_row_number = true)`;
  const blocks: BuiltBlock[] = [];
  const patterns = new Set<string>();
  let overflow = false;
  for (let from = 0; ; from += SUMMARY_CHUNK_ROWS) {
    const reader = await conn.runAndReadAll(
      `SELECT epoch_ms(ts) AS ts, message, host, app, pattern_id FROM ${src}
       WHERE file_row_number >= ${from} AND file_row_number < ${from + SUMMARY_CHUNK_ROWS}`,
    );
    const rows = reader.getRowObjectsJS() as Array<{
      ts: number | bigint;
      message: string | null;
      host: string | null;
      app: string | null;
      pattern_id: string | null;
    }>;
    if (rows.length === 0) break;
    const events: WordEvent[] = rows.map((r) => ({
      ts: Number(r.ts),
      message: r.message,
      host: r.host,
      app: r.app,
    }));
    blocks.push(blockOf(events, 0, events.length, l));
    if (!overflow)
      for (const r of rows) {
        if (r.pattern_id !== null) patterns.add(r.pattern_id);
        if (patterns.size > SUMMARY_PATTERNS) {
          overflow = true;
          patterns.clear();
          break;
        }
      }
  }
  const merged = mergeBlocks(blocks.length ? blocks : [blockOf([], 0, 0, l)]);
  return {
    lowering: merged.lowering,
    probes: merged.probes,
    bloom: merged.bloom,
    patterns: overflow ? null : [...patterns].sort(),
  };
}

/**
 * Whether a file may hold an event `filter` matches, by its summary: the word index's
 * test of its words and source values (`words`), and the `pattern_id`s the filter
 * requires, when the summary lists the file's. True when it cannot tell.
 */
export function summaryAdmits(
  s: ColdSummary | null,
  words: BlockTest | undefined,
  filter: FilterNode,
): boolean {
  if (!s) return true;
  if (words) {
    const block: IndexedBlock = {
      id: 0n,
      minTs: 0,
      maxTs: 0,
      events: 0,
      lowering: s.lowering,
      probes: s.probes,
      bloom: s.bloom,
      sources: true,
    };
    if (!words(block)) return false;
  }
  const wanted = patternNeeds(filter);
  if (wanted && s.patterns) {
    const held = new Set(s.patterns);
    if (!wanted.some((p) => held.has(p))) return false;
  }
  return true;
}

/**
 * The `pattern_id`s of which an event must have one to match (`pattern_id:x`, or an `in`
 * list, alone or ANDed with others); undefined when the filter requires none.
 */
export function patternNeeds(f: FilterNode): string[] | undefined {
  if (f.kind === 'cond' && f.field === 'pattern_id') {
    if (f.op === 'eq' && typeof f.value === 'string') return [f.value];
    if (f.op === 'in' && Array.isArray(f.value)) return f.value.map(String);
    return undefined;
  }
  if (f.kind === 'and') {
    for (const item of f.items) {
      const n = patternNeeds(item);
      if (n) return n;
    }
  }
  return undefined;
}
