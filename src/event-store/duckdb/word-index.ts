/**
 * The word index (docs/adr/0004-word-index.md). Per block of events, a bloom filter of
 * the byte trigrams of their messages as DuckDB's `lower()` lowers them; a search whose
 * filter requires a message substring asks which blocks may hold every trigram of it
 * and adds their time ranges to the WHERE clause. The `contains` test stays, so the
 * index only skips row groups by their `ts` zone maps and never changes an answer.
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
 * The pure parts (`buildWordBlocks`, `wordNeeds`, `candidateRanges`, ...) take plain data
 * only, so the building can run in a worker thread.
 */
import type { DuckDBAppender, DuckDBConnection } from '@duckdb/node-api';
import type { FilterNode } from '../../filter/ast.js';
import type { TimeWindow } from '../query-plan.js';
import { containsMode } from './duckdb-filter-compiler.js';
import { tsValue } from './duckdb-schema.js';

/** Events per block: a batch is cut into blocks of at least this many (unless smaller). */
export const BLOCK_EVENTS = 8192;
/** Bloom bits per distinct trigram and probes per trigram: about 1 % false positives. */
const BITS_PER_TRIGRAM = 10;
const PROBES = 7;
/**
 * Joining ranges: each range is a scan of its own, about 2 ms whatever its width, while
 * scanning ~10,000 more events costs about as much (measured at 1 M events). So
 * candidates with at most `JOIN_EVENTS` events of other blocks between them become one
 * range, and a query keeps at most `MAX_RANGES` (the closest joined).
 */
export const JOIN_EVENTS = BLOCK_EVENTS;
export const MAX_RANGES = 16;

/** `word_blocks.format`: 0 no bloom (always a candidate), 1 trigram bloom (this file's hashing). */
const FORMAT_NONE = 0;
const FORMAT_BLOOM = 1;

export const CREATE_WORD_BLOCKS = `
CREATE TABLE IF NOT EXISTS word_blocks (
  id BIGINT NOT NULL,
  min_ts TIMESTAMP NOT NULL,
  max_ts TIMESTAMP NOT NULL,
  events INTEGER NOT NULL,
  format INTEGER NOT NULL,
  lowering INTEGER NOT NULL,
  probes INTEGER NOT NULL,
  bloom BLOB
)`;

// ---------------------------------------------------------------------------------------
// Lowering

/**
 * DuckDB's `lower()` as a table: the code points it changes, ascending, and what it
 * makes of each. `id` fingerprints the table: a block built with another table (another
 * DuckDB version) is always a candidate. Plain data, so it can be posted to a worker.
 */
export interface Lowering {
  readonly id: number;
  readonly from: readonly number[];
  readonly to: readonly string[];
}

let lowering: Promise<Lowering> | undefined;

/** DuckDB's lowering, read once per process (DuckDB's tables are the library's, not a database's). */
export function readLowering(conn: DuckDBConnection): Promise<Lowering> {
  lowering ??= queryLowering(conn).catch((err: unknown) => {
    lowering = undefined;
    throw err;
  });
  return lowering;
}

async function queryLowering(conn: DuckDBConnection): Promise<Lowering> {
  const reader = await conn.runAndReadAll(
    `SELECT cp::INTEGER AS cp, encode(lower(chr(cp::INTEGER))) AS l FROM range(0, 1114112) t(cp)
     WHERE (cp < 55296 OR cp > 57343) AND lower(chr(cp::INTEGER)) <> chr(cp::INTEGER) ORDER BY cp`,
  );
  const utf8 = new TextDecoder('utf-8', { ignoreBOM: true });
  const from: number[] = [];
  const to: string[] = [];
  for (const [cp, l] of reader.getRows()) {
    from.push(Number(cp));
    to.push(utf8.decode((l as { bytes: Uint8Array }).bytes));
  }
  return loweringOf(from, to);
}

