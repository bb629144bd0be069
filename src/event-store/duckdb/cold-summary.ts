import type { DuckDBConnection } from '@duckdb/node-api';
import type { FilterNode } from '../../filter/ast.js';
import {
  APART_BITS_PER_TRIGRAM,
  APART_PROBES,
  type BuiltBlock,
  blockOf,
  mergeBlocks,
  type WordEvent,
} from './word-blocks.js';
import { KEYS_SOURCES } from './word-keys.js';
import type { Lowering } from './word-lowering.js';
import type { BlockTest, IndexedBlock } from './word-queries.js';

/** A file's `pattern_id`s are kept in its summary when it holds at most this many. */
export const SUMMARY_PATTERNS = 4_096;

/** Rows read back from a new file at a time to build its summary (a multiple of GROUP_ROWS). */
const SUMMARY_CHUNK_ROWS = 65_536;

/**
 * Rows of a file a group of its summary covers, and the files' Parquet row groups (the
 * mover writes them so): a group the summary rules out is a row group never read.
 */
export const GROUP_ROWS = 16_384;

/** A file's groups read one by one when at most this share of them may hold the words. */
const GROUPS_READ_APART = 0.5;

/** The ranges of file rows a read may be narrowed to, at most this many a file (closest joined). */
const MAX_RANGES = 16;

/** Rows `[from, to)` of one file's Parquet rows (`file_row_number`). */
export type RowRange = readonly [from: number, to: number];

/** One group of a file's rows: `[from, from + rows)`, and the bloom of their words. */
export interface ColdGroup {
  readonly from: number;
  readonly rows: number;
  readonly bloom: Uint8Array;
}

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
  /**
   * Each GROUP_ROWS rows' bloom (leaner than the file's: APART_PROBES probes, as the word
   * index's late blocks), in file order; null for a file summarised before groups were.
   */
  readonly groups: readonly ColdGroup[] | null;
}

export const summaryBytes = (s: ColdSummary | null): number =>
  s
    ? s.bloom.length +
      (s.patterns ?? []).reduce((n, p) => n + p.length + 1, 0) +
      (s.groups ?? []).reduce((n, g) => n + g.bloom.length + 12, 0)
    : 0;

/** The groups as stored: per group its first row, its rows, its bloom's length and bytes (u32 LE). */
export function encodeGroups(groups: readonly ColdGroup[]): Uint8Array {
  const out = new Uint8Array(groups.reduce((n, g) => n + 12 + g.bloom.length, 0));
  const view = new DataView(out.buffer);
  let at = 0;
  for (const g of groups) {
    view.setUint32(at, g.from, true);
    view.setUint32(at + 4, g.rows, true);
    view.setUint32(at + 8, g.bloom.length, true);
    out.set(g.bloom, at + 12);
    at += 12 + g.bloom.length;
  }
  return out;
}

/** What `encodeGroups` wrote; null when the bytes are not a whole list (read whole). */
export function decodeGroups(bytes: Uint8Array): ColdGroup[] | null {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const groups: ColdGroup[] = [];
  let at = 0;
  while (at < bytes.length) {
    if (at + 12 > bytes.length) return null;
    const length = view.getUint32(at + 8, true);
    if (at + 12 + length > bytes.length) return null;
    groups.push({
      from: view.getUint32(at, true),
      rows: view.getUint32(at + 4, true),
      bloom: bytes.slice(at + 12, at + 12 + length),
    });
    at += 12 + length;
  }
  return groups;
}

/** Builds the summary of a Parquet file, reading its messages back a chunk at a time. */
export async function buildSummary(conn: DuckDBConnection, file: string, l: Lowering): Promise<ColdSummary> {
  const src = `read_parquet('${file.replaceAll("'", "''")}', file_row_number = true)`;
  const blocks: BuiltBlock[] = [];
  const groups: ColdGroup[] = [];
  const patterns = new Set<string>();
  let overflow = false;
  for (let from = 0; ; from += SUMMARY_CHUNK_ROWS) {
    const reader = await conn.runAndReadAll(
      `SELECT epoch_ms(ts) AS ts, message, host, app, pattern_id FROM ${src}
       WHERE file_row_number >= ${from} AND file_row_number < ${from + SUMMARY_CHUNK_ROWS}
       ORDER BY file_row_number`,
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
    for (let g = 0; g < events.length; g += GROUP_ROWS) {
      const to = Math.min(events.length, g + GROUP_ROWS);
      const block = blockOf(events, g, to, l, APART_PROBES, APART_BITS_PER_TRIGRAM, KEYS_SOURCES);
      blocks.push(block);
      groups.push({ from: from + g, rows: to - g, bloom: block.bloom });
    }
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
  const merged = mergeBlocks(
    blocks.length ? blocks : [blockOf([], 0, 0, l, APART_PROBES, APART_BITS_PER_TRIGRAM, KEYS_SOURCES)],
  );
  return {
    lowering: merged.lowering,
    probes: merged.probes,
    bloom: merged.bloom,
    patterns: overflow ? null : [...patterns].sort(),
    groups,
  };
}

/**
 * The rows of a file a read of `words` needs: the groups whose blooms may hold them, as
 * ranges of file rows (neighbours joined, at most MAX_RANGES, the closest joined first);
 * null for the whole file (no test, no groups, or more than GROUPS_READ_APART of them).
 */
export function groupRanges(s: ColdSummary | null, words: BlockTest | undefined): RowRange[] | null {
  if (!s?.groups?.length || !words) return null;
  const ranges: Array<[number, number]> = [];
  let admitted = 0;
  for (const g of s.groups) {
    const block: IndexedBlock = {
      id: 0n,
      minTs: 0,
      maxTs: 0,
      events: g.rows,
      lowering: s.lowering,
      probes: APART_PROBES,
      bloom: g.bloom,
      keys: KEYS_SOURCES,
      stored: null,
    };
    if (!words(block)) continue;
    admitted++;
    const last = ranges[ranges.length - 1];
    if (last && last[1] === g.from) last[1] = g.from + g.rows;
    else ranges.push([g.from, g.from + g.rows]);
  }
  if (admitted > s.groups.length * GROUPS_READ_APART) return null;
  while (ranges.length > MAX_RANGES) {
    // Join the two ranges with the smallest gap between them.
    let at = 0;
    for (let i = 1; i < ranges.length - 1; i++) {
      const gap = (ranges[i + 1] as [number, number])[0] - (ranges[i] as [number, number])[1];
      const best = (ranges[at + 1] as [number, number])[0] - (ranges[at] as [number, number])[1];
      if (gap < best) at = i;
    }
    const [a, b] = [ranges[at] as [number, number], ranges[at + 1] as [number, number]];
    ranges.splice(at, 2, [a[0], b[1]]);
  }
  return ranges;
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
      keys: KEYS_SOURCES,
      stored: null,
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
