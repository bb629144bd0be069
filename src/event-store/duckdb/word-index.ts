/**
 * The word index (docs/adr/0004-word-index.md). Per block of events, a bloom filter of
 * the byte trigrams of their messages as DuckDB's `lower()` lowers them; a search whose
 * filter requires a message substring asks which blocks may hold every trigram of it
 * and adds their time ranges to the WHERE clause, each with the `stored_at` span of its
 * blocks' appends (word-queries.ts `StoredSpan`). The `contains` test stays, so the index
 * only skips row groups and vectors by their zone maps and never changes an answer.
 *
 * - Lowering: DuckDB's own table, read once per process (`readLowering`), so the index
 *   and the SQL agree by construction. A needle goes the way `containsText` (the filter
 *   compiler) sends it: through `lower()` (its trigrams must all be in the lowered
 *   message; a message holding U+0130 is indexed both as is and as the compiler's
 *   `replace` makes it) or through JavaScript's `toLowerCase()` (only the stretches of
 *   the needle that JavaScript and DuckDB lower alike are used).
 * - Blocks: cut from each append batch (already in time order) into blocks of at least
 *   `BLOCK_EVENTS` events; a smaller batch grows the open block instead (a new version
 *   of its row) until that one holds `BLOCK_EVENTS`. A bloom is sized from its block's
 *   distinct trigram count (about 1 % false positives per trigram).
 * - Crash safety: a batch's rows are written in the transaction that appends its events
 *   (one commit, one WAL sync), so there are never events without a block. A store with
 *   more events than its blocks count (made before the index) gets one block with no
 *   bloom spanning all its events (always a candidate).
 *
 * The pure parts take plain data only, so the building can run in a worker thread: the
 * lowering (`word-lowering.ts`), trigrams, blooms and blocks (`word-blocks.ts`) and what a
 * filter needs and which ranges may hold it (`word-queries.ts`). This file is the store's
 * index: blocks in memory, rows in `word_blocks`.
 */
import type { DuckDBAppender, DuckDBConnection } from '@duckdb/node-api';
import type { FilterNode } from '../../filter/ast.js';
import type { IndexReach } from '../event-store.js';
import type { TimeWindow } from '../query-plan.js';
import { tsValue } from './duckdb-schema.js';
import {
  BLOCK_EVENTS,
  type BuiltBlock,
  buildApartBlock,
  buildWordBlocks,
  lateParts,
  mergeBlocks,
  type WordEvent,
} from './word-blocks.js';
import { KEYS_NONE, KEYS_SOURCES, KEYS_VALUES, type KeyLevel } from './word-keys.js';
import { type Lowering, readLowering } from './word-lowering.js';
import {
  type BlockTest,
  blockTest,
  candidateRanges,
  type IndexedBlock,
  rangesPay,
  type WordNeed,
  type WordRange,
  wordNeeds,
} from './word-queries.js';

/**
 * `word_blocks.format`: 0 no bloom (always a candidate), 1 trigram bloom (this file's
 * hashing), 2 the same with the source fields' values (word-blocks.ts `valueKey`), 3 with
 * every value an equality tests as text (`KEYS_VALUES`).
 */
const FORMAT_NONE = 0;
/** The format of a bloom holding each level of keys (`KeyLevel`), and back. */
const FORMAT_OF_KEYS = [1, 2, 3] as const;
const KEYS_OF_FORMAT: Readonly<Record<number, KeyLevel>> = { 1: KEYS_NONE, 2: KEYS_SOURCES, 3: KEYS_VALUES };

export const CREATE_WORD_BLOCKS = `
CREATE TABLE IF NOT EXISTS word_blocks (
  id BIGINT NOT NULL,
  min_ts TIMESTAMP NOT NULL,
  max_ts TIMESTAMP NOT NULL,
  events INTEGER NOT NULL,
  format INTEGER NOT NULL,
  lowering INTEGER NOT NULL,
  probes INTEGER NOT NULL,
  bloom BLOB,
  min_stored TIMESTAMP,
  max_stored TIMESTAMP
)`;