/** A lowering from its table (tests build small ones by hand). */
export function loweringOf(from: readonly number[], to: readonly string[]): Lowering {
  let h = 0x811c9dc5;
  const mixIn = (n: number) => {
    h = Math.imul(h ^ n, 0x01000193);
  };
  from.forEach((cp, i) => {
    mixIn(cp);
    for (const c of to[i] ?? '') mixIn(c.codePointAt(0) as number);
    mixIn(0x110000);
  });
  return { id: h | 0, from, to };
}

/** A lowering's lookup structures, built once per lowering (and thread). */
interface Lookup {
  /** ASCII byte → its lowered byte, or -1 when it does not lower to one ASCII byte. */
  readonly ascii: Int16Array;
  /** Code point → UTF-8 of its lowering, for the code points the table changes. */
  readonly bytes: Map<number, Uint8Array>;
  /** ASCII byte → its lowered byte, when every ASCII byte lowers to one ASCII byte (else null). */
  readonly asciiBytes: Uint8Array | null;
}

const lookups = new WeakMap<Lowering, Lookup>();
const encoder = new TextEncoder();

function lookupOf(l: Lowering): Lookup {
  let lk = lookups.get(l);
  if (!lk) {
    const bytes = new Map<number, Uint8Array>();
    l.from.forEach((cp, i) => {
      bytes.set(cp, encoder.encode(l.to[i] ?? ''));
    });
    const ascii = new Int16Array(128);
    for (let b = 0; b < 128; b++) {
      const m = bytes.get(b);
      ascii[b] = m === undefined ? b : m.length === 1 && (m[0] as number) < 128 ? (m[0] as number) : -1;
    }
    const asciiBytes = ascii.every((b) => b >= 0) ? Uint8Array.from(ascii) : null;
    lk = { ascii, bytes, asciiBytes };
    lookups.set(l, lk);
  }
  return lk;
}

/** Scratch output of `utf8`: grown as needed, reused (one thread, no await inside). */
let out = new Uint8Array(1 << 16);
/** Set by `utf8` when the text held U+0130. */
let sawDottedI = false;

function room(n: number, extra: number): void {
  if (n + extra <= out.length) return;
  const bigger = new Uint8Array(Math.max(out.length * 2, n + extra));
  bigger.set(out.subarray(0, n));
  out = bigger;
}

function putCodePoint(n: number, cp: number): number {
  if (cp < 0x80) out[n++] = cp;
  else if (cp < 0x800) {
    out[n++] = 0xc0 | (cp >> 6);
    out[n++] = 0x80 | (cp & 0x3f);
  } else if (cp < 0x10000) {
    out[n++] = 0xe0 | (cp >> 12);
    out[n++] = 0x80 | ((cp >> 6) & 0x3f);
    out[n++] = 0x80 | (cp & 0x3f);
  } else {
    out[n++] = 0xf0 | (cp >> 18);
    out[n++] = 0x80 | ((cp >> 12) & 0x3f);
    out[n++] = 0x80 | ((cp >> 6) & 0x3f);
    out[n++] = 0x80 | (cp & 0x3f);
  }
  return n;
}

/**
 * The UTF-8 of `text` (lone surrogates as U+FFFD, as every encoder here writes them)
 * into `out`, each code point lowered through `lk` when given; with `dotted`, U+0130 is
 * first replaced by "i\u0307" (what the filter compiler's `replace` does). Returns the
 * length.
 */
function utf8(text: string, lk: Lookup | null, dotted = false): number {
  let n = 0;
  sawDottedI = false;
  for (let i = 0; i < text.length; i++) {
    room(n, 16);
    let cp = text.charCodeAt(i);
    if (cp < 0x80) {
      const a = lk ? (lk.ascii[cp] as number) : cp;
      if (a >= 0) {
        out[n++] = a;
        continue;
      }
    } else if (cp >= 0xd800 && cp <= 0xdfff) {
      const next = text.charCodeAt(i + 1);
      if (cp <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
        cp = 0x10000 + ((cp - 0xd800) << 10) + (next - 0xdc00);
        i++;
      } else cp = 0xfffd;
    }
    if (!lk) {
      n = putCodePoint(n, cp);
      continue;
    }
    if (cp === 0x130) {
      sawDottedI = true;
      if (dotted) {
        for (const c of [0x69, 0x307]) {
          const m = lk.bytes.get(c);
          if (m === undefined) n = putCodePoint(n, c);
          else {
            room(n, m.length);
            out.set(m, n);
            n += m.length;
          }
        }
        continue;
      }
    }
    const m = lk.bytes.get(cp);
    if (m === undefined) n = putCodePoint(n, cp);
    else {
      room(n, m.length);
      out.set(m, n);
      n += m.length;
    }
  }
  return n;
}

