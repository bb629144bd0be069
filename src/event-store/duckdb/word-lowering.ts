/** The word index's lowering: DuckDB's own `lower()` table, and UTF-8 bytes of text lowered by it. */
import type { DuckDBConnection } from '@duckdb/node-api';

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
export interface Lookup {
  /** ASCII byte → its lowered byte, or -1 when it does not lower to one ASCII byte. */
  readonly ascii: Int16Array;
  /** Code point → UTF-8 of its lowering, for the code points the table changes. */
  readonly bytes: Map<number, Uint8Array>;
  /** ASCII byte → its lowered byte, when every ASCII byte lowers to one ASCII byte (else null). */
  readonly asciiBytes: Uint8Array | null;
}

const lookups = new WeakMap<Lowering, Lookup>();
export const encoder = new TextEncoder();

export function lookupOf(l: Lowering): Lookup {
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
export let out = new Uint8Array(1 << 16);
/** Set by `utf8` when the text held U+0130. */
export let sawDottedI = false;

export function room(n: number, extra: number): void {
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
export function utf8(text: string, lk: Lookup | null, dotted = false): number {
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