/** Tables made before blocks kept their events' `stored_at` (their rows' spans stay NULL). */
const ADD_STORED = [
  'ALTER TABLE word_blocks ADD COLUMN IF NOT EXISTS min_stored TIMESTAMP',
  'ALTER TABLE word_blocks ADD COLUMN IF NOT EXISTS max_stored TIMESTAMP',
];

// ---------------------------------------------------------------------------------------
// The store's index: blocks in memory, rows in `word_blocks`

/** Rows written in the append's transaction, for `WordIndex.add` once it commits. */
export interface WrittenBlocks {
  readonly blocks: readonly IndexedBlock[];
  /** The open blocks these replace (they grew): the open block, open blocks of late events. */
  readonly replaces: readonly bigint[];
  readonly tail: Tail | null;
  /** The open blocks of late events, by bucket, once this commits. */
  readonly late: ReadonlyMap<number, Tail>;
  /** The ids among `blocks` of late events kept apart. */
  readonly apart: ReadonlySet<bigint>;
}

/** The open block: the last small batch's row, which the next small batches grow. */
interface Tail {
  readonly block: IndexedBlock;
  readonly built: BuiltBlock;
  /** Rows of this block written since its older versions were last deleted. */
  readonly versions: number;
}

/** Older rows of the open block are deleted every this many versions (and when it closes). */
const TAIL_VERSIONS = 16;

/**
 * Open blocks of late events kept at most (the newest buckets; an older one closes): each
 * holds its trigrams in memory. Shippers' late events (2 % up to an hour late) fill 4 or 5.
 */
export const MAX_LATE_TAILS = 8;

/**
 * The index of one store: every block's bloom in memory (sorted by `minTs`), rows in
 * `word_blocks`. Every method that writes is called inside the store's `write` (no
 * statement is being planned meanwhile), so a query's ranges and its snapshot agree.
 *
 * Small batches (under `BLOCK_EVENTS` events) grow one open block until it holds
 * `BLOCK_EVENTS`; its trigrams stay in memory meanwhile (a restart closes it). Each
 * growth appends a new version of its row (same id, more events; the newest covers the
 * older), through an appender: an UPDATE of the row measured 3–8 ms and growing, a
 * statement 1.2–2 ms, an appender row about 1 ms. Older versions are deleted every
 * `TAIL_VERSIONS` versions, when it closes, and at open.
 *
 * Late events (`lateParts`) grow an open block of their time bucket the same way, up to
 * `MAX_LATE_TAILS` buckets at a time: a block per late event (a batch's late events an
 * hour apart are one each) made 137,630 blocks of 10 M events from shippers, 73 events a
 * block, ~100 MB of memory and a loop over all of them per query.
 */
export class WordIndex {
  private blocks: IndexedBlock[] = [];
  private tail: Tail | null = null;
  private late: ReadonlyMap<number, Tail> = new Map();
  private nextId = 1n;
  /**
   * Where the events in order begin: the newest time of the last block closed (a late
   * event never moves it: late events are older). Events over `LATE_MS` before it are late.
   */
  private floor = Number.NEGATIVE_INFINITY;

  private constructor(
    readonly lowering: Lowering,
    private readonly appender: DuckDBAppender,
  ) {}