// ---------------------------------------------------------------------------------------
// Trigrams

/**
 * One bit per possible trigram (2^24, 2 MiB): dedupes a set's trigrams, cleared by
 * `take`. Shared, so only one `TrigramSet` is filled at a time (nothing here awaits).
 */
let seen: Uint8Array | undefined;
/** A set began filling `seen` and has not taken its trigrams (it threw): clear it all. */
let seenDirty = false;

function seenBits(): Uint8Array {
  if (!seen) seen = new Uint8Array(1 << 21);
  else if (seenDirty) seen.fill(0);
  seenDirty = true;
  return seen;
}

/** Distinct trigrams, collected through `seen`. */
class TrigramSet {
  private list = new Uint32Array(4096);
  size = 0;
  private readonly bits = seenBits();

  add(t: number): void {
    const byte = t >>> 3;
    const bit = 1 << (t & 7);
    if ((this.bits[byte] as number) & bit) return;
    this.bits[byte] = (this.bits[byte] as number) | bit;
    this.push(t);
  }

  /** The bytes `out[0, n)`' trigrams. */
  addBytes(n: number): void {
    for (let i = 0; i + 2 < n; i++)
      this.add(((out[i] as number) << 16) | ((out[i + 1] as number) << 8) | (out[i + 2] as number));
  }

  /**
   * The trigrams of ASCII `text` lowered through `lower` (the fast path of nearly every
   * log line); false, having added some of them, at the first byte that is not ASCII.
   */
  addAscii(text: string, lower: Uint8Array): boolean {
    room(0, text.length * 3);
    const o = out;
    const n = encoder.encodeInto(text, o).written;
    const bits = this.bits;
    let t = 0;
    for (let i = 0; i < n; i++) {
      const b = o[i] as number;
      if (b >= 0x80) return false;
      t = ((t << 8) | (lower[b] as number)) & 0xffffff;
      if (i < 2) continue;
      const byte = t >>> 3;
      const bit = 1 << (t & 7);
      const had = bits[byte] as number;
      if ((had & bit) === 0) {
        bits[byte] = had | bit;
        this.push(t);
      }
    }
    return true;
  }

  private push(t: number): void {
    if (this.size === this.list.length) {
      const bigger = new Uint32Array(this.list.length * 2);
      bigger.set(this.list);
      this.list = bigger;
    }
    this.list[this.size++] = t;
  }

  /** The trigrams (sorted), clearing `seen` for the next set. */
  take(): Uint32Array {
    const result = this.list.slice(0, this.size);
    for (const t of result) this.bits[t >>> 3] = 0;
    seenDirty = false;
    this.size = 0;
    return result.sort();
  }
}

/** The trigrams of messages as DuckDB lowers them (a message with U+0130 both ways). */
function addMessage(set: TrigramSet, message: string, lk: Lookup): void {
  // The ASCII prefix's trigrams, added on the fast path, come out the same below.
  if (lk.asciiBytes && set.addAscii(message, lk.asciiBytes)) return;
  set.addBytes(utf8(message, lk));
  if (sawDottedI) set.addBytes(utf8(message, lk, true));
}

// ---------------------------------------------------------------------------------------
// Bloom filters

function mix(h: number): number {
  let x = h;
  x ^= x >>> 16;
  x = Math.imul(x, 0x85ebca6b);
  x ^= x >>> 13;
  x = Math.imul(x, 0xc2b2ae35);
  x ^= x >>> 16;
  return x >>> 0;
}

