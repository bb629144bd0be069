/**
 * The word index's blocks: distinct byte trigrams, their bloom filters, blocks built from
 * events (pure). A block's bloom also holds the keys of word-keys.ts (its events' values,
 * its messages' windows): hashes at or above 2^24, apart from the trigrams.
 */
import {
  addValueKeys,
  addWindows,
  KEY_BASE,
  KEYS_PER_EVENT,
  KEYS_SOURCES,
  KEYS_VALUES,
  type KeyLevel,
  type WordEvent,
} from './word-keys.js';
import {
  encoder,
  type Lookup,
  type Lowering,
  lookupOf,
  out,
  room,
  sawDottedI,
  utf8,
} from './word-lowering.js';
import type { StoredSpan } from './word-queries.js';

/** Events per block: a batch is cut into blocks of at least this many (unless smaller). */
export const BLOCK_EVENTS = 8192;
/** Bloom bits per distinct trigram and probes per trigram: about 1 % false positives. */
export const BITS_PER_TRIGRAM = 10;
export const PROBES = 7;

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
export class TrigramSet {
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

/**
 * The trigrams of messages as DuckDB lowers them (a message with U+0130 both ways), and
 * with `windows`, the keys of their long runs of letters and digits (`addWindows`).
 */
function addMessage(set: TrigramSet, message: string, lk: Lookup, windows?: Set<number>): void {
  // The ASCII prefix's trigrams, added on the fast path, come out the same below.
  if (lk.asciiBytes && set.addAscii(message, lk.asciiBytes)) {
    if (windows) addWindows(out, message.length, windows, lk.asciiBytes);
    return;
  }
  const n = utf8(message, lk);
  set.addBytes(n);
  if (windows) addWindows(out, n, windows);
  if (sawDottedI) {
    const m = utf8(message, lk, true);
    set.addBytes(m);
    if (windows) addWindows(out, m, windows);
  }
}

/** Trigrams (sorted) and then keys (sorted), as one list for a bloom. */
function withKeys(trigrams: Uint32Array, keys: ReadonlySet<number>): Uint32Array {
  if (keys.size === 0) return trigrams;
  const all = new Uint32Array(trigrams.length + keys.size);
  all.set(trigrams);
  all.set(Uint32Array.from(keys).sort(), trigrams.length);
  return all;
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

/** A bloom filter of `trigrams`, `bitsPer` bits each (at least 64 bits). */
export function bloomOf(trigrams: Uint32Array, probes = PROBES, bitsPer = BITS_PER_TRIGRAM): Uint8Array {
  const bytes = Math.max(8, Math.ceil((trigrams.length * bitsPer) / 8));
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

/** A block as built: its bloom, and its distinct trigrams (kept while it may be merged). */
export interface BuiltBlock {
  readonly minTs: number;
  readonly maxTs: number;
  readonly events: number;
  readonly lowering: number;
  readonly probes: number;
  readonly bloom: Uint8Array;
  /** Trigrams, then the value keys (`valueKey`). */
  readonly trigrams: Uint32Array;
  /** Which values the bloom holds (`KEYS_VALUES` unless built from fewer fields). */
  readonly keys: KeyLevel;
  /** Its source keys (`KEYS_SOURCES`' alone), what it keeps when merging passes the bound. */
  readonly sourceKeys: Uint32Array;
  /** Late events kept apart (`lateParts`): a block of their bucket, never the open one. */
  readonly apart?: boolean;
  /** An apart block's bucket (`lateBucket`). */
  readonly bucket?: number;
  /** Its events' `stored_at` (word-queries.ts `StoredSpan`), given by the store that appends them. */
  readonly stored?: StoredSpan;
}

/** The block of `events[from, to)` (a file's summary is made of such blocks, cold-summary.ts). */
export function blockOf(
  events: readonly WordEvent[],
  from: number,
  to: number,
  l: Lowering,
  probes = PROBES,
  bitsPer = BITS_PER_TRIGRAM,
  level: KeyLevel = KEYS_VALUES,
): BuiltBlock {
  const lk = lookupOf(l);
  const set = new TrigramSet();
  const keys = new Set<number>();
  let minTs = Number.POSITIVE_INFINITY;
  let maxTs = Number.NEGATIVE_INFINITY;
  for (let i = from; i < to; i++) {
    const e = events[i] as WordEvent;
    // Stored as whole milliseconds (the store rounds the same way).
    const t = Math.round(e.ts);
    if (t < minTs) minTs = t;
    if (t > maxTs) maxTs = t;
    if (e.message !== null) addMessage(set, e.message, lk, level === KEYS_VALUES ? keys : undefined);
    addValueKeys(keys, e, level);
  }
  const sources = new Set<number>();
  for (let i = from; i < to; i++) addValueKeys(sources, events[i] as WordEvent, KEYS_SOURCES);
  return bounded(set.take(), keys, sources, level, to - from, (trigrams) => ({
    minTs,
    maxTs,
    events: to - from,
    lowering: l.id,
    probes,
    bloom: bloomOf(trigrams, probes, bitsPer),
  }));
}

/**
 * A block of `trigrams` and `keys` at `level`, unless its keys pass the bound
 * (`KEYS_PER_EVENT`): then its source keys alone, a candidate for any other value or
 * window, so its bloom stays within the bound whatever its events hold.
 */
function bounded<B>(
  tri: Uint32Array,
  keys: ReadonlySet<number>,
  sources: ReadonlySet<number>,
  level: KeyLevel,
  events: number,
  make: (trigrams: Uint32Array) => B,
): B & Pick<BuiltBlock, 'trigrams' | 'keys' | 'sourceKeys'> {
  const over = level === KEYS_VALUES && keys.size > KEYS_PER_EVENT * Math.max(events, 64);
  const trigrams = withKeys(tri, over ? sources : keys);
  return {
    ...make(trigrams),
    trigrams,
    keys: over ? KEYS_SOURCES : level,
    sourceKeys: Uint32Array.from(sources),
  };
}

/**
 * Events this far before the end of the last block closed are late: they go to blocks of
 * their own, so the open block's time range stays that of the events in order.
 */
export const LATE_MS = 60_000;
/**
 * Late events' blocks are time buckets this wide: a batch's late events go to the block of
 * their bucket, which later batches' late events of the same bucket grow (word-index.ts).
 */
export const LATE_SPAN_MS = 15 * 60_000;

/** The bucket of a late event's time. */
export const lateBucket = (ts: number) => Math.floor(Math.round(ts) / LATE_SPAN_MS);

/**
 * A small batch's events (in time order) split at `floorMs − LATE_MS`: the late ones by
 * their bucket (`lateBucket`, in time order) and the rest.
 */
export function lateParts<E extends WordEvent>(
  events: readonly E[],
  floorMs: number,
): { late: Array<{ bucket: number; events: E[] }>; inOrder: E[] } {
  const cut = floorMs - LATE_MS;
  let k = 0;
  while (k < events.length && (events[k] as E).ts < cut) k++;
  const late: Array<{ bucket: number; events: E[] }> = [];
  for (const e of events.slice(0, k)) {
    const bucket = lateBucket(e.ts);
    const last = late[late.length - 1];
    if (last?.bucket === bucket) last.events.push(e);
    else late.push({ bucket, events: [e] });
  }
  return { late, inOrder: events.slice(k) as E[] };
}

/**
 * Bloom bits per trigram and probes of a block of late events: about 6 % false positives
 * per trigram (a needle of three trigrams about 0.02 %) for 60 % of the bytes. Late
 * events' blocks are small, so their trigrams are seldom shared: at 10 bits their blooms
 * took 13 bytes an event at rest with 2 % of the events late.
 */
export const APART_BITS_PER_TRIGRAM = 6;
export const APART_PROBES = 4;

/** A block of late `events` of one bucket: never the open block. */
export function buildApartBlock(events: readonly WordEvent[], l: Lowering, bucket: number): BuiltBlock {
  return {
    ...blockOf(events, 0, events.length, l, APART_PROBES, APART_BITS_PER_TRIGRAM),
    apart: true,
    bucket,
  };
}

/**
 * The blocks of one append batch, in order: `floor(n / BLOCK_EVENTS)` blocks of about
 * equal size (one when the batch is smaller), so every block but a small batch's holds
 * at least `BLOCK_EVENTS` events. The events should be in time order (tight ranges).
 */
export function buildWordBlocks(events: readonly WordEvent[], l: Lowering): BuiltBlock[] {
  return blockSlices(events.length).map(([from, to]) => blockOf(events, from, to, l));
}

/**
 * Where a batch of `n` events (in time order) is cut into blocks: `[from, to)` slices of
 * at least `BLOCK_EVENTS` each (one slice when the batch is smaller).
 */
export function blockSlices(n: number): Array<[number, number]> {
  if (n === 0) return [];
  const count = Math.max(1, Math.floor(n / BLOCK_EVENTS));
  const slices: Array<[number, number]> = [];
  for (let k = 0; k < count; k++)
    slices.push([Math.floor((k * n) / count), Math.floor(((k + 1) * n) / count)]);
  return slices;
}

/**
 * One block from several (their trigram sets joined): merging small blocks. Blocks of late
 * events (`apart`, the first part's bucket) keep their bloom's parameters.
 */
export function mergeBlocks(parts: readonly BuiltBlock[]): BuiltBlock {
  const set = new TrigramSet();
  const keys = new Set<number>();
  const sources = new Set<number>();
  for (const p of parts) {
    for (const t of p.trigrams) {
      if (t >= KEY_BASE) keys.add(t);
      else set.add(t);
    }
    for (const k of p.sourceKeys) sources.add(k);
  }
  const first = parts[0] as BuiltBlock;
  const [probes, bitsPer] = first.apart ? [APART_PROBES, APART_BITS_PER_TRIGRAM] : [PROBES, BITS_PER_TRIGRAM];
  const level = Math.min(...parts.map((p) => p.keys)) as KeyLevel;
  const events = parts.reduce((n, p) => n + p.events, 0);
  // A part that kept its source keys alone leaves the block so: its other values are not in it.
  return bounded(set.take(), level === KEYS_VALUES ? keys : sources, sources, level, events, (trigrams) => ({
    minTs: Math.min(...parts.map((p) => p.minTs)),
    maxTs: Math.max(...parts.map((p) => p.maxTs)),
    events,
    lowering: first.lowering,
    probes,
    bloom: bloomOf(trigrams, probes, bitsPer),
    ...(first.apart ? { apart: true, ...(first.bucket === undefined ? {} : { bucket: first.bucket }) } : {}),
    ...spanOf(parts),
  }));
}

/** The `stored_at` span of blocks together: known when every part's is. */
function spanOf(parts: readonly BuiltBlock[]): { stored?: StoredSpan } {
  if (parts.some((p) => p.stored === undefined)) return {};
  const spans = parts.map((p) => p.stored as StoredSpan);
  return { stored: { from: Math.min(...spans.map((x) => x.from)), to: Math.max(...spans.map((x) => x.to)) } };
}

export type { WordEvent } from './word-keys.js';