  /**
   * Creates or loads the index of the store on `conn`. A store with more events than its
   * blocks count (made before the index) gets a block without bloom spanning them all.
   */
  static async open(conn: DuckDBConnection): Promise<WordIndex> {
    await conn.run(CREATE_WORD_BLOCKS);
    for (const sql of ADD_STORED) await conn.run(sql);
    // Older versions of a block's row (see the class comment): the newest covers them.
    await conn.run(`DELETE FROM word_blocks w USING (
      SELECT id, max(events) AS events FROM word_blocks GROUP BY id HAVING count(*) > 1
    ) newest WHERE w.id = newest.id AND w.events < newest.events`);
    const index = new WordIndex(await readLowering(conn), await conn.createAppender('word_blocks'));
    const rows = (
      await conn.runAndReadAll(
        `SELECT DISTINCT ON (id) id, epoch_ms(min_ts) AS lo, epoch_ms(max_ts) AS hi, events, format, lowering, probes, bloom,
           epoch_ms(min_stored) AS s_lo, epoch_ms(max_stored) AS s_hi
         FROM word_blocks ORDER BY id, events DESC`,
      )
    ).getRowObjects();
    let covered = 0;
    for (const r of rows) {
      const id = BigInt(r.id as bigint);
      const bloom = r.bloom as { bytes: Uint8Array } | null;
      index.blocks.push({
        id,
        minTs: Number(r.lo),
        maxTs: Number(r.hi),
        events: Number(r.events),
        lowering: Number(r.lowering),
        probes: Number(r.probes),
        bloom: KEYS_OF_FORMAT[Number(r.format)] !== undefined && bloom ? bloom.bytes : null,
        keys: KEYS_OF_FORMAT[Number(r.format)] ?? KEYS_NONE,
        stored: r.s_lo === null || r.s_hi === null ? null : { from: Number(r.s_lo), to: Number(r.s_hi) },
      });
      covered += Number(r.events);
      if (id >= index.nextId) index.nextId = id + 1n;
    }
    index.blocks.sort((a, b) => a.minTs - b.minTs);
    const [all] = (
      await conn.runAndReadAll(
        `SELECT count(*) AS n, epoch_ms(min(ts)) AS lo, epoch_ms(max(ts)) AS hi FROM events`,
      )
    ).getRowObjects();
    const n = Number(all?.n ?? 0);
    if (n > covered) {
      const block: IndexedBlock = {
        id: index.nextId++,
        minTs: Number(all?.lo),
        maxTs: Number(all?.hi),
        events: n - covered,
        lowering: index.lowering.id,
        probes: 0,
        bloom: null,
        keys: KEYS_NONE,
        stored: null,
      };
      index.appendRows([block]);
      index.insertSorted(block);
    }
    return index;
  }

  /** Blocks and bloom bytes in memory. */
  get size(): { blocks: number; bytes: number } {
    return { blocks: this.blocks.length, bytes: this.blocks.reduce((n, b) => n + (b.bloom?.length ?? 0), 0) };
  }

  /**
   * The ranges a query over `range` with `filter` may find matches in (possibly none);
   * `undefined` when the filter requires no indexed word.
   */
  ranges(filter: FilterNode, range: TimeWindow): WordRange[] | undefined {
    return this.candidates(filter, range)?.ranges;
  }

  /** The ranges a query reads: `ranges`, unless a plain scan of `range` costs less (`rangesPay`). */
  scan(filter: FilterNode, range: TimeWindow): WordRange[] | undefined {
    const found = this.candidates(filter, range);
    return found && rangesPay(found.need, found.ranges, this.blocks, range) ? found.ranges : undefined;
  }

  /** How a read of `filter` over `range` meets the index, as `scan` decides it (a query's statistics). */
  reach(filter: FilterNode, range: TimeWindow): IndexReach {
    const need = wordNeeds(filter);
    const test = need && blockTest(need, this.lowering);
    let blocks = 0;
    let candidates = 0;
    for (const b of this.blocks) {
      if (b.maxTs < range.fromMs || b.minTs >= range.toMs) continue;
      blocks++;
      if (test?.(b)) candidates++;
    }
    const scan = (why: IndexReach['why']): IndexReach => ({
      path: 'scan',
      why,
      blocks,
      candidate_blocks: test ? candidates : blocks,
      ranges: 0,
    });
    if (!need || !test) return scan('no_indexed_term');
    const ranges = candidateRanges(this.blocks, test, range);
    if (!rangesPay(need, ranges, this.blocks, range)) return scan('too_many_candidates');
    return {
      path: ranges.length === 0 ? 'index' : 'narrowed',
      why: null,
      blocks,
      candidate_blocks: candidates,
      ranges: ranges.length,
    };
  }

  /**
   * Whether a block, or a cold file's summary built as one (cold-summary.ts), may hold an
   * event `filter` matches; undefined when the filter requires no indexed word or value.
   */
  test(filter: FilterNode): BlockTest | undefined {
    const need = wordNeeds(filter);
    return need && blockTest(need, this.lowering);
  }