/** The two base hashes of a trigram; probe i is at `(h1 + i * h2) mod bits`. */
const hash1 = (t: number) => mix(t);
const hash2 = (t: number) => mix(t ^ 0x9e3779b9) | 1;

/** A bloom filter of `trigrams`, `BITS_PER_TRIGRAM` bits each (at least 64 bits). */
export function bloomOf(trigrams: Uint32Array, probes = PROBES): Uint8Array {
  const bytes = Math.max(8, Math.ceil((trigrams.length * BITS_PER_TRIGRAM) / 8));
  const bloom = new Uint8Array(bytes);
  const bits = bytes * 8;
  for (const t of trigrams) {
    const h1 = hash1(t);
    const h2 = hash2(t);
    for (let i = 0; i < probes; i++) {
      const b = ((h1 + Math.imul(i, h2)) >>> 0) % bits;
      bloom[b >>> 3] = (bloom[b >>> 3] as number) | (1 << (b & 7));
    }
  }
  return bloom;
}

/** A needle's trigrams, hashed once for testing many blooms. */
export interface Probe {
  readonly h1: Uint32Array;
  readonly h2: Uint32Array;
}

export function probeOf(trigrams: Uint32Array): Probe {
  return { h1: trigrams.map(hash1), h2: trigrams.map(hash2) };
}

/** Whether the bloom may hold every trigram of the probe. */
export function bloomHas(bloom: Uint8Array, probes: number, p: Probe): boolean {
  const bits = bloom.length * 8;
  for (let j = 0; j < p.h1.length; j++) {
    const h1 = p.h1[j] as number;
    const h2 = p.h2[j] as number;
    for (let i = 0; i < probes; i++) {
      const b = ((h1 + Math.imul(i, h2)) >>> 0) % bits;
      if (((bloom[b >>> 3] as number) & (1 << (b & 7))) === 0) return false;
    }
  }
  return true;
}

// ---------------------------------------------------------------------------------------
// Building blocks (pure: plain data in and out, for a worker thread too)

/** What the index needs of an event. */
export interface WordEvent {
  readonly ts: number;
  readonly message: string | null;
}

/** A block as built: its bloom, and its distinct trigrams (kept while it may be merged). */
export interface BuiltBlock {
  readonly minTs: number;
  readonly maxTs: number;
  readonly events: number;
  readonly lowering: number;
  readonly probes: number;
  readonly bloom: Uint8Array;
  readonly trigrams: Uint32Array;
}

function blockOf(events: readonly WordEvent[], from: number, to: number, l: Lowering): BuiltBlock {
  const lk = lookupOf(l);
  const set = new TrigramSet();
  let minTs = Number.POSITIVE_INFINITY;
  let maxTs = Number.NEGATIVE_INFINITY;
  for (let i = from; i < to; i++) {
    const e = events[i] as WordEvent;
    // Stored as whole milliseconds (the store rounds the same way).
    const t = Math.round(e.ts);
    if (t < minTs) minTs = t;
    if (t > maxTs) maxTs = t;
    if (e.message !== null) addMessage(set, e.message, lk);
  }
  const trigrams = set.take();
  return {
    minTs,
    maxTs,
    events: to - from,
    lowering: l.id,
    probes: PROBES,
    bloom: bloomOf(trigrams),
    trigrams,
  };
}

/**
 * The blocks of one append batch, in order: `floor(n / BLOCK_EVENTS)` blocks of about
 * equal size (one when the batch is smaller), so every block but a small batch's holds
 * at least `BLOCK_EVENTS` events. The events should be in time order (tight ranges).
 */
export function buildWordBlocks(events: readonly WordEvent[], l: Lowering): BuiltBlock[] {
  if (events.length === 0) return [];
  const count = Math.max(1, Math.floor(events.length / BLOCK_EVENTS));
  const blocks: BuiltBlock[] = [];
  for (let k = 0; k < count; k++) {
    const from = Math.floor((k * events.length) / count);
    const to = Math.floor(((k + 1) * events.length) / count);
    blocks.push(blockOf(events, from, to, l));
  }
  return blocks;
}

