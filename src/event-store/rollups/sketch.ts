/**
 * The quantile sketch of a log metric's buckets (docs/api/log-metrics.md): DDSketch with a
 * relative accuracy of 1 % and at most 2,048 bins a sign (past them the lowest bins
 * collapse), from Datadog's own implementation. Mergeable, so buckets, label tuples and
 * stream sets read together merge their sketches; stored as bytes of our own format
 * (`encodeSketch`): the library's protobuf form needs a package it does not declare.
 */
import { LogCollapsingLowestDenseDDSketch } from '@datadog/sketches-js';

/** Relative accuracy (α) and bins a sign: 17 decades of values within 1 %. */
export const SKETCH_ACCURACY = 0.01;
export const SKETCH_BINS = 2048;

export type Sketch = LogCollapsingLowestDenseDDSketch;
type Store = Sketch['store'];

export const newSketch = (): Sketch =>
  new LogCollapsingLowestDenseDDSketch({ relativeAccuracy: SKETCH_ACCURACY, binLimit: SKETCH_BINS });

/**
 * `into` with `from`'s values added (`into` changes), bin by bin. The library's `merge`
 * (2.1.1) is not used: it leaves out the negative values' bins, and a store's merge drops
 * the bins above the others' when the highest key is 0 (the value 1: `secondKey || key`
 * takes 0 for absent). A property test holds a merge of any split equal to one sketch.
 */
export function mergeSketch(into: Sketch, from: Sketch): Sketch {
  if (from.count === 0) return into;
  addStore(into.store, from.store);
  addStore(into.negativeStore, from.negativeStore);
  into.zeroCount += from.zeroCount;
  into.count += from.count;
  return into;
}

function addStore(into: Store, from: Store): void {
  if (from.count === 0) return;
  for (let key = from.minKey; key <= from.maxKey; key++) {
    const n = from.bins[key - from.offset] ?? 0;
    if (n > 0) into.add(key, n);
  }
}

/** The value at quantile `q` (0..1) of what the sketch holds; null when it holds nothing. */
export function sketchQuantile(s: Sketch, q: number): number | null {
  return s.count === 0 ? null : s.getValueAtQuantile(q);
}

// ---------------------------------------------------------------------------------------
// Bytes: a version byte, the count of zeros, then the positive and the negative store,
// each as its lowest key and its bins' counts (unsigned LEB128; keys zigzagged).

const VERSION = 1;

class Writer {
  private bytes: number[] = [];
  uint(n: number): void {
    let v = n;
    while (v >= 0x80) {
      this.bytes.push((v % 0x80) | 0x80);
      v = Math.floor(v / 0x80);
    }
    this.bytes.push(v);
  }
  int(n: number): void {
    this.uint(n < 0 ? -2 * n - 1 : 2 * n);
  }
  take(): Uint8Array {
    return Uint8Array.from(this.bytes);
  }
}

class Reader {
  private at = 0;
  constructor(private readonly bytes: Uint8Array) {}
  uint(): number {
    let n = 0;
    let scale = 1;
    for (;;) {
      if (this.at >= this.bytes.length) throw new Error('sketch bytes end early');
      const b = this.bytes[this.at++] as number;
      n += (b & 0x7f) * scale;
      if (b < 0x80) return n;
      scale *= 0x80;
    }
  }
  int(): number {
    const u = this.uint();
    return u % 2 === 1 ? -(u + 1) / 2 : u / 2;
  }
  get done(): boolean {
    return this.at === this.bytes.length;
  }
}

function writeStore(w: Writer, store: Store): void {
  if (store.count === 0) {
    w.int(0);
    w.uint(0);
    return;
  }
  w.int(store.minKey);
  w.uint(store.maxKey - store.minKey + 1);
  for (let key = store.minKey; key <= store.maxKey; key++)
    w.uint(Math.round(store.bins[key - store.offset] ?? 0));
}

function readStore(r: Reader, store: Store): void {
  const lowest = r.int();
  const n = r.uint();
  for (let i = 0; i < n; i++) {
    const count = r.uint();
    if (count > 0) store.add(lowest + i, count);
  }
}

/** The sketch as bytes (about a byte a bin between its lowest and highest value). */
export function encodeSketch(s: Sketch): Uint8Array {
  const w = new Writer();
  w.uint(VERSION);
  w.uint(Math.round(s.zeroCount));
  writeStore(w, s.store);
  writeStore(w, s.negativeStore);
  return w.take();
}

/** A sketch from `encodeSketch`'s bytes; throws on bytes of no such sketch. */
export function decodeSketch(bytes: Uint8Array): Sketch {
  const r = new Reader(bytes);
  if (r.uint() !== VERSION) throw new Error('sketch bytes of an unknown version');
  const s = newSketch();
  const zeros = r.uint();
  readStore(r, s.store);
  readStore(r, s.negativeStore);
  if (!r.done) throw new Error('sketch bytes past their end');
  s.zeroCount = zeros;
  s.count = zeros + s.store.count + s.negativeStore.count;
  return s;
}
