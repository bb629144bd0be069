/**
 * Which label tuples of each log metric have a series of their own (docs/api/log-metrics.md,
 * "Cardinality"): a tuple gets one when it is first counted while its metric has fewer
 * than `maxSeries` and the server fewer than `totalLimit` over every metric; otherwise its
 * events fold into the `__other__` series and the metric's dropped tuples count it.
 *
 * A store loads the book from what it keeps, admits tuples while it counts a batch
 * (`admit`), writes `pending()` in the batch's transaction, then `commit`s, or `abort`s
 * when the transaction fails: the book never holds a tuple its store does not.
 */
import { DistinctSketch } from './distinct-sketch.js';
import { type MetricRule, type SeriesGate, tupleKey } from './metric-rollups.js';

/**
 * Dropped tuples are counted exactly up to this many a metric; past it, estimated within
 * 2 % (`overflow`, a distinct-count sketch of every folded tuple).
 */
export const DROPPED_EXACT = 100_000;

interface Book {
  /** The tuples with a series of their own, by `tupleKey`. */
  readonly own: Set<string>;
  /**
   * The tuples folded, by a 53-bit hash of their key: 50 metrics folding 100,000 tuples
   * each hold 5 million numbers, not 5 million strings (two tuples sharing a hash, about one
   * chance in 10^6 at 100,000, would count as one).
   */
  readonly dropped: Set<number>;
  /**
   * Past DROPPED_EXACT: every folded tuple's hash seen (those of `dropped` included), and
   * whether it changed since the store last wrote it.
   */
  overflow: DistinctSketch | null;
  overflowChanged: boolean;
}

/** A metric's sketch of folded tuples, as the store keeps it. */
export interface DroppedSketch {
  readonly metric: number;
  readonly generation: number;
  readonly bytes: Uint8Array;
}

/** A 53-bit hash of a string (cyrb53: two 32-bit multiplicative hashes mixed). */
function hash53(text: string): number {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}

export interface SeriesChange {
  readonly metric: number;
  readonly generation: number;
  readonly tuple: readonly string[];
  /** True: a series of its own; false: folded. */
  readonly own: boolean;
}

const keyOf = (metric: number, generation: number) => `${metric}:${generation}`;

const sameBytes = (a: Uint8Array, b: Uint8Array) => a.length === b.length && a.every((x, i) => x === b[i]);

export class SeriesBook implements SeriesGate {
  private readonly books = new Map<string, Book>();
  private total = 0;
  private pendingChanges: SeriesChange[] = [];

  constructor(private readonly totalLimit: number) {}

  private book(metric: number, generation: number): Book {
    const key = keyOf(metric, generation);
    let b = this.books.get(key);
    if (!b) {
      b = { own: new Set(), dropped: new Set(), overflow: null, overflowChanged: false };
      this.books.set(key, b);
    }
    return b;
  }

  /** A tuple the store already keeps, as it keeps it. */
  load(metric: number, generation: number, tuple: readonly string[], own: boolean): void {
    const b = this.book(metric, generation);
    const t = tupleKey(tuple);
    if (own) {
      if (!b.own.has(t)) this.total++;
      b.own.add(t);
    } else b.dropped.add(hash53(t));
  }

  admit(rule: MetricRule, tuple: readonly string[], key = tupleKey(tuple)): boolean {
    const b = this.book(rule.id, rule.generation);
    if (b.own.has(key)) return true;
    const h = hash53(key);
    if (b.dropped.has(h)) return false;
    const own = b.own.size < rule.maxSeries && this.total < this.totalLimit;
    if (own) {
      b.own.add(key);
      this.total++;
    } else if (b.dropped.size < DROPPED_EXACT) b.dropped.add(h);
    else {
      // Past the exact count: the sketch sees it (the store writes it now and then).
      if (!b.overflow) {
        b.overflow = DistinctSketch.empty();
        for (const seen of b.dropped) b.overflow.add(seen);
      }
      if (b.overflow.add(h)) b.overflowChanged = true;
      return false;
    }
    this.pendingChanges.push({ metric: rule.id, generation: rule.generation, tuple, own });
    return own;
  }

  /** The tuples admitted or folded since the last `commit` or `abort`. */
  pending(): readonly SeriesChange[] {
    return this.pendingChanges;
  }

  commit(): void {
    this.pendingChanges = [];
  }

  /** Forgets what was admitted since the last `commit` (its transaction failed). */
  abort(): void {
    for (const c of this.pendingChanges) {
      const b = this.book(c.metric, c.generation);
      const t = tupleKey(c.tuple);
      if (c.own) {
        b.own.delete(t);
        this.total--;
      } else b.dropped.delete(hash53(t));
    }
    this.pendingChanges = [];
  }

  /**
   * A tuple's series gives its place back (its last bucket passed retention; the store has
   * deleted what it kept of it): it may be admitted again, as a new tuple is.
   */
  release(metric: number, generation: number, tuple: readonly string[]): void {
    const b = this.books.get(keyOf(metric, generation));
    if (b?.own.delete(tupleKey(tuple))) this.total--;
  }

  /** A metric's series of its own, and the tuples folded (exact up to `DROPPED_EXACT`, then estimated). */
  counts(metric: number, generation: number): { series: number; dropped: number } {
    const b = this.books.get(keyOf(metric, generation));
    const dropped = b?.overflow
      ? Math.max(b.dropped.size, Math.round(b.overflow.estimate()))
      : (b?.dropped.size ?? 0);
    return { series: b?.own.size ?? 0, dropped };
  }

  /** A sketch the store kept (`changedSketches`'s), loaded at open. */
  loadSketch(metric: number, generation: number, bytes: Uint8Array): void {
    const sketch = DistinctSketch.from(bytes);
    if (sketch) this.book(metric, generation).overflow = sketch;
  }

  /** The sketches changed since they were last written (`sketchesWritten`). */
  changedSketches(): DroppedSketch[] {
    const out: DroppedSketch[] = [];
    for (const [key, b] of this.books) {
      if (!b.overflow || !b.overflowChanged) continue;
      const [metric, generation] = key.split(':').map(Number) as [number, number];
      out.push({ metric, generation, bytes: Uint8Array.from(b.overflow.bytes()) });
    }
    return out;
  }

  /** The store has written these (as they were when `changedSketches` gave them). */
  sketchesWritten(written: readonly DroppedSketch[]): void {
    for (const w of written) {
      const b = this.books.get(keyOf(w.metric, w.generation));
      // Changed again since: written next time.
      if (b?.overflow && sameBytes(b.overflow.bytes(), w.bytes)) b.overflowChanged = false;
    }
  }

  /** Forgets every metric and generation but those of `rules` (deleted metrics, resets). */
  retain(rules: readonly Pick<MetricRule, 'id' | 'generation'>[]): void {
    const keep = new Set(rules.map((r) => keyOf(r.id, r.generation)));
    for (const [key, b] of this.books) {
      if (keep.has(key)) continue;
      this.total -= b.own.size;
      this.books.delete(key);
    }
  }
}