/** One block from several (their trigram sets joined): merging small blocks. */
export function mergeBlocks(parts: readonly BuiltBlock[]): BuiltBlock {
  const set = new TrigramSet();
  for (const p of parts) for (const t of p.trigrams) set.add(t);
  const trigrams = set.take();
  const first = parts[0] as BuiltBlock;
  return {
    minTs: Math.min(...parts.map((p) => p.minTs)),
    maxTs: Math.max(...parts.map((p) => p.maxTs)),
    events: parts.reduce((n, p) => n + p.events, 0),
    lowering: first.lowering,
    probes: PROBES,
    bloom: bloomOf(trigrams),
    trigrams,
  };
}

// ---------------------------------------------------------------------------------------
// Queries (pure)

/**
 * What a filter requires of `message` in substring terms: `word` (the message contains
 * the value, case-insensitively, as `containsText` tests it), every one of `all`, or at
 * least one of `any`; `undefined` requires nothing the index can use.
 */
export type WordNeed =
  | { readonly kind: 'word'; readonly value: string }
  | { readonly kind: 'all' | 'any'; readonly items: readonly WordNeed[] };

/**
 * The message substrings `filter` requires: bare words, phrases and `message:word`
 * (text nodes and `message contains`), under ANDs, and under ORs whose every branch
 * requires one. Negations and every other condition require nothing.
 */
export function wordNeeds(filter: FilterNode): WordNeed | undefined {
  switch (filter.kind) {
    case 'text':
      return { kind: 'word', value: filter.value };
    case 'cond':
      return filter.field === 'message' && filter.op === 'contains'
        ? { kind: 'word', value: filter.value }
        : undefined;
    case 'and': {
      const items = filter.items.map(wordNeeds).filter((n): n is WordNeed => n !== undefined);
      return items.length === 0 ? undefined : items.length === 1 ? items[0] : { kind: 'all', items };
    }
    case 'or': {
      const items = filter.items.map(wordNeeds);
      if (items.length === 0 || items.some((n) => n === undefined)) return undefined;
      return items.length === 1 ? items[0] : { kind: 'any', items: items as WordNeed[] };
    }
    default:
      return undefined;
  }
}

/** Per lowering: the code points that appear where `toLowerCase()` and DuckDB differ. */
const jsOnly = new WeakMap<Lowering, Set<number>>();

/**
 * The characters JavaScript's lowering writes where DuckDB's writes something else
 * (U+0130's "i\u0307", Unicode 16 capitals' small letters, ...) plus both small sigmas
 * (`toLowerCase` picks the final form by context). Outside them, a stretch of
 * `s.toLowerCase()` comes from code points both lower alike, so it is also in DuckDB's
 * lowering. Computed once, on the first needle that needs it (a scan of every code point).
 */
function jsOnlyOf(l: Lowering): Set<number> {
  let set = jsOnly.get(l);
  if (!set) {
    set = new Set([0x3c2, 0x3c3]);
    const duck = new Map<number, string>();
    l.from.forEach((cp, i) => {
      duck.set(cp, l.to[i] ?? '');
    });
    for (let cp = 0; cp < 0x110000; cp++) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue;
      const c = String.fromCodePoint(cp);
      const js = c.toLowerCase();
      if (js !== (duck.get(cp) ?? c)) for (const x of js) set.add(x.codePointAt(0) as number);
    }
    jsOnly.set(l, set);
  }
  return set;
}

/**
 * The trigrams every message that contains `value` (as `containsText` tests it) holds in
 * the index; empty when the needle is too short to require any.
 */
export function needleTrigrams(value: string, l: Lowering): Uint32Array {
  const needle = value.toLowerCase();
  const set = new TrigramSet();
  if (containsMode(needle) === 'lower') {
    // contains(lower(message), needle): the needle's bytes are in the lowered message
    // (or, holding i or U+0307, in the lowered message with U+0130 replaced).
    set.addBytes(utf8(needle, null));
  } else {
    // message.toLowerCase().includes(needle): only stretches both lowerings agree on.
    const skip = jsOnlyOf(l);
    let stretch = '';
    for (const c of needle) {
      if (skip.has(c.codePointAt(0) as number)) {
        set.addBytes(utf8(stretch, null));
        stretch = '';
      } else stretch += c;
    }
    set.addBytes(utf8(stretch, null));
  }
  return set.take();
}