  private candidates(
    filter: FilterNode,
    range: TimeWindow,
  ): { need: WordNeed; ranges: WordRange[] } | undefined {
    const need = wordNeeds(filter);
    const test = need && blockTest(need, this.lowering);
    return need && test ? { need, ranges: candidateRanges(this.blocks, test, range) } : undefined;
  }

  /**
   * Writes the rows of a batch's blocks in the caller's transaction (the one that appends
   * the batch's events): new rows, or for a small batch a new version of the open block's
   * row. `add` applies them to memory once the transaction commits.
   */
  async write(conn: DuckDBConnection, all: readonly BuiltBlock[]): Promise<WrittenBlocks> {
    const written = await this.writeInOrder(
      conn,
      all.filter((b) => !b.apart),
    );
    const apart = all.filter((b) => b.apart);
    if (!apart.length) return { ...written, late: this.late, apart: new Set() };
    const late = new Map(this.late);
    const blocks: IndexedBlock[] = [];
    const replaces = [...written.replaces];
    for (const part of apart) {
      const bucket = part.bucket ?? Number.NaN;
      const open = late.get(bucket);
      const built = open ? mergeBlocks([open.built, part]) : part;
      const block: IndexedBlock = { ...pick(built), id: open ? open.block.id : this.nextId++ };
      let versions = (open?.versions ?? 0) + 1;
      if (open) replaces.push(block.id);
      const full = built.events >= BLOCK_EVENTS;
      if (open && (full || versions >= TAIL_VERSIONS)) {
        await this.dropOlderVersions(conn, block);
        versions = 1;
      }
      blocks.push(block);
      if (full) late.delete(bucket);
      else late.set(bucket, { block, built, versions });
    }
    this.appendRows(blocks);
    // The oldest buckets close past MAX_LATE_TAILS (their older rows go now).
    for (const bucket of [...late.keys()]
      .sort((a, b) => a - b)
      .slice(0, Math.max(0, late.size - MAX_LATE_TAILS))) {
      const closing = late.get(bucket) as Tail;
      if (closing.versions > 1) await this.dropOlderVersions(conn, closing.block);
      late.delete(bucket);
    }
    return {
      ...written,
      blocks: [...written.blocks, ...blocks],
      replaces,
      late,
      apart: new Set(blocks.map((b) => b.id)),
    };
  }

  /** Deletes the rows of `block`'s older versions (the newest, `block`, covers them). */
  private async dropOlderVersions(conn: DuckDBConnection, block: IndexedBlock): Promise<void> {
    await conn.run('DELETE FROM word_blocks WHERE id = $1 AND events < $2', [block.id, block.events]);
  }

  /**
   * The blocks of a batch (its events in time order): cut into blocks of at least
   * `BLOCK_EVENTS`, or for a small batch, its late events (`lateParts`: over `LATE_MS`
   * before the end of the last block closed) in a block per time bucket, which `write` adds
   * to the bucket's open block, and the rest one block, which `write` adds to the open block. Late events would otherwise widen the open block's
   * time range (2 % of the events an hour late made every block span an hour).
   */
  build(events: readonly WordEvent[], storedAt: number): BuiltBlock[] {
    const stored = { from: storedAt, to: storedAt };
    return this.cut(events).map((b) => ({ ...b, stored }));
  }

  private cut(events: readonly WordEvent[]): BuiltBlock[] {
    if (events.length === 0) return [];
    if (events.length >= BLOCK_EVENTS) return buildWordBlocks(events, this.lowering);
    // Late: before the end of the last block closed. Batches of concurrent shippers that
    // arrive a few batches out of order within the open block's time stay in order.
    if (this.floor === Number.NEGATIVE_INFINITY) return buildWordBlocks(events, this.lowering);
    const { late, inOrder } = lateParts(events, this.floor);
    return [
      ...late.map((part) => buildApartBlock(part.events, this.lowering, part.bucket)),
      ...(inOrder.length ? buildWordBlocks(inOrder, this.lowering) : []),
    ];
  }