/** What the index knows of a block. `bloom` null: no bloom, always a candidate. */
export interface IndexedBlock {
  readonly id: bigint;
  readonly minTs: number;
  readonly maxTs: number;
  readonly events: number;
  readonly lowering: number;
  readonly probes: number;
  readonly bloom: Uint8Array | null;
}

/** Whether a block may hold an event meeting the need; `undefined`: every block may. */
export type BlockTest = (b: IndexedBlock) => boolean;

export function blockTest(need: WordNeed, l: Lowering): BlockTest | undefined {
  switch (need.kind) {
    case 'word': {
      const trigrams = needleTrigrams(need.value, l);
      if (trigrams.length === 0) return undefined;
      const p = probeOf(trigrams);
      return (b) => b.bloom === null || b.lowering !== l.id || bloomHas(b.bloom, b.probes, p);
    }
    case 'all': {
      const tests = need.items.map((n) => blockTest(n, l)).filter((t): t is BlockTest => t !== undefined);
      if (tests.length === 0) return undefined;
      return (b) => tests.every((t) => t(b));
    }
    case 'any': {
      const tests = need.items.map((n) => blockTest(n, l));
      if (tests.some((t) => t === undefined)) return undefined;
      return (b) => tests.some((t) => (t as BlockTest)(b));
    }
    default:
      return need satisfies never;
  }
}

/** An inclusive range of `ts` (whole ms) that may hold matching events. */
export interface WordRange {
  readonly fromMs: number;
  readonly toMs: number;
}

/**
 * The time ranges of the candidate blocks among `blocks` (sorted by `minTs`) that meet
 * `range`: candidates with at most `joinEvents` events of other blocks between them
 * joined, overlaps merged, and at most `maxRanges` (the smallest gaps closed). Joining
 * only widens a range, so it never loses a match.
 */
export function candidateRanges(
  blocks: readonly IndexedBlock[],
  test: BlockTest,
  range: TimeWindow,
  { maxRanges = MAX_RANGES, joinEvents = JOIN_EVENTS } = {},
): WordRange[] {
  const runs: Array<{ fromMs: number; toMs: number }> = [];
  let run: { fromMs: number; toMs: number } | null = null;
  /** Events of the non-candidate blocks since the run's last candidate. */
  let skipped = 0;
  for (const b of blocks) {
    if (b.maxTs < range.fromMs || b.minTs >= range.toMs) continue;
    if (test(b)) {
      if (run && skipped <= joinEvents) run.toMs = Math.max(run.toMs, b.maxTs);
      else {
        if (run) runs.push(run);
        run = { fromMs: b.minTs, toMs: b.maxTs };
      }
      skipped = 0;
    } else if (run) skipped += b.events;
  }
  if (run) runs.push(run);
  runs.sort((a, b) => a.fromMs - b.fromMs);
  const merged: Array<{ fromMs: number; toMs: number }> = [];
  for (const r of runs) {
    const last = merged[merged.length - 1];
    if (last && r.fromMs <= last.toMs + 1) last.toMs = Math.max(last.toMs, r.toMs);
    else merged.push({ ...r });
  }
  if (merged.length <= maxRanges) return merged;
  // Keep the widest gaps as the cuts between ranges.
  const gaps = merged
    .slice(1)
    .map((r, i) => ({ i: i + 1, gap: r.fromMs - (merged[i] as WordRange).toMs }))
    .sort((a, b) => b.gap - a.gap || a.i - b.i)
    .slice(0, Math.max(0, maxRanges - 1))
    .map((g) => g.i)
    .sort((a, b) => a - b);
  const capped: WordRange[] = [];
  let start = 0;
  for (const cut of [...gaps, merged.length]) {
    capped.push({ fromMs: (merged[start] as WordRange).fromMs, toMs: (merged[cut - 1] as WordRange).toMs });
    start = cut;
  }
  return capped;
}

// ---------------------------------------------------------------------------------------
// The store's index: blocks in memory, rows in `word_blocks`

/** Rows written in the append's transaction, for `WordIndex.add` once it commits. */
export interface WrittenBlocks {
  readonly blocks: readonly IndexedBlock[];
  /** The open block these replace (it grew). */
  readonly replaces?: bigint;
  readonly tail: Tail | null;
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
 */
export class WordIndex {
  private blocks: IndexedBlock[] = [];
  private tail: Tail | null = null;
  private nextId = 1n;

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
    // Older versions of a block's row (see the class comment): the newest covers them.
    await conn.run(`DELETE FROM word_blocks w USING (
      SELECT id, max(events) AS events FROM word_blocks GROUP BY id HAVING count(*) > 1
    ) newest WHERE w.id = newest.id AND w.events < newest.events`);
    const index = new WordIndex(await readLowering(conn), await conn.createAppender('word_blocks'));
    const rows = (
      await conn.runAndReadAll(
        `SELECT DISTINCT ON (id) id, epoch_ms(min_ts) AS lo, epoch_ms(max_ts) AS hi, events, format, lowering, probes, bloom
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
        bloom: Number(r.format) === FORMAT_BLOOM && bloom ? bloom.bytes : null,
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
    const need = wordNeeds(filter);
    const test = need && blockTest(need, this.lowering);
    return test && candidateRanges(this.blocks, test, range);
  }

  /**
   * Writes the rows of a batch's blocks in the caller's transaction (the one that appends
   * the batch's events): new rows, or for a small batch a new version of the open block's
   * row. `add` applies them to memory once the transaction commits.
   */
  async write(conn: DuckDBConnection, built: readonly BuiltBlock[]): Promise<WrittenBlocks> {
    const [only] = built;
    const small = built.length === 1 && only !== undefined && only.events < BLOCK_EVENTS;
    if (small && this.tail) {
      const grown = mergeBlocks([this.tail.built, only]);
      const block: IndexedBlock = { ...pick(grown), id: this.tail.block.id };
      this.appendRows([block]);
      const open = grown.events < BLOCK_EVENTS;
      let versions = this.tail.versions + 1;
      if (!open || versions >= TAIL_VERSIONS) {
        await conn.run('DELETE FROM word_blocks WHERE id = $1 AND events < $2', [block.id, block.events]);
        versions = 1;
      }
      return { blocks: [block], replaces: block.id, tail: open ? { block, built: grown, versions } : null };
    }
    const blocks = built.map((b): IndexedBlock => ({ ...pick(b), id: this.nextId++ }));
    this.appendRows(blocks);
    const tail = small ? { block: blocks[0] as IndexedBlock, built: only, versions: 1 } : this.tail;
    return { blocks, tail };
  }

  /** Applies committed rows (`write`) to memory. */
  add({ blocks, replaces, tail }: WrittenBlocks): void {
    if (replaces !== undefined) {
      const i = this.blocks.findLastIndex((b) => b.id === replaces);
      if (i >= 0) this.blocks.splice(i, 1);
    }
    for (const b of blocks) this.insertSorted(b);
    this.tail = tail;
  }

  /** Retention: deletes the blocks whose events are all older than `tsMs` (after the events). */
  async deleteOlderThan(conn: DuckDBConnection, tsMs: number): Promise<void> {
    await conn.run('DELETE FROM word_blocks WHERE max_ts < $1', [tsValue(tsMs)]);
    const cut = Math.round(tsMs);
    this.blocks = this.blocks.filter((b) => b.maxTs >= cut);
    if (this.tail && this.tail.block.maxTs < cut) this.tail = null;
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
        a.appendInteger(b.bloom ? FORMAT_BLOOM : FORMAT_NONE);
        a.appendInteger(b.lowering);
        a.appendInteger(b.probes);
        if (b.bloom) a.appendBlob(b.bloom);
        else a.appendNull();
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
});