  private async writeInOrder(
    conn: DuckDBConnection,
    built: readonly BuiltBlock[],
  ): Promise<Omit<WrittenBlocks, 'apart' | 'late'>> {
    if (built.length === 0) return { blocks: [], replaces: [], tail: this.tail };
    const [only] = built;
    const small = built.length === 1 && only !== undefined && only.events < BLOCK_EVENTS;
    if (small && this.tail) {
      const grown = mergeBlocks([this.tail.built, only]);
      const block: IndexedBlock = { ...pick(grown), id: this.tail.block.id };
      this.appendRows([block]);
      const open = grown.events < BLOCK_EVENTS;
      let versions = this.tail.versions + 1;
      if (!open || versions >= TAIL_VERSIONS) {
        await this.dropOlderVersions(conn, block);
        versions = 1;
      }
      return { blocks: [block], replaces: [block.id], tail: open ? { block, built: grown, versions } : null };
    }
    const blocks = built.map((b): IndexedBlock => ({ ...pick(b), id: this.nextId++ }));
    this.appendRows(blocks);
    const tail = small ? { block: blocks[0] as IndexedBlock, built: only, versions: 1 } : this.tail;
    return { blocks, replaces: [], tail };
  }

  /** Applies committed rows (`write`) to memory. */
  add({ blocks, replaces, tail, late, apart }: WrittenBlocks): void {
    // Open blocks are among the newest: looked for from the end.
    for (const id of replaces) {
      const i = this.blocks.findLastIndex((b) => b.id === id);
      if (i >= 0) this.blocks.splice(i, 1);
    }
    // The newest block closed now: where the open one's events begin to be in order.
    for (const b of blocks) {
      this.insertSorted(b);
      if (!apart.has(b.id) && b.id !== tail?.block.id) this.floor = Math.max(this.floor, b.maxTs);
    }
    this.tail = tail;
    this.late = late;
  }

  /** Retention: deletes the blocks whose events are all older than `tsMs` (after the events). */
  async deleteOlderThan(conn: DuckDBConnection, tsMs: number): Promise<void> {
    await conn.run('DELETE FROM word_blocks WHERE max_ts < $1', [tsValue(tsMs)]);
    const cut = Math.round(tsMs);
    this.blocks = this.blocks.filter((b) => b.maxTs >= cut);
    if (this.tail && this.tail.block.maxTs < cut) this.tail = null;
    this.late = new Map([...this.late].filter(([, t]) => t.block.maxTs >= cut));
  }

  close(): void {
    this.appender.closeSync();
  }

  /** Rows through the appender, flushed into the connection's transaction (if any). */
  private appendRows(blocks: readonly IndexedBlock[]): void {
    if (blocks.length === 0) return;
    const a = this.appender;
    try {
      for (const b of blocks) {
        a.appendBigInt(b.id);
        a.appendTimestamp(tsValue(b.minTs));
        a.appendTimestamp(tsValue(b.maxTs));
        a.appendInteger(b.events);
        a.appendInteger(b.bloom ? FORMAT_OF_KEYS[b.keys] : FORMAT_NONE);
        a.appendInteger(b.lowering);
        a.appendInteger(b.probes);
        if (b.bloom) a.appendBlob(b.bloom);
        else a.appendNull();
        for (const ms of b.stored ? [b.stored.from, b.stored.to] : [null, null]) {
          if (ms === null) a.appendNull();
          else a.appendTimestamp(tsValue(ms));
        }
        a.endRow();
      }
      a.flushSync();
    } catch (err) {
      try {
        a.clear();
      } catch {
        // the rows are dropped either way
      }
      throw err;
    }
  }

  private insertSorted(block: IndexedBlock): void {
    let i = this.blocks.length;
    // Appends come in time order: the new block almost always goes last.
    while (i > 0 && (this.blocks[i - 1] as IndexedBlock).minTs > block.minTs) i--;
    this.blocks.splice(i, 0, block);
  }
}

const pick = (b: BuiltBlock) => ({
  minTs: b.minTs,
  maxTs: b.maxTs,
  events: b.events,
  lowering: b.lowering,
  probes: b.probes,
  bloom: b.bloom,
  keys: b.keys,
  stored: b.stored ?? null,
});
